//===- runtime/Threads.cpp - Thread lifecycle: sampled from start to end ---===//
//
// pthread_create's interposer (Runtime.cpp) starts every thread of the
// program in threadTrampoline, which samples the thread from its first
// instruction of user code and hands it the creator's delay count; a TLS
// key's destructor stops sampling when the thread ends (return,
// pthread_exit, cancellation) and pays what the thread owes before joiners
// wake.
//
//===----------------------------------------------------------------------===//

#include "Experiment.h"
#include "Lifecycle.h"
#include "Paths.h"
#include "Runtime.h"
#include "Sampler.h"
#include "Waits.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>

namespace causal::rt {

namespace {

pthread_key_t g_thread_key;
std::atomic<int64_t> g_program_threads{0}; // live sampled threads of the program

void endThread(void *value) {
  auto *state = static_cast<ThreadState *>(value);
  if (!state)
    return;
  // Stop sampling first (no sample may come in during what follows). Then
  // settle: samples in the selected line raised this thread's local count,
  // which only settling publishes to the global count (other threads must
  // still pause for them); publish, and pay what this thread owes before
  // joiners wake up when it ends.
  stopThreadSampling(state);
  if (tls_thread == state) {
    payOwedDelays(state);
    tls_thread = nullptr;
  }
  threadEnds(state);
  waitsThreadEnds(state); // its episodes, its Thread record; its joiners' waker
  pathsThreadEnds(state); // its path entries closed, its paths merged into the process's
  g_threads.release(state);
  // The last program thread ends (the main thread called pthread_exit
  // earlier): the profiler thread must not keep the process alive.
  if (g_program_threads.fetch_sub(1, std::memory_order_acq_rel) == 1)
    stopExperiments();
}

// Set while this thread creates one of the runtime's threads: the
// interposer that pthread_create reaches (through a sanitizer's interceptor
// or directly) must not make it a program thread.
__thread bool tls_creating_runtime_thread CAUSAL_RT_TLS = false;
std::atomic<PthreadCreateFn> g_default_pthread_create{nullptr};

} // namespace

bool prepareRuntimeThreads() {
  if (g_default_pthread_create.load(std::memory_order_acquire))
    return true;
  auto resolved = reinterpret_cast<PthreadCreateFn>(dlsym(RTLD_DEFAULT, "pthread_create"));
  if (!resolved)
    resolved = reinterpret_cast<PthreadCreateFn>(dlsym(RTLD_NEXT, "pthread_create"));
  g_default_pthread_create.store(resolved, std::memory_order_release);
  return resolved != nullptr;
}

int createRuntimeThread(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *),
                        void *arg) {
  if (!prepareRuntimeThreads())
    return EAGAIN;
  tls_creating_runtime_thread = true;
  int result = g_default_pthread_create.load(std::memory_order_acquire)(thread, attr, start, arg);
  tls_creating_runtime_thread = false;
  return result;
}

bool setupThreads() {
  prepareRuntimeThreads(); // now, before any fork
  return pthread_key_create(&g_thread_key, endThread) == 0;
}

void beginThread(bool is_main_thread, uint64_t inherited_delay_ns, uint64_t inherited_excess_ns) {
  ThreadState *state = g_threads.acquire();
  if (!state)
    return;
  state->local_delay_ns.store(inherited_delay_ns, std::memory_order_relaxed);
  state->excess_delay_ns = inherited_excess_ns; // pause overshoot also delayed the creation
  g_program_threads.fetch_add(1, std::memory_order_relaxed);
  pthread_setspecific(g_thread_key, state);
  startThreadSampling(state, is_main_thread);
}

void threadsForkChild(ThreadState *self) { g_program_threads.store(self ? 1 : 0); }

// The pthread_create hook (runtime/hooks/ThreadsAndLocks.cpp) creates the
// program's threads here, with |real| the C library's pthread_create.
int createProgramThread(PthreadCreateFn real, pthread_t *thread, const pthread_attr_t *attr,
                        void *(*start)(void *), void *arg) {
  if (!real)
    return EAGAIN;
  if (tls_creating_runtime_thread || g_status.load(std::memory_order_acquire) != kActive)
    return real(thread, attr, start, arg);
  auto *launch = static_cast<ThreadLaunch *>(malloc(sizeof(ThreadLaunch)));
  if (!launch)
    return real(thread, attr, start, arg);
  launch->start = start;
  launch->arg = arg;
  ThreadState *creator = tls_thread;
  launch->inherited_delay_ns =
      creator ? creator->local_delay_ns.load(std::memory_order_relaxed) : 0;
  launch->inherited_excess_ns = creator ? creator->excess_delay_ns : 0;
  launch->parent_tid = creator ? uint32_t(creator->tid) : 0;
  int result = real(thread, attr, threadTrampoline, launch);
  if (result != 0)
    free(launch);
  return result;
}

// Calls the user's thread function. In its own section so that attribution
// knows where the runtime hands over to user code: a walk that reaches this
// frame found no instrumented caller (outside), it is not profiler overhead.
__attribute__((noinline, section("causal_rt_entry"))) void *callThreadStart(void *(*start)(void *),
                                                                            void *arg) {
  void *result = start(arg);
  __asm__ __volatile__("" ::: "memory"); // no tail call: keep the return address here
  return result;
}

void *threadTrampoline(void *raw) {
  ThreadLaunch launch = *static_cast<ThreadLaunch *>(raw);
  free(raw);
  if (g_status.load(std::memory_order_acquire) == kActive) {
    beginThread(false, launch.inherited_delay_ns, launch.inherited_excess_ns);
    waitsThreadBegins(tls_thread, launch.parent_tid, reinterpret_cast<uintptr_t>(launch.start));
  }
  return callThreadStart(launch.start, launch.arg);
  // Returning ends the thread: endThread (the key's destructor) pays the
  // delays it owes before joiners wake.
}

} // namespace causal::rt
