//===- runtime/Runtime.cpp - Start-up, exported API, threads, fork, exit ---===//
//
// libcausal_rt's life cycle:
//   * constructor: read the tunables (CAUSAL_DISABLE=1: do nothing at all),
//     register the exit writer, install the sample handler, start sampling
//     the main thread;
//   * __causal_register_module / __causal_unregister_module: called by each
//     instrumented image's constructor/destructor (possibly before the
//     runtime's own constructor);
//   * pthread_create is interposed so that every new thread samples itself
//     from its first instruction of user code; a TLS key destructor stops
//     sampling when the thread ends (return, pthread_exit, cancellation);
//   * fork: the child re-arms sampling for its one thread and writes its own
//     records;
//   * exit: the profile block is appended once (atexit, destructor backup).
//
//===----------------------------------------------------------------------===//

#include "Runtime.h"
#include "Attribution.h"
#include "Experiment.h"
#include "ProfileWriter.h"
#include "Sampler.h"

#include "causal/abi.h"
#include "causal/tunables.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

// Bounds of the section holding callThreadStart (defined by the linker).
extern "C" const char __start_causal_rt_entry[] CAUSAL_RT_HIDDEN;
extern "C" const char __stop_causal_rt_entry[] CAUSAL_RT_HIDDEN;
// Bounds of the hooks' code (runtime/hooks/).
extern "C" const char __start_causal_rt_forward[] CAUSAL_RT_HIDDEN;
extern "C" const char __stop_causal_rt_forward[] CAUSAL_RT_HIDDEN;

namespace causal::rt {

std::atomic<uint32_t> g_status{kUninitialized};
RuntimeConfig g_config;
RuntimeCounters g_counters;
ModuleRegistry g_modules;
ThreadRegistry g_threads;
SampleLog g_sample_log;

namespace {

constexpr uint32_t kInitializing = 3;

uint64_t g_startup_realtime_ns = 0;
uint64_t g_startup_monotonic_ns = 0;
std::atomic<bool> g_profile_written{false};
pthread_key_t g_thread_key;
pid_t g_pid = 0;                           // to recognize a vfork child (no atfork handlers)
std::atomic<int64_t> g_program_threads{0}; // live sampled threads of the program

// ---- Configuration ----------------------------------------------------------

void absolutePath(const char *path, char *out, size_t size) {
  if (path[0] == '/') {
    formatTo(out, size, "%s", path);
    return;
  }
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof(cwd)))
    formatTo(out, size, "%s/%s", cwd, path);
  else
    formatTo(out, size, "%s", path);
}

void readConfig() {
  RuntimeConfig &c = g_config;
  c.verbose = envFlag(CAUSAL_ENV_VERBOSE);

  const char *sampler = envString(CAUSAL_ENV_SAMPLER);
  c.requested = SamplerKind::None;
  if (sampler && !strcmp(sampler, "perf"))
    c.requested = SamplerKind::Perf;
  else if (sampler && !strcmp(sampler, "timer"))
    c.requested = SamplerKind::Timer;
  else if (sampler && strcmp(sampler, "auto") != 0)
    message("%s=%s is not one of auto, perf, timer; using auto", CAUSAL_ENV_SAMPLER, sampler);

  bool malformed = false;
  c.period_ns = envUnsigned(CAUSAL_ENV_SAMPLE_PERIOD, CAUSAL_DEFAULT_SAMPLE_PERIOD_NS, &malformed);
  if (malformed)
    message("%s is not a number of nanoseconds; using %llu", CAUSAL_ENV_SAMPLE_PERIOD,
            (unsigned long long)c.period_ns);
  if (c.period_ns < CAUSAL_MIN_SAMPLE_PERIOD_NS) {
    message("%s=%llu is below the minimum; using %llu", CAUSAL_ENV_SAMPLE_PERIOD,
            (unsigned long long)c.period_ns, (unsigned long long)CAUSAL_MIN_SAMPLE_PERIOD_NS);
    c.period_ns = CAUSAL_MIN_SAMPLE_PERIOD_NS;
  }

  malformed = false;
  uint64_t batch = envUnsigned(CAUSAL_ENV_SAMPLE_BATCH, CAUSAL_DEFAULT_SAMPLE_BATCH, &malformed);
  if (malformed || batch == 0 || batch > 1000) {
    message("%s must be a number from 1 to 1000; using %u", CAUSAL_ENV_SAMPLE_BATCH,
            CAUSAL_DEFAULT_SAMPLE_BATCH);
    batch = CAUSAL_DEFAULT_SAMPLE_BATCH;
  }
  c.batch = uint32_t(batch);

  malformed = false;
  uint64_t stack = envUnsigned(CAUSAL_ENV_STACK_COPY, CAUSAL_DEFAULT_STACK_COPY_BYTES, &malformed);
  if (malformed || stack % 8 || stack > 32768) {
    message("%s must be a multiple of 8 up to 32768; using %u", CAUSAL_ENV_STACK_COPY,
            CAUSAL_DEFAULT_STACK_COPY_BYTES);
    stack = CAUSAL_DEFAULT_STACK_COPY_BYTES;
  }
  c.stack_copy_bytes = uint32_t(stack);

  const char *output = envString(CAUSAL_ENV_OUTPUT);
  absolutePath(output ? output : CAUSAL_DEFAULT_OUTPUT, c.output_path, sizeof(c.output_path));
  if (const char *log = envString(CAUSAL_ENV_SAMPLE_LOG))
    absolutePath(log, c.sample_log_path, sizeof(c.sample_log_path));
  readExperimentConfig();
}

// ---- Threads ----------------------------------------------------------------

// Makes the calling thread a sampled thread. |inherited_delay_ns|: the
// creator's delay count (a thread inherits the delays its creator took).
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

void endThread(void *value) {
  auto *state = static_cast<ThreadState *>(value);
  if (!state)
    return;
  // Drain the last samples first: those in the selected line raise this
  // thread's local count, which only settling publishes to the global count
  // (other threads must still pause for them). Then settle: publish, and pay
  // what this thread owes before joiners wake up when it ends.
  stopThreadSampling(state);
  if (tls_thread == state) {
    payOwedDelays(state);
    tls_thread = nullptr;
  }
  threadEnds(state);
  g_threads.release(state);
  // The last program thread ends (the main thread called pthread_exit
  // earlier): the profiler thread must not keep the process alive.
  if (g_program_threads.fetch_sub(1, std::memory_order_acq_rel) == 1)
    stopExperiments();
}

struct ThreadLaunch {
  void *(*start)(void *);
  void *arg;
  uint64_t inherited_delay_ns;
  uint64_t inherited_excess_ns;
};

} // namespace

// Calls the user's thread function. In its own section so that attribution
// knows where the runtime hands over to user code: a walk that reaches this
// frame found no instrumented caller (outside), it is not profiler overhead.
__attribute__((noinline, section("causal_rt_entry"))) void *callThreadStart(void *(*start)(void *),
                                                                            void *arg) {
  void *result = start(arg);
  __asm__ __volatile__("" ::: "memory"); // no tail call: keep the return address here
  return result;
}

namespace {

void *threadTrampoline(void *raw) {
  ThreadLaunch launch = *static_cast<ThreadLaunch *>(raw);
  free(raw);
  if (g_status.load(std::memory_order_acquire) == kActive)
    beginThread(false, launch.inherited_delay_ns, launch.inherited_excess_ns);
  return callThreadStart(launch.start, launch.arg);
  // Returning ends the thread: endThread (the key's destructor) pays the
  // delays it owes before joiners wake.
}

// ---- Fork -------------------------------------------------------------------

void forkPrepare() {
  if (g_status.load(std::memory_order_acquire) == kActive)
    beginFork();
}

void forkParent() { endFork(); }

void forkChild() {
  endFork();
  if (g_status.load(std::memory_order_acquire) != kActive)
    return;
  ThreadState *self = tls_thread;
  // Every thread's perf descriptor was inherited; only this thread exists.
  for (uint32_t i = 0, used = g_threads.slotsUsed(); i < used; ++i)
    if (ThreadState *state = g_threads.slot(i))
      if (state->in_use.load(std::memory_order_acquire))
        forgetInheritedSampler(state);
  g_threads.releaseAllBut(self);
  // The child's profile describes the child only.
  g_modules.resetCounts();
  g_sample_log.reset();
  g_counters.attributed.store(0);
  g_counters.outside.store(0);
  g_counters.overhead.store(0);
  g_counters.lost.store(0);
  g_counters.signals.store(0);
  g_counters.handler_ns.store(0);
  g_startup_realtime_ns = realtimeNs();
  g_startup_monotonic_ns = monotonicNs();
  g_profile_written.store(false);
  g_pid = getpid();
  g_program_threads.store(self ? 1 : 0);
  if (self)
    self->local_delay_ns.store(g_experiment.global_delay_ns.load());
  experimentsForkChild();
  if (self)
    startThreadSampling(self, false);
}

// ---- Exit -------------------------------------------------------------------

void writeProfileOnce() {
  if (g_status.load(std::memory_order_acquire) != kActive)
    return;
  if (g_profile_written.exchange(true))
    return;
  // End the running experiment (it is recorded) and the profiler thread.
  stopExperiments();
  // Process what the exiting thread has buffered and stop sampling it: the
  // writing below is the profiler's time, not the program's.
  if (ThreadState *self = tls_thread)
    stopThreadSampling(self);
  uint64_t runtime_ns = monotonicNs() - g_startup_monotonic_ns;

  TextBuffer experiments;
  takePendingRecords(&experiments);
  TextBuffer block;
  renderProfile(g_modules, g_startup_realtime_ns, runtime_ns, &block, experiments.data(),
                experiments.size(), g_config.period_ns);
  if (block.failed())
    message("out of memory while rendering the profile; nothing written");
  else if (int error = appendToFile(g_config.output_path, block.data(), block.size()))
    message("cannot write the profile to %s: %s", g_config.output_path, strerror(error));

  if (g_sample_log.enabled()) {
    size_t size = 0;
    char *text = g_sample_log.render(g_modules, &size);
    if (text) {
      if (int error = appendToFile(g_config.sample_log_path, text, size))
        message("cannot write the sample log to %s: %s", g_config.sample_log_path, strerror(error));
      free(text);
    }
    if (uint64_t overflow = g_sample_log.overflowed())
      message("the sample log table (%u addresses) overflowed: %llu samples are missing from %s",
              g_sample_log.capacity(), (unsigned long long)overflow, g_config.sample_log_path);
  }

  if (g_config.verbose) {
    uint64_t signals = g_counters.signals.load();
    uint64_t handler_ns = g_counters.handler_ns.load();
    message("samples: %llu charged to lines, %llu outside instrumented code, %llu profiler "
            "overhead (dropped), %llu lost; %llu sample signals handled, %.2f us of CPU each "
            "on average; "
            "profile appended to %s",
            (unsigned long long)g_counters.attributed.load(),
            (unsigned long long)g_counters.outside.load(),
            (unsigned long long)g_counters.overhead.load(),
            (unsigned long long)g_counters.lost.load(), (unsigned long long)signals,
            signals ? double(handler_ns) / double(signals) / 1000.0 : 0.0, g_config.output_path);
    message("experiments: %llu ns of delay inserted (global count), %llu ns paused by all "
            "threads (%llu ns of it runnable, competing for a CPU), %llu ns spent in "
            "end-of-experiment drains; %u progress points",
            (unsigned long long)g_experiment.global_delay_ns.load(),
            (unsigned long long)g_paused_ns.load(), (unsigned long long)g_spun_ns.load(),
            (unsigned long long)g_drain_ns.load(), g_progress.size());
  }
}

void atExitHandler() { writeProfileOnce(); }

// ---- Fatal signals ------------------------------------------------------------

constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
// Signals whose default action ends the process without a fault: a server
// stopped with SIGTERM, a run interrupted with Ctrl-C, a closed pipe, a timer.
constexpr int kTerminatingSignals[] = {SIGTERM, SIGINT,  SIGHUP,  SIGQUIT, SIGPIPE,  SIGALRM,
                                       SIGUSR1, SIGUSR2, SIGXCPU, SIGXFSZ, SIGVTALRM};

bool isFaultSignal(int signal) {
  return signal == SIGSEGV || signal == SIGBUS || signal == SIGFPE || signal == SIGILL;
}
std::atomic<bool> g_fatal_once{false};

void onFatalSignal(int signal, siginfo_t *info, void *) {
  // SA_RESETHAND restored the program's disposition (the default: we only
  // install where the program has none) before we got here.
  int saved_errno = errno;
  if (!g_fatal_once.exchange(true) && g_status.load(std::memory_order_acquire) == kActive &&
      !g_profile_written.exchange(true)) {
    size_t size = 0;
    const char *experiments = peekPendingRecords(&size);
    appendProfileSignalSafe(g_config.output_path, g_modules, g_startup_realtime_ns,
                            monotonicNs() - g_startup_monotonic_ns, experiments, size,
                            g_config.period_ns);
  }
  errno = saved_errno;
  // A fault re-executes the instruction and dies by the default action; a
  // sent signal (kill, raise, abort), and any signal that is not a fault
  // (a timer's SIGALRM comes with si_code SI_KERNEL), is sent again.
  if (!isFaultSignal(signal) || !info || info->si_code <= 0)
    raise(signal);
}

// Where the program left the default disposition (a handler of its own, or
// a parent's SIG_IGN, is left alone), a one-shot handler that writes the
// profile and lets the signal end the process as it would have.
void installFatalSignalHandler(int signal) {
  struct sigaction current;
  if (sigaction(signal, nullptr, &current) != 0 || current.sa_handler != SIG_DFL ||
      (current.sa_flags & SA_SIGINFO))
    return;
  struct sigaction action;
  memset(&action, 0, sizeof(action));
  action.sa_sigaction = onFatalSignal;
  action.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  sigaddset(&action.sa_mask, CAUSAL_SAMPLE_SIGNAL);
  sigaction(signal, &action, nullptr);
}

void installFatalSignalHandlers() {
  for (int signal : kFatalSignals)
    installFatalSignalHandler(signal);
  for (int signal : kTerminatingSignals)
    if (signal != CAUSAL_SAMPLE_SIGNAL)
      installFatalSignalHandler(signal);
}

__attribute__((destructor)) void runtimeDestructor() { writeProfileOnce(); }

// ---- Start-up ---------------------------------------------------------------

bool disabledByEnvironment() { return envFlag(CAUSAL_ENV_DISABLE); }

void initialize() {
  uint32_t expected = kUninitialized;
  if (!g_status.compare_exchange_strong(expected, kInitializing))
    return;
  if (disabledByEnvironment()) {
    g_status.store(kInert, std::memory_order_release);
    return;
  }
  g_startup_realtime_ns = realtimeNs();
  g_startup_monotonic_ns = monotonicNs();
  readConfig();
  atexit(atExitHandler);

  AttributionSetup setup;
  setup.registry = &g_modules;
  setup.max_frames = CAUSAL_MAX_CALLCHAIN;
#ifndef CAUSAL_RT_STATIC
  // The whole executable segment of libcausal_rt.so is profiler code.
  setup.runtime_code = executableRangeOf(reinterpret_cast<const void *>(&initialize));
#endif
  setup.thread_entry.begin = reinterpret_cast<uintptr_t>(__start_causal_rt_entry);
  setup.thread_entry.end = reinterpret_cast<uintptr_t>(__stop_causal_rt_entry);
  setup.forwarding_code.begin = reinterpret_cast<uintptr_t>(__start_causal_rt_forward);
  setup.forwarding_code.end = reinterpret_cast<uintptr_t>(__stop_causal_rt_forward);
  const char *unwind_problem = nullptr;
  if (!initUnwinding(setup, &unwind_problem))
    message("cannot use libunwind (%s): samples in uninstrumented code are charged using the "
            "kernel's frame-pointer callchain only, which skips the caller of a frameless "
            "function",
            unwind_problem ? unwind_problem : "unknown error");

  if (g_config.sample_log_path[0] && !g_sample_log.init(CAUSAL_SAMPLE_LOG_SLOTS))
    message("cannot allocate the sample log table; %s will not be written",
            g_config.sample_log_path);

  if (pthread_key_create(&g_thread_key, endThread) != 0) {
    message("cannot create a thread-specific key; profiling is off");
    g_status.store(kInert, std::memory_order_release);
    return;
  }
  pthread_atfork(forkPrepare, forkParent, forkChild);
  if (int error = installSampleHandler()) {
    message("cannot install the sample signal handler: %s; profiling is off", strerror(error));
    g_status.store(kInert, std::memory_order_release);
    return;
  }
  g_pid = getpid();
  installFatalSignalHandlers();
  g_status.store(kActive, std::memory_order_release);
  beginThread(true, 0, 0);
  startExperiments();
  if (g_config.verbose)
    message("sampler: %s, period %llu ns, batch %u, stack copy %u bytes; profile: %s",
            processSamplerName(), (unsigned long long)g_config.period_ns, g_config.batch,
            g_config.stack_copy_bytes, g_config.output_path);
}

__attribute__((constructor(101))) void runtimeConstructor() { initialize(); }

// ---- Module registration messages -------------------------------------------

// Images already complained about (by load base), so each is named once.
constexpr unsigned kComplaintSlots = 64;
uintptr_t g_complained[kComplaintSlots];
std::atomic<unsigned> g_complaints{0};

void complainOnce(const void *where, const char *problem) {
  Dl_info info;
  uintptr_t base = 0;
  if (where && dladdr(where, &info))
    base = reinterpret_cast<uintptr_t>(info.dli_fbase);
  unsigned seen = g_complaints.load();
  for (unsigned i = 0; i < seen && i < kComplaintSlots; ++i)
    if (g_complained[i] == base)
      return;
  unsigned index = g_complaints.fetch_add(1);
  if (index < kComplaintSlots)
    g_complained[index] = base;
  char path[PATH_MAX];
  imagePathOf(where, path, sizeof(path));
  message("%s: %s; its code is not profiled", path[0] ? path : "<unknown image>", problem);
}

// [lowest, highest) address of the loaded segments of the image holding
// |address|; empty if none.
AddressRange imageRangeOf(const void *address) {
  struct Search {
    uintptr_t address;
    AddressRange range;
  } search{reinterpret_cast<uintptr_t>(address), {}};
  dl_iterate_phdr(
      [](struct dl_phdr_info *info, size_t, void *data) -> int {
        auto *s = static_cast<Search *>(data);
        uintptr_t low = UINTPTR_MAX, high = 0;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr) &ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_LOAD)
            continue;
          uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
          low = begin < low ? begin : low;
          high = begin + ph.p_memsz > high ? begin + ph.p_memsz : high;
        }
        if (s->address >= low && s->address < high) {
          s->range.begin = low;
          s->range.end = high;
          return 1;
        }
        return 0;
      },
      &search);
  return search.range;
}

} // namespace

// Called by the exec hooks and by _exit, _Exit and quick_exit (runtime/hooks/).
void flushProfileBeforeExec() {
  // A vfork child shares our memory and runs no atfork handler: writing
  // here would mark the parent's profile as written. Leave it to the parent.
  if (g_pid && getpid() != g_pid)
    return;
  writeProfileOnce();
}

} // namespace causal::rt

using namespace causal::rt;

extern "C" CAUSAL_RT_EXPORT void __causal_register_module(const void *start, const void *stop) {
  uint32_t status = g_status.load(std::memory_order_acquire);
  if (status == kInert || (status == kUninitialized && disabledByEnvironment()))
    return;
  const void *caller = __builtin_return_address(0);
  using Result = ModuleRegistry::RegisterResult;
  Result result = g_modules.registerModule(start, stop, nullptr);
  switch (result) {
  case Result::Registered:
    if (envFlag(CAUSAL_ENV_VERBOSE)) {
      uint32_t slot = g_modules.slotsUsed() - 1;
      const causal_linetab_header *table = g_modules.table(slot);
      if (table)
        message("module %s: %u lines, %u rows, %u files, load bias 0x%llx", g_modules.path(slot),
                table->num_lines, table->num_rows, table->num_files,
                (unsigned long long)g_modules.bias(slot));
    }
    break;
  case Result::AlreadyRegistered:
    break;
  case Result::NoTable:
    complainOnce(caller, "no causal line table (linked without causal-ld?)");
    break;
  case Result::InvalidTable:
    complainOnce(start, "the causal line table is invalid (corrupt, or written by another "
                        "version of causal)");
    break;
  case Result::Full:
    complainOnce(start, "too many instrumented images (CAUSAL_MAX_MODULES)");
    break;
  case Result::OutOfMemory:
    complainOnce(start, "out of memory for the sample counters");
    break;
  }
}

extern "C" CAUSAL_RT_EXPORT void __causal_unregister_module(const void *start) {
  if (g_modules.unregisterModule(start))
    flushUnwindCache(); // cached unwind rules of the unloaded code are stale
  // Progress counters of the image are about to be unmapped: keep their
  // values, stop reading them.
  AddressRange image = imageRangeOf(start ? start : __builtin_return_address(0));
  if (image.end > image.begin)
    g_progress.retireRange(image.begin, image.end);
}

// ---- Progress points ------------------------------------------------------

extern "C" CAUSAL_RT_EXPORT void __causal_register_counters(struct causal_counter *start,
                                                            struct causal_counter *stop) {
  if (g_status.load(std::memory_order_acquire) == kInert)
    return;
  if (g_progress.registerCounters(start, stop))
    startExperiments(); // the first progress point starts the profiler thread
}

// Coz's coz.h finds these with dlsym(RTLD_DEFAULT, ...).
extern "C" CAUSAL_RT_EXPORT CozCounter *_coz_get_counter(int type, const char *name) {
  if (g_status.load(std::memory_order_acquire) == kInert)
    return nullptr;
  CozCounter *counter = g_progress.cozCounter(type, name);
  if (counter)
    startExperiments();
  return counter;
}

extern "C" CAUSAL_RT_EXPORT void _coz_pre_block() {
  if (ThreadState *state = tls_thread) {
    enterBlockingCall(state);
    state->coz_pre_block_global_ns = g_experiment.global_delay_ns.load(std::memory_order_relaxed);
  }
}

extern "C" CAUSAL_RT_EXPORT void _coz_post_block(bool skip_delays) {
  if (ThreadState *state = tls_thread) {
    leaveBlockingCall(state);
    if (skip_delays)
      creditWakeUp(state, state->coz_pre_block_global_ns);
  }
}

extern "C" CAUSAL_RT_EXPORT void _coz_add_delays() {
  if (ThreadState *state = tls_thread)
    if (owesDelays(state))
      payOwedDelays(state);
}

// The pthread_create hook (runtime/hooks/) creates the program's threads here.
int causal::rt::createProgramThread(PthreadCreateFn real, pthread_t *thread,
                                    const pthread_attr_t *attr, void *(*start)(void *), void *arg) {
  if (!real)
    return EAGAIN;
  if (g_status.load(std::memory_order_acquire) != kActive)
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
  int result = real(thread, attr, threadTrampoline, launch);
  if (result != 0)
    free(launch);
  return result;
}
