//===- test/unit/runtime/own_waits_target.cpp - The runtime's waits are its own -===//
//
// Linked with libcausal_rt.so like experiment_target, with one difference: the
// program itself defines every function of causal/hooks.def that has a fixed
// signature and returns (exported, so it comes before the runtime in the
// symbol lookup order, as the runtime comes before libc). Each definition
// notes who called it, then calls the next one: the runtime's hook, which
// calls libc. So every call of a hooked function by name, from anywhere in
// the process, passes here first. A call made from the runtime's own code, or
// on a thread the program did not create (the profiler thread), is a hook the
// runtime entered for itself.
//
// argv[1] = MS: for MS ms the main thread loops work in a registered line
// ("own_work.cpp:10"), a mutex and a short nanosleep, and visits a progress
// point, while experiments run; a helper thread takes the same mutex and
// sleeps, and pauses for the delays the main thread's samples insert. At exit, after the runtime's
// exit handler stopped the experiments and wrote the profile, prints
//   program=N   calls from the program (the interposition works)
//   runtime=N   calls from the runtime's code or its threads, then their names
//
//===----------------------------------------------------------------------===//

#include "TestLineTable.h"

#include "causal/abi.h"
#include "causal/hook_declarations.h"

#include <atomic>
#include <dlfcn.h>
#include <link.h>
#include <memory>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

extern "C" void __causal_register_module(const void *start, const void *stop);
extern "C" void __causal_register_counters(causal_counter *start, causal_counter *stop);
extern "C" const char __start_causal_own_work[], __stop_causal_own_work[];

namespace {

// Where libcausal_rt.so's segments are loaded ([begin, end); 0: not known
// yet). Found once at start-up: dladdr in noteCall would take the loader's
// lock, and a sample signal that lands while a thread holds it (noteCall
// runs for libunwind's locks in the sample handler too) would deadlock.
uintptr_t g_runtime_begin = 0, g_runtime_end = 0;
std::atomic<uint64_t> g_program_calls{0}, g_runtime_calls{0};
constexpr int kNamesKept = 16;
std::atomic<const char *> g_runtime_callees[kNamesKept];

// Set on the threads the runtime starts (its profiler thread), from their
// start routine on. A thread the program starts is the program's from its
// first instruction, before its own start routine runs: the runtime samples
// it from there, and libunwind's locks (taken in the sample handler) are the
// program's calls there as anywhere in the program's threads.
thread_local bool t_runtime_thread = false;

bool calledFromRuntime(void *return_address) {
  uintptr_t at = reinterpret_cast<uintptr_t>(return_address);
  return at >= g_runtime_begin && at < g_runtime_end;
}

// The extent of the loaded segments of the object loaded at |base|.
struct SegmentSearch {
  uintptr_t base, begin, end;
};
int findSegments(dl_phdr_info *info, size_t, void *data) {
  auto *search = static_cast<SegmentSearch *>(data);
  if (info->dlpi_addr != search->base)
    return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr) &segment = info->dlpi_phdr[i];
    if (segment.p_type != PT_LOAD)
      continue;
    uintptr_t begin = info->dlpi_addr + segment.p_vaddr;
    uintptr_t end = begin + segment.p_memsz;
    if (!search->begin || begin < search->begin)
      search->begin = begin;
    if (end > search->end)
      search->end = end;
  }
  return 1;
}

void noteCall(const char *name, void *return_address) {
  // The runtime starts its profiler thread through the process's
  // pthread_create on purpose, so that a sanitizer's interceptor sees it
  // (docs/runtime.md): a thread start, not a wait.
  if (!strcmp(name, "pthread_create") && calledFromRuntime(return_address))
    return;
  if (t_runtime_thread || calledFromRuntime(return_address)) {
    uint64_t index = g_runtime_calls.fetch_add(1);
    if (index < kNamesKept)
      g_runtime_callees[index].store(name);
  } else {
    g_program_calls.fetch_add(1, std::memory_order_relaxed);
  }
}

struct RuntimeThreadStart {
  void *(*start)(void *);
  void *arg;
};

void *runtimeThreadMain(void *start) {
  RuntimeThreadStart copy = *static_cast<RuntimeThreadStart *>(start);
  delete static_cast<RuntimeThreadStart *>(start);
  t_runtime_thread = true;
  return copy.start(copy.arg);
}

// Passes a call on to the next definition; a thread the runtime starts is
// marked first.
template <typename F, typename... Args>
auto callNext(F *next, void * /*return_address*/, Args... args) {
  return next(args...);
}
int callNext(decltype(&::pthread_create) next, void *return_address, pthread_t *thread,
             const pthread_attr_t *attr, void *(*start)(void *), void *arg) {
  if (!calledFromRuntime(return_address))
    return next(thread, attr, start, arg);
  auto *marked = new RuntimeThreadStart{start, arg};
  int result = next(thread, attr, runtimeThreadMain, marked);
  if (result != 0)
    delete marked;
  return result;
}

// The definition after this program's (the runtime's).
template <typename F> void next(F *pointer, const char *name) {
  *pointer = reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

} // namespace

// Every function with a fixed signature that returns: noted, then passed on
// to the next definition, resolved at start-up (not in a signal handler).
#define OWN_Blocking OWN_DEFINITION
#define OWN_WakingThenBlocking OWN_DEFINITION
#define OWN_Waking OWN_DEFINITION
#define OWN_Trying OWN_DEFINITION
#define OWN_Io OWN_DEFINITION
#define OWN_Exec OWN_DEFINITION
#define OWN_Custom OWN_DEFINITION
#define OWN_CustomNoReturn(...)
#define OWN_Variadic(...)

#define OWN_DEFINITION(ret, name, params, args)                                                    \
  decltype(&::name) g_next_##name = nullptr;                                                       \
  extern "C" __attribute__((noinline)) ret name params {                                           \
    void *return_address = __builtin_return_address(0);                                            \
    noteCall(#name, return_address);                                                               \
    if (!g_next_##name)                                                                            \
      next(&g_next_##name, #name);                                                                 \
    return callNext(g_next_##name, return_address, OWN_UNPACK args);                               \
  }
#define OWN_UNPACK(...) __VA_ARGS__
#define CAUSAL_HOOK(kind, outcome, ret, name, params, args, version)                               \
  OWN_##kind(ret, name, params, args)
#define CAUSAL_INTERPOSER CAUSAL_HOOK
#include "causal/hooks.def"
#undef OWN_DEFINITION

void resolveNextDefinitions() {
#define OWN_DEFINITION(ret, name, params, args) next(&g_next_##name, #name);
#define CAUSAL_HOOK(kind, outcome, ret, name, params, args, version)                               \
  OWN_##kind(ret, name, params, args)
#define CAUSAL_INTERPOSER CAUSAL_HOOK
#include "causal/hooks.def"
#undef OWN_DEFINITION
}

__attribute__((noinline, section("causal_own_work"))) uint64_t workUnit(uint64_t cpu_ns) {
  struct timespec now;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  uint64_t start = uint64_t(now.tv_sec) * 1000000000ull + uint64_t(now.tv_nsec), current = start;
  volatile uint64_t sink = 0;
  while (current - start < cpu_ns) {
    for (int i = 0; i < 2000; ++i)
      sink = sink + uint64_t(i);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    current = uint64_t(now.tv_sec) * 1000000000ull + uint64_t(now.tv_nsec);
  }
  return sink;
}

namespace {

// Never destroyed: the runtime writes the profile from its exit destructor,
// which runs after static destructors and still reads the registered tables.
std::unique_ptr<causal::test::InMemoryLineTable> &g_table =
    *new std::unique_ptr<causal::test::InMemoryLineTable>;
causal_counter g_work[] = {{0, "work", CAUSAL_COUNTER_THROUGHPUT, 0}};

uint64_t nowNs() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

// Runs after the runtime's exit handler (atexit handlers run before the
// images' destructors): the profiler thread has stopped, the profile is written.
__attribute__((destructor)) void printCalls() {
  uint64_t runtime = g_runtime_calls.load();
  printf("program=%llu runtime=%llu\n", (unsigned long long)g_program_calls.load(),
         (unsigned long long)runtime);
  for (uint64_t i = 0; i < runtime && i < kNamesKept; ++i)
    printf("runtime called: %s\n", g_runtime_callees[i].load());
}

} // namespace

pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;
std::atomic<bool> g_stop{false};

void *helper(void *) {
  while (!g_stop.load(std::memory_order_relaxed)) {
    pthread_mutex_lock(&g_mutex);
    pthread_mutex_unlock(&g_mutex);
    struct timespec pause = {0, 200000};
    nanosleep(&pause, nullptr);
  }
  return nullptr;
}

int main(int argc, char **argv) {
  setvbuf(stdout, nullptr, _IONBF, 0);
  if (argc < 2)
    return 2;
  resolveNextDefinitions();
  Dl_info runtime;
  SegmentSearch search = {0, 0, 0};
  if (dladdr(dlsym(RTLD_DEFAULT, "__causal_register_module"), &runtime)) {
    // dli_fbase is the lowest mapped address, dlpi_addr the load bias: the
    // same for a shared library linked at 0, as ours is.
    search.base = reinterpret_cast<uintptr_t>(runtime.dli_fbase);
    dl_iterate_phdr(findSegments, &search);
  }
  if (!search.end) {
    printf("the runtime's image was not found\n");
    return 1;
  }
  g_runtime_begin = search.begin;
  g_runtime_end = search.end;
  g_table =
      std::make_unique<causal::test::InMemoryLineTable>(causal::test::InMemoryLineTable::singleLine(
          __start_causal_own_work, uint32_t(__stop_causal_own_work - __start_causal_own_work),
          "own_work.cpp", 10));
  __causal_register_module(g_table->start(), g_table->stop());
  __causal_register_counters(g_work, g_work + 1); // starts the profiler thread

  pthread_t helper_thread;
  if (pthread_create(&helper_thread, nullptr, helper, nullptr) != 0)
    return 1;
  uint64_t end = nowNs() + strtoull(argv[1], nullptr, 10) * 1000000ull;
  while (nowNs() < end) {
    workUnit(200000);
    pthread_mutex_lock(&g_mutex);
    __atomic_add_fetch(&g_work[0].count, 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&g_mutex);
    struct timespec pause = {0, 100000};
    nanosleep(&pause, nullptr);
  }
  g_stop.store(true);
  pthread_join(helper_thread, nullptr);
  return 0;
}
