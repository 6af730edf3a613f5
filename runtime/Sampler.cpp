//===- runtime/Sampler.cpp - Per-thread CPU-time sampling ------------------===//

#include "Sampler.h"

#include "Attribution.h"
#include "Experiment.h"
#include "ExperimentPolicy.h"
#include "ModuleRegistry.h"
#include "SampleLog.h"

#include "causal/tunables.h"

#include <algorithm>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

extern "C" void *__libc_stack_end;

namespace causal::rt {

__thread ThreadState *tls_thread CAUSAL_RT_TLS = nullptr;

// perf for the calling thread within the descriptor reserve (below).
int startPerfWithinReserve(ThreadState *state, bool quietly = false);

namespace {

// What the runtime gave at start-up (setupSampler); constant afterwards.
SamplerSetup g_setup;
std::atomic<bool> g_sampling_ended{false}; // endSampling()
SampleCounters g_counters;

// The sampler the process uses; decided by the first thread.
std::atomic<SamplerKind> g_process_sampler{SamplerKind::None};
// What a context switch costs a perf-sampled thread (ns; 0: no thread moves
// to the timer): the setting, or measured when the first thread started perf.
std::atomic<uint64_t> g_perf_switch_cost_ns{0};
std::atomic<bool> g_sampler_decided{false};
// What a perf sample's delivery costs its thread (ns; -1: not known yet; 0:
// costs are not taken out): the setting, or calibrateSampleCost. And the
// selected line's finer period's divisor that follows (1: none).
std::atomic<int64_t> g_sample_cost_ns{-1};
std::atomic<uint32_t> g_line_period_divisor{1};
// Signals that reached a thread without sampler state: the cost probe's.
__thread uint32_t tls_probe_signals CAUSAL_RT_TLS = 0;
std::atomic<bool> g_said_thread_fallback{false};
std::atomic<bool> g_said_thread_failure{false};
std::atomic<bool> g_said_fd_reserve{false};

// The runtime's sample signal (installSampleHandler); constant afterwards.
int g_sample_signal = 0;
// Descriptors the runtime holds (the descriptor reserve's count): one per
// perf-sampled thread, and libunwind's pipe.
std::atomic<int64_t> g_runtime_fds{0};
int64_t g_kept_fds = 0; // of them, kept for the whole run (libunwind's pipe)

pid_t currentTid() { return pid_t(rawSyscall(SYS_gettid)); }

// ---- Recording one sample -------------------------------------------------

// The single place a sample's outcome is recorded: its line's count, the
// sample log, and the experiments (selected-line check, local delay count).
void recordSample(ThreadState *state, SampleOutcome outcome, const ResolvedAddress &where,
                  uint64_t weight) {
  // Only this thread writes it; the profiler thread reads it (watchThread):
  // an atomic store, so that read is not a data race.
  __atomic_store_n(&state->samples, state->samples + weight, __ATOMIC_RELAXED);
  state->samples_in_batch += weight;
  switch (outcome) {
  case SampleOutcome::Line:
    g_setup.modules->addSamples(where, weight);
    g_counters.attributed.fetch_add(weight, std::memory_order_relaxed);
    if (g_setup.sample_log && g_setup.sample_log->enabled())
      g_setup.sample_log->add(where.module, where.link_address, weight);
    if (g_setup.experiments)
      onSampledLine(state, where, weight);
    break;
  case SampleOutcome::Outside:
    g_counters.outside.fetch_add(weight, std::memory_order_relaxed);
    break;
  case SampleOutcome::Overhead:
    g_counters.overhead.fetch_add(weight, std::memory_order_relaxed);
    break;
  }
}

// ---- The signal handler ---------------------------------------------------

// The calling thread's user and total CPU time (getrusage: the kernel's
// precise runtime, split between user and system by its tick counts), and
// its context switches, voluntary and not (if |switches|).
void threadCpuSplit(uint64_t *user_ns, uint64_t *total_ns, uint64_t *switches = nullptr) {
  struct rusage usage;
  if (getrusage(RUSAGE_THREAD, &usage) != 0) {
    *user_ns = *total_ns = 0;
    if (switches)
      *switches = 0;
    return;
  }
  if (switches)
    *switches = uint64_t(usage.ru_nvcsw) + uint64_t(usage.ru_nivcsw);
  uint64_t user =
      uint64_t(usage.ru_utime.tv_sec) * 1000000000ull + uint64_t(usage.ru_utime.tv_usec) * 1000ull;
  uint64_t sys =
      uint64_t(usage.ru_stime.tv_sec) * 1000000000ull + uint64_t(usage.ru_stime.tv_usec) * 1000ull;
  *user_ns = user;
  *total_ns = user + sys;
}

void moveToTimer(ThreadState *state, uint64_t user_ns, uint64_t total_ns);
void moveBackToPerf(ThreadState *state, uint64_t user_ns, uint64_t total_ns);

// Whether a perf-sampled thread's |switches| context switches over |cpu_ns|
// of its CPU time, at |cost_ns| each, cost more than
// CAUSAL_PERF_SWITCH_COST_MAX_PERCENT % of that time.
bool perfSwitchesCostTooMuch(uint64_t switches, uint64_t cpu_ns, uint64_t cost_ns) {
  return cost_ns && cpu_ns &&
         switches * cost_ns * 100 > cpu_ns * CAUSAL_PERF_SWITCH_COST_MAX_PERCENT;
}

// Whether |switches| over |cpu_ns| would cost a perf event less than
// CAUSAL_PERF_SWITCH_BACK_PERCENT % of that time.
bool perfSwitchesCostLittle(uint64_t switches, uint64_t cpu_ns, uint64_t cost_ns) {
  return cost_ns && cpu_ns && switches * cost_ns * 100 < cpu_ns * CAUSAL_PERF_SWITCH_BACK_PERCENT;
}

// The context switches (less those in its pauses) and the CPU time (less
// pauses' spins) of the calling thread since its switch window began; starts
// the next window. A pause's switches are the profiler's: their cost falls
// inside the pause, which is timed to its end, and counted as the thread's
// own they moved the workers of bench/accuracy's heartbeat case to the timer
// at a sample period of 0.5 ms, whose ticks then put their delays in
// bunches (docs/runtime.md, "Threads that switch often").
void closeSwitchWindow(ThreadState *state, uint64_t total_ns, uint64_t switches, uint64_t *switched,
                       uint64_t *cpu_delta) {
  switches = switches > state->pause_switches ? switches - state->pause_switches : 0;
  uint64_t cpu = total_ns - state->unsampled_ns;
  *cpu_delta = cpu > state->switch_window_cpu_ns ? cpu - state->switch_window_cpu_ns : 0;
  *switched =
      switches > state->switch_window_switches ? switches - state->switch_window_switches : 0;
  state->switch_window_samples = state->samples;
  state->switch_window_cpu_ns = cpu;
  state->switch_window_switches = switches;
}

// A thread on the timer after a move (an odd number of moves) that may move again.
bool movedToTimer(const ThreadState *state) {
  return state->kind == SamplerKind::Timer && state->sampler_moves % 2 == 1 &&
         state->sampler_moves < CAUSAL_PERF_SWITCH_MOVES_MAX;
}

// Starts a window of lost samples (closeSampleWindows) at the thread's
// CPU time now.
void startLossWindow(ThreadState *state, uint64_t user_ns, uint64_t total_ns) {
  state->loss_window_samples = state->samples;
  state->loss_window_user_ns = user_ns;
  state->loss_window_total_ns = total_ns;
  state->loss_window_unsampled_ns = state->unsampled_ns;
}

// Two windows of a perf-sampled thread's samples, closed in the handler
// with one getrusage (async-signal-safe) for both when both end:
// - every CAUSAL_LOSS_WINDOW_SAMPLES samples while experiments run, the
//   samples that arrived against its user CPU time in the window (the
//   sampler's suspended time left out), and the scale of its delays that
//   follows (ExperimentPolicy.h, lostSampleScaleX1024);
// - every CAUSAL_PERF_SWITCH_WINDOW_SAMPLES samples with the auto sampler
//   (and a switch cost known), what its context switches in the window cost
//   it (perfSwitchesCostTooMuch): too much, and it moves to the CPU-time
//   timer.
void closeSampleWindows(ThreadState *state) {
  uint64_t switch_cost = g_perf_switch_cost_ns.load(std::memory_order_relaxed);
  bool loss_window = g_setup.experiments &&
                     state->samples - state->loss_window_samples >= CAUSAL_LOSS_WINDOW_SAMPLES;
  bool switch_window =
      switchWindowsMayMove(state) &&
      state->samples - state->switch_window_samples >= CAUSAL_PERF_SWITCH_WINDOW_SAMPLES;
  if (!loss_window && !switch_window)
    return;
  uint64_t user, total, switches;
  threadCpuSplit(&user, &total, &switches);
  if (!total)
    return;
  if (loss_window) {
    uint64_t arrived = state->samples - state->loss_window_samples;
    uint64_t user_delta = user > state->loss_window_user_ns ? user - state->loss_window_user_ns : 0;
    uint64_t total_delta =
        total > state->loss_window_total_ns ? total - state->loss_window_total_ns : 0;
    uint64_t unsampled = state->unsampled_ns - state->loss_window_unsampled_ns;
    uint64_t covered = user_delta > unsampled ? user_delta - unsampled : 0;
    state->delay_scale_x1024 = lostSampleScaleX1024(
        arrived, covered, std::min(user_delta, total_delta), total_delta, g_setup.period_ns);
    startLossWindow(state, user, total);
  }
  if (switch_window) {
    // Its CPU time, system time included, less its pauses' spins.
    uint64_t switched, cpu_delta;
    closeSwitchWindow(state, total, switches, &switched, &cpu_delta);
    if (perfSwitchesCostTooMuch(switched, cpu_delta, switch_cost))
      moveToTimer(state, user, total);
  }
}

// After a timer tick of a thread that moved from perf: every
// CAUSAL_PERF_SWITCH_BACK_WINDOW_SAMPLES samples, one getrusage; if the
// window's switches would cost a perf event little, the thread goes back to
// perf (a thread that switches often only in one phase of its life, a
// server's burst, a start-up, is not left on the timer for the rest of it).
void closeTimerSwitchWindow(ThreadState *state) {
  uint64_t switch_cost = g_perf_switch_cost_ns.load(std::memory_order_relaxed);
  if (!switch_cost || !movedToTimer(state) ||
      state->samples - state->switch_window_samples < CAUSAL_PERF_SWITCH_BACK_WINDOW_SAMPLES)
    return;
  uint64_t user, total, switches;
  threadCpuSplit(&user, &total, &switches);
  if (!total)
    return;
  uint64_t switched, cpu_delta;
  closeSwitchWindow(state, total, switches, &switched, &cpu_delta);
  if (perfSwitchesCostLittle(switched, cpu_delta, switch_cost))
    moveBackToPerf(state, user, total);
}

// A perf sample's signal (the fasync band of the overflow: POLL_IN, or
// POLL_HUP for the one that reached the event's limit); anything else sent
// with the runtime's signal is not a sample.
bool isPerfSampleSignal(const siginfo_t *info) {
  return info && (info->si_code == POLL_IN || info->si_code == POLL_HUP);
}

// One perf sample: the signal is delivered as the overflow's interrupt
// returns to the thread (the event counts user mode only), so the
// interrupted registers are the sample's.
void processPerfSample(ThreadState *state, void *ucontext) {
  ResolvedAddress where;
  SampleOutcome outcome = attributeSignalContext(ucontext, state, &where);
  recordSample(state, outcome, where, 1);
}

// Samples a timer tick stands for: expirations merged while the signal was
// pending count as samples of the same place.
uint64_t timerTickWeight(const siginfo_t *info) {
  uint64_t weight = 1;
  if (info->si_overrun > 0)
    weight += uint64_t(info->si_overrun) < CAUSAL_MAX_TIMER_OVERRUN ? uint64_t(info->si_overrun)
                                                                    : CAUSAL_MAX_TIMER_OVERRUN;
  return weight;
}

void processTimerTick(ThreadState *state, siginfo_t *info, void *ucontext) {
  ResolvedAddress where;
  SampleOutcome outcome = attributeSignalContext(ucontext, state, &where);
  uint64_t weight = timerTickWeight(info);
  recordSample(state, outcome, where, weight);
  g_counters.timer_samples.fetch_add(weight, std::memory_order_relaxed);
}

bool ownsPerfFd(const ThreadState *state);

// After a perf sample of |state|'s thread, taken or dropped.
void rearmPerfEvent(ThreadState *state, const siginfo_t *info) {
  // The first period was a random phase: from now on the full period.
  if (state->first_period) {
    state->first_period = false;
    uint64_t period = g_setup.period_ns;
    ioctl(state->perf_fd, PERF_EVENT_IOC_PERIOD, &period);
  }
  // The event stopped itself at its limit (the signal says POLL_HUP):
  // re-arm it.
  if (info->si_code == POLL_HUP)
    ioctl(state->perf_fd, PERF_EVENT_IOC_REFRESH, int(CAUSAL_PERF_SIGNALS_QUEUED));
}

void handleSample(ThreadState *state, siginfo_t *info, void *ucontext);

// ---- The selected line at a finer period -----------------------------------
//
// docs/runtime.md, "What the samples cost, and the experiment's line at a
// finer period". While an experiment runs, a perf-sampled thread whose
// sample falls in the selected line samples every period / k (k =
// g_line_period_divisor) until the experiment ends. Every k-th signal is its
// ordinary sample (line counts, the next line's choice, samples expected and
// arrived, loss and switch windows, batches); the others count only for the
// selected line's delay (onFinerSample). Ending, the thread sets the period
// that brings its next signal where its ordinary sample is due, then the
// full period again (first_period), so that the profile's samples are the
// full period's.

// Whether this perf signal of |state|'s thread is an ordinary sample.
bool takesOrdinarySample(ThreadState *state) {
  if (state->line_period_divisor <= 1)
    return true;
  return ++state->line_period_signals % state->line_period_divisor == 0;
}

// |state|'s thread at period / |divisor| (0: the full period), from now.
void setLinePeriodState(ThreadState *state, uint32_t divisor) {
  state->line_period_divisor = divisor;
  state->line_period_signals = 0;
  state->line_hit_parts = 0;
}

// Back to the full period (see above); the signal is blocked (the handler).
void leaveLinePeriod(ThreadState *state) {
  uint32_t k = state->line_period_divisor;
  uint64_t left = k - state->line_period_signals % k; // finer periods to the ordinary sample
  setLinePeriodState(state, 0);
  if (!ownsPerfFd(state))
    return;
  uint64_t period = left * (g_setup.period_ns / k);
  ioctl(state->perf_fd, PERF_EVENT_IOC_PERIOD, &period);
  state->first_period = true; // the next signal's re-arm sets the full period
}

// After a perf signal of |state|'s thread (|ordinary|: an ordinary sample),
// its samples in the selected line counted (line_hits, not yet charged):
// enters the finer period, or leaves it once its experiment is over.
void adjustLinePeriod(ThreadState *state, bool ordinary) {
  if (state->line_period_divisor > 1) {
    if (state->kind != SamplerKind::Perf) // moved to the timer (closeSampleWindows)
      setLinePeriodState(state, 0);
    else if (!experimentTakesSampleCosts() ||
             g_experiment.start_ns.load(std::memory_order_relaxed) != state->line_period_start)
      leaveLinePeriod(state);
    return;
  }
  uint32_t k = g_line_period_divisor.load(std::memory_order_relaxed);
  if (k <= 1 || !ordinary || !state->line_hits || state->kind != SamplerKind::Perf ||
      !experimentTakesSampleCosts() || !ownsPerfFd(state))
    return;
  uint64_t period = g_setup.period_ns / k;
  if (ioctl(state->perf_fd, PERF_EVENT_IOC_PERIOD, &period) != 0)
    return;
  state->first_period = false; // the period just set stands
  setLinePeriodState(state, k);
  state->line_period_start = g_experiment.start_ns.load(std::memory_order_relaxed);
}

// One signal at the finer period that is not an ordinary sample: only
// whether it fell in the selected line.
void processFinerSample(ThreadState *state, void *ucontext) {
  ResolvedAddress where;
  if (attributeSignalContext(ucontext, state, &where) == SampleOutcome::Line)
    onFinerSample(state, where);
}

// True if the caller's frame lies on the thread's own stack within its
// reserve (startThreadSampling). A frame elsewhere (an alternate signal
// stack, a coroutine's stack) is not judged.
__attribute__((always_inline)) inline bool onNearlyFullStack(const ThreadState *state) {
  uintptr_t frame = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  return frame < state->sample_stack_floor && frame >= state->stack.begin;
}

void onSampleSignal(int, siginfo_t *info, void *ucontext) {
  ThreadState *state = tls_thread;
  if (!state) { // no sampler here (the profiler thread's cost probe)
    __atomic_store_n(&tls_probe_signals, tls_probe_signals + 1, __ATOMIC_RELAXED);
    return;
  }
  int saved_errno = errno;
  if (state && g_sampling_ended.load(std::memory_order_relaxed)) {
    // Profiling ended (endSampling): this thread's sampler goes quiet; its
    // descriptor is released when the thread ends.
    suspendThreadSampling(state);
    if (state->kind == SamplerKind::Perf && ownsPerfFd(state))
      ioctl(state->perf_fd, PERF_EVENT_IOC_DISABLE, 0); // off for good: no resume follows
    errno = saved_errno;
    return;
  }
  // A signal that lands with the stack nearly used up (a program about to
  // overflow it, which may catch the overflow on an alternate stack and
  // leave with siglongjmp): the handler's own frames would overflow it
  // first, and a jump out of the handler would leave it half done (the
  // module registry's reader count taken, cancellation disabled). The
  // sample is dropped and counted.
  if (state && onNearlyFullStack(state)) {
    if (state->kind == SamplerKind::Perf && isPerfSampleSignal(info) && ownsPerfFd(state))
      rearmPerfEvent(state, info);
    bool tick = info && info->si_code == SI_TIMER;
    if (tick && state->kind == SamplerKind::Timer)
      g_counters.timer_samples.fetch_add(timerTickWeight(info), std::memory_order_relaxed);
    g_counters.near_stack_end.fetch_add(tick ? timerTickWeight(info) : 1,
                                        std::memory_order_relaxed);
    errno = saved_errno;
    return;
  }
  // A perf sample inside the runtime's own work (a pause paying delays in a
  // hook, writing paths; the sample handler itself blocks the signal): a
  // sample of the profiler's code, counted as overhead without attributing
  // it. The event stops itself at its limit (POLL_HUP), and no one else
  // would re-arm it: the thread would go unsampled for the rest of the run.
  if (state && state->in_handler && state->kind == SamplerKind::Perf && isPerfSampleSignal(info)) {
    ResolvedAddress nowhere;
    if (takesOrdinarySample(state))
      recordSample(state, SampleOutcome::Overhead, nowhere, 1);
    if (ownsPerfFd(state))
      rearmPerfEvent(state, info);
  }
  if (state && !state->in_handler && state->kind != SamplerKind::None)
    handleSample(state, info, ucontext);
  errno = saved_errno;
}

// The sample handler's work, in a frame of its own: onSampleSignal checks
// the room left on the stack before this frame is set up.
__attribute__((noinline)) void handleSample(ThreadState *state, siginfo_t *info, void *ucontext) {
  state->in_handler = 1;
  // libunwind may reach a cancellation point (read/write when it
  // validates memory) while holding one of its mutexes: a thread with a
  // pending pthread_cancel must not be cancelled in here. (glibc's
  // pthread_setcancelstate is an atomic update of the thread descriptor.)
  int cancel_state;
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
  // CPU time of the handler (CAUSAL_VERBOSE only: costs two system calls).
  uint64_t started = g_setup.verbose ? threadCpuNs() : 0;
  bool perf_signal = state->kind == SamplerKind::Perf && isPerfSampleSignal(info);
  // What the signal costs the thread, taken out during experiments: its
  // delivery (measured once) and the handler's time, up to its delays.
  int64_t delivery_cost = g_sample_cost_ns.load(std::memory_order_relaxed);
  bool charged =
      perf_signal && g_setup.experiments && delivery_cost > 0 && experimentTakesSampleCosts();
  uint64_t entered = charged ? monotonicNs() : 0;
  uint32_t divisor = state->line_period_divisor > 1 ? state->line_period_divisor : 1;
  {
    ModuleTablesRead reading(*g_setup.modules);
    if (perf_signal) {
      bool ordinary = takesOrdinarySample(state);
      if (ordinary)
        processPerfSample(state, ucontext);
      else
        processFinerSample(state, ucontext);
      rearmPerfEvent(state, info);
      if (ordinary)
        closeSampleWindows(state); // after the re-arm: it may close the event
      if (g_setup.experiments)
        adjustLinePeriod(state, ordinary);
    } else if (info && info->si_code == SI_TIMER && state->kind == SamplerKind::Timer) {
      // (A tick still pending when the thread went back to perf is not a sample.)
      processTimerTick(state, info, ucontext);
      closeTimerSwitchWindow(state); // after the tick: it may delete the timer
    }
  }
  // The kernel signals every perf sample when O_ASYNC is set (it ignores
  // wakeup_events for fasync notification), and a CPU-time timer signals
  // each expiration: batches of CAUSAL_SAMPLE_BATCH are formed here.
  if (state->samples_in_batch >= g_setup.batch) {
    state->samples_in_batch = 0;
    state->batches++;
  }
  // The paper: delays are checked and inserted right after processing
  // samples (every signal: the kernel signals each perf sample).
  if (g_setup.experiments) {
    uint64_t cost = charged ? uint64_t(delivery_cost) + (monotonicNs() - entered) : 0;
    chargeSignal(state, divisor, cost);
    settleDelays(state);
  }
  if (g_setup.write_profile_if_due)
    g_setup.write_profile_if_due();
  g_counters.signals.fetch_add(1, std::memory_order_relaxed);
  if (g_setup.verbose)
    g_counters.handler_ns.fetch_add(threadCpuNs() - started, std::memory_order_relaxed);
  pthread_setcancelstate(cancel_state, nullptr);
  state->in_handler = 0;
}

// ---- Starting and stopping ------------------------------------------------

int perfEventOpen(perf_event_attr *attr) {
  long fd = rawSyscall(SYS_perf_event_open, reinterpret_cast<long>(attr), 0 /* this thread */,
                       -1 /* any cpu */, -1 /* no group */, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0) {
    errno = int(-fd); // the callers report errno
    return -1;
  }
  return int(fd);
}

// The descriptor reserve (tunables.h): under the current soft
// RLIMIT_NOFILE, the number the runtime's descriptors start from and how
// many it may hold. Read at every thread start: the program may have
// lowered the limit.
struct FdRoom {
  uint64_t soft = 0;
  uint64_t floor = 0;
  uint64_t budget = 0;
};
FdRoom fdRoom() {
  FdRoom room;
  struct rlimit limit;
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0)
    return room;
  room.soft = limit.rlim_cur == RLIM_INFINITY ? (1ull << 30) : uint64_t(limit.rlim_cur);
  uint64_t floor = room.soft * CAUSAL_FD_PROGRAM_PERCENT / 100;
  if (floor < CAUSAL_FD_PROGRAM_MIN)
    floor = CAUSAL_FD_PROGRAM_MIN;
  if (floor > CAUSAL_FD_FLOOR_MAX)
    floor = CAUSAL_FD_FLOOR_MAX;
  room.floor = floor;
  if (floor >= room.soft)
    return room;
  uint64_t budget = room.soft - floor;
  uint64_t share = room.soft * (100 - CAUSAL_FD_PROGRAM_PERCENT) / 100;
  if (budget > share)
    budget = share;
  // Each perf thread may queue CAUSAL_PERF_SIGNALS_QUEUED signals: stay well
  // inside the user's pending-signal limit.
  if (getrlimit(RLIMIT_SIGPENDING, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    uint64_t by_signals = uint64_t(limit.rlim_cur) / (2 * CAUSAL_PERF_SIGNALS_QUEUED);
    if (budget > by_signals)
      budget = by_signals;
  }
  room.budget = budget;
  return room;
}

// Takes one descriptor of the reserve; false (and said once, unless
// |quietly|: in a signal handler) if the runtime already holds all it may.
// |*floor|: where the reserve starts.
bool takeFdFromReserve(uint64_t *floor, bool quietly = false) {
  FdRoom room = fdRoom();
  *floor = room.floor;
  if (g_runtime_fds.fetch_add(1, std::memory_order_acq_rel) < int64_t(room.budget))
    return true;
  g_runtime_fds.fetch_sub(1, std::memory_order_acq_rel);
  if (!quietly && !g_said_fd_reserve.exchange(true))
    message("the descriptor limit (soft RLIMIT_NOFILE %llu) leaves the profiler %llu "
            "descriptors (it keeps descriptors below %llu and %u %% of the limit for the "
            "program); further threads sample with the CPU-time timer",
            (unsigned long long)room.soft, (unsigned long long)room.budget,
            (unsigned long long)room.floor, CAUSAL_FD_PROGRAM_PERCENT);
  return false;
}
void giveFdToReserve() { g_runtime_fds.fetch_sub(1, std::memory_order_acq_rel); }

// Moves |fd| to the first free number from the reserve's floor, out of the
// low numbers the program expects to get from open(). -1 (|fd| closed) if
// that is not possible: the runtime never keeps a descriptor below it.
int moveFdHigh(int fd, uint64_t floor) {
  int high = fcntl(fd, F_DUPFD_CLOEXEC, int(floor));
  ownClose(fd);
  return high;
}

uint64_t randomPhase(pid_t tid) {
  uint64_t x = monotonicNs() ^ (uint64_t(uint32_t(tid)) << 32);
  x += 0x9e3779b97f4a7c15ull; // splitmix64
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  x ^= x >> 31;
  uint64_t phase = 1 + x % g_setup.period_ns; // (0, period]
  return phase < CAUSAL_MIN_SAMPLE_PERIOD_NS ? CAUSAL_MIN_SAMPLE_PERIOD_NS : phase;
}

// The CPU time of |state| from |base| (one of its bases) to |now| less the
// pauses spun with sampling suspended. The bases change when the thread
// moves to the timer (moveToTimer), and accountSamples reads a live
// thread's: stored and loaded atomically.
uint64_t cpuSinceBase(const ThreadState *state, uint64_t now, const uint64_t *base_ns) {
  uint64_t base = __atomic_load_n(base_ns, __ATOMIC_RELAXED);
  uint64_t covered = now > base ? now - base : 0;
  uint64_t unsampled = __atomic_load_n(&state->unsampled_ns, __ATOMIC_RELAXED) -
                       __atomic_load_n(&state->unsampled_base_ns, __ATOMIC_RELAXED);
  return covered > unsampled ? covered - unsampled : 0;
}

// CPU time the sampler of |state| should have turned into samples since it
// started, given the thread's user and total CPU time now: perf samples user
// mode only (exclude_kernel); the timer counts both.
uint64_t coveredCpu(const ThreadState *state, uint64_t user_ns, uint64_t total_ns) {
  return state->kind == SamplerKind::Perf
             ? cpuSinceBase(state, user_ns, &state->cpu_base_user_ns)
             : cpuSinceBase(state, total_ns, &state->cpu_base_total_ns);
}

// Whether a thread's user and system times (getrusage) say nothing of how
// its CPU time splits. The kernel splits a thread's exact CPU time by its
// ticks; a thread that no tick found has it all called user time, however
// much of it went on system calls (a short thread's start and end, the
// runtime's ~30 among them, are mostly that).
bool cpuSplitUnknown(uint64_t user_ns, uint64_t total_ns) {
  return user_ns == total_ns && total_ns < CAUSAL_KERNEL_TICK_MAX_NS;
}

// The variance of a thread's user time as the kernel's split estimates it,
// per ns of tick: the split is the share of n = total / tick ticks that
// found the thread in user mode, a binomial share; user time is total x that
// share, of variance total^2 p (1 - p) / n = tick x user x system / total.
double userTimeVariancePerTick(uint64_t user_ns, uint64_t total_ns) {
  if (!total_ns || user_ns >= total_ns)
    return 0;
  return double(user_ns) * double(total_ns - user_ns) / double(total_ns);
}

int startTimer(ThreadState *state);

// Closes |state|'s perf event (unless the program took its number over) and
// gives its descriptor back to the reserve.
void releasePerfEvent(ThreadState *state) {
  if (ownsPerfFd(state))
    ownClose(state->perf_fd);
  state->perf_fd = -1;
  giveFdToReserve();
}

// At a move between perf and the timer, given the thread's CPU time now:
// the CPU time the old sampler covered counts as an ended thread's does (the
// samples expected); the new one covers what follows. The bases are read by
// the profiler thread (coveredCpu): stored atomically.
void handOverCoveredCpu(ThreadState *state, uint64_t covered, uint64_t user_ns, uint64_t total_ns) {
  g_counters.covered_cpu_ns.fetch_add(covered, std::memory_order_relaxed);
  __atomic_store_n(&state->cpu_base_user_ns, user_ns, __ATOMIC_RELAXED);
  __atomic_store_n(&state->cpu_base_total_ns, total_ns, __ATOMIC_RELAXED);
  __atomic_store_n(&state->unsampled_base_ns, state->unsampled_ns, __ATOMIC_RELAXED);
  state->delay_scale_x1024 = 1024; // lost samples are measured afresh, or not at all (timer)
}

// Moves the calling thread from perf to the CPU-time timer, in its sample
// handler (the signal blocked), given its CPU time now: the timer starts
// first (if it cannot, the thread stays on perf); the CPU time perf covered
// is counted as an ended thread's is, the timer covers what follows; then
// the event is closed (a sample of it still pending finds the thread on the
// timer and is ignored). glibc's timer_create makes no allocation for a
// signal to a thread (SIGEV_THREAD_ID); timer_settime and close are system
// calls.
void moveToTimer(ThreadState *state, uint64_t user_ns, uint64_t total_ns) {
  uint64_t covered = coveredCpu(state, user_ns, total_ns);
  if (startTimer(state) != 0) {
    state->kind = SamplerKind::Perf;
    return;
  }
  handOverCoveredCpu(state, covered, user_ns, total_ns); // the timer's come with their overruns
  releasePerfEvent(state);
  state->sampler_moves++;
  g_counters.timer_threads.fetch_add(1, std::memory_order_relaxed);
  g_counters.moved_to_timer.fetch_add(1, std::memory_order_relaxed);
}

// Moves the calling thread, on the timer since moveToTimer, back to perf, in
// its sample handler (the signal blocked), given its CPU time now; the
// reverse of moveToTimer: the event opens first (if it cannot, the thread
// stays on the timer for good); the CPU time the timer covered is counted as
// an ended thread's is, perf covers what follows; then the timer is deleted
// (a tick of it still pending finds the thread on perf and is ignored).
// timer_delete of a SIGEV_THREAD_ID timer is the system call alone.
void moveBackToPerf(ThreadState *state, uint64_t user_ns, uint64_t total_ns) {
  uint64_t covered = coveredCpu(state, user_ns, total_ns);
  // Quietly: no message from a signal handler (the thread stays on the
  // timer, as the reserve's message says of later threads).
  if (startPerfWithinReserve(state, /*quietly=*/true) != 0) {
    state->kind = SamplerKind::Timer; // startPerf may have set it to None
    state->sampler_moves = CAUSAL_PERF_SWITCH_MOVES_MAX;
    return;
  }
  handOverCoveredCpu(state, covered, user_ns, total_ns);
  startLossWindow(state, user_ns, total_ns); // perf's lost samples, from now
  timer_delete(state->timer);
  state->timer_armed = false;
  state->sampler_moves++;
  g_counters.moved_back.fetch_add(1, std::memory_order_relaxed);
}

// True if |state->perf_fd| still is the descriptor we opened: a program may
// close every descriptor it does not know (closefrom) and reuse the number.
bool ownsPerfFd(const ThreadState *state) {
  struct stat st;
  return state->perf_fd >= 0 && fstat(state->perf_fd, &st) == 0 &&
         uint64_t(st.st_dev) == state->perf_fd_dev && uint64_t(st.st_ino) == state->perf_fd_ino;
}

// |floor|: the descriptor reserve's (takeFdFromReserve).
int startPerf(ThreadState *state, uint64_t floor) {
  // No ring buffer: the kernel signals every overflow to the thread
  // (O_ASYNC, F_SETOWN_EX), and the handler reads the sample from the
  // interrupted registers. Mapping and unmapping a ring per thread (a
  // mapping, its pages, a TLB shoot-down at the unmap, their RCU release)
  // made a thread start and end cost about 1.6x a plain one; the event
  // alone about 1.04x (docs/benchmarks.md, "Many threads").
  perf_event_attr attr;
  memset(&attr, 0, sizeof(attr));
  attr.size = sizeof(attr);
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_TASK_CLOCK;
  attr.sample_period = randomPhase(state->tid); // the full period after the first sample
  attr.sample_type = 0;                         // nothing is recorded: there is no ring
  attr.disabled = 1;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;

  int fd = perfEventOpen(&attr);
  if (fd < 0)
    return errno;
  fd = moveFdHigh(fd, floor);
  if (fd < 0)
    return errno;
  // F_SETSIG before O_ASYNC: the default SIGIO would terminate the program.
  // (A new perf descriptor has no status flags to keep: F_SETFL sets
  // O_ASYNC alone.)
  struct f_owner_ex owner = {F_OWNER_TID, state->tid};
  struct stat st;
  if (fcntl(fd, F_SETSIG, g_sample_signal) != 0 || fcntl(fd, F_SETOWN_EX, &owner) != 0 ||
      fcntl(fd, F_SETFL, O_ASYNC) != 0 || fstat(fd, &st) != 0) {
    int error = errno;
    ownClose(fd);
    return error;
  }
  state->perf_fd = fd;
  state->perf_fd_dev = uint64_t(st.st_dev);
  state->perf_fd_ino = uint64_t(st.st_ino);
  state->kind = SamplerKind::Perf;
  state->first_period = true;
  // REFRESH enables the new event (its count is 0) for that many samples
  // (see Sampler.h).
  if (ioctl(fd, PERF_EVENT_IOC_REFRESH, int(CAUSAL_PERF_SIGNALS_QUEUED)) != 0) {
    int error = errno;
    state->kind = SamplerKind::None;
    ownClose(fd);
    state->perf_fd = -1;
    return error;
  }
  return 0;
}

int startTimer(ThreadState *state) {
  struct sigevent event;
  memset(&event, 0, sizeof(event));
  event.sigev_notify = SIGEV_THREAD_ID;
  event.sigev_signo = g_sample_signal;
  event._sigev_un._tid = state->tid;
  timer_t timer;
  if (timer_create(CLOCK_THREAD_CPUTIME_ID, &event, &timer) != 0)
    return errno;
  state->timer = timer;
  state->timer_armed = true;
  state->kind = SamplerKind::Timer;
  struct itimerspec spec;
  spec.it_interval.tv_sec = time_t(g_setup.period_ns / 1000000000ull);
  spec.it_interval.tv_nsec = long(g_setup.period_ns % 1000000000ull);
  uint64_t phase = randomPhase(state->tid); // then every period
  spec.it_value.tv_sec = time_t(phase / 1000000000ull);
  spec.it_value.tv_nsec = long(phase % 1000000000ull);
  if (timer_settime(timer, 0, &spec, nullptr) != 0) {
    int error = errno;
    state->kind = SamplerKind::None;
    timer_delete(timer);
    state->timer_armed = false;
    return error;
  }
  return 0;
}

void readParanoid(char *buffer, size_t size) {
  formatTo(buffer, size, "unknown");
  int fd = ownOpen("/proc/sys/kernel/perf_event_paranoid", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return;
  ssize_t n = ownRead(fd, buffer, size - 1);
  ownClose(fd);
  if (n <= 0)
    return;
  while (n > 0 && (buffer[n - 1] == '\n' || buffer[n - 1] == ' '))
    --n;
  buffer[n] = 0;
}

void explainPerfFailure(int error, bool falling_back) {
  char paranoid[32];
  readParanoid(paranoid, sizeof(paranoid));
  const char *hint = "";
  if (error == EACCES || error == EPERM)
    hint = " (self-monitoring needs kernel.perf_event_paranoid <= 2, and containers often "
           "forbid perf_event_open entirely)";
  else if (error == ENOENT || error == ENOSYS || error == EOPNOTSUPP)
    hint = " (this kernel does not offer the software task-clock event)";
  else if (error == EMFILE || error == ENFILE)
    hint = " (out of file descriptors)";
  message("perf_event sampling is not used: perf_event_open failed: %s; "
          "kernel.perf_event_paranoid=%s%s.%s%s%s",
          strerror(error), paranoid, hint,
          falling_back ? " Using the CPU-time timer sampler instead (set " : "",
          falling_back ? CAUSAL_ENV_SAMPLER : "",
          falling_back ? "=timer to skip the attempt)." : "");
}

AddressRange stackOfCurrentThread(bool is_main_thread) {
  AddressRange range;
  if (is_main_thread) {
    uintptr_t top = reinterpret_cast<uintptr_t>(__libc_stack_end);
    struct rlimit limit;
    uintptr_t size = 8u << 20;
    if (getrlimit(RLIMIT_STACK, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
      size = uintptr_t(limit.rlim_cur);
    if (size > (1ull << 30))
      size = 1ull << 30;
    // __libc_stack_end is near the top: environment and auxv lie above it.
    // The kernel's size limit counts from the end of the stack's mapping,
    // which is the end of the page holding the program's file name
    // (AT_EXECFN, the first string exec placed there).
    uintptr_t mapping_end = top;
    if (const char *file = reinterpret_cast<const char *>(getauxval(AT_EXECFN))) {
      uintptr_t page = getauxval(AT_PAGESZ) ? getauxval(AT_PAGESZ) : 4096;
      uintptr_t end =
          (reinterpret_cast<uintptr_t>(file) + strlen(file) + 1 + page - 1) & ~(page - 1);
      if (end > top && end - top < (64u << 20))
        mapping_end = end;
    }
    range.begin = mapping_end > size ? mapping_end - size : 0;
    range.end = top + (1u << 20);
    return range;
  }
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    void *base = nullptr;
    size_t size = 0;
    if (pthread_attr_getstack(&attr, &base, &size) == 0) {
      range.begin = reinterpret_cast<uintptr_t>(base);
      range.end = range.begin + size;
    }
    pthread_attr_destroy(&attr);
  }
  return range;
}

} // namespace

// The finer period's divisor once a sample's cost is known.
void setSampleCost(uint64_t cost_ns) {
  g_line_period_divisor.store(
      linePeriodDivisor(g_setup.period_ns, g_setup.line_sample_period_ns, cost_ns),
      std::memory_order_relaxed);
  g_sample_cost_ns.store(int64_t(cost_ns), std::memory_order_relaxed);
}

uint64_t measureSampleCost(bool (*should_stop)(), bool *stopped); // below

void calibrateSampleCost(bool (*should_stop)()) {
  if (g_sample_cost_ns.load(std::memory_order_relaxed) >= 0 ||
      g_process_sampler.load(std::memory_order_relaxed) != SamplerKind::Perf)
    return; // set, measured in a parent, or no perf sampling to take out
  bool stopped = false;
  uint64_t cost = measureSampleCost(should_stop, &stopped);
  if (stopped)
    return; // the program ends: it does not wait for the probe
  setSampleCost(cost);
  if (g_setup.verbose)
    message("a perf sample's delivery costs a thread %llu ns (measured; CAUSAL_SAMPLE_COST_NS "
            "sets it); the selected line's thread samples every %llu ns",
            (unsigned long long)cost,
            (unsigned long long)(g_setup.period_ns /
                                 g_line_period_divisor.load(std::memory_order_relaxed)));
}

uint64_t sampleCostNs() {
  int64_t cost = g_sample_cost_ns.load(std::memory_order_relaxed);
  return cost > 0 ? uint64_t(cost) : 0;
}

void setupSampler(const SamplerSetup &setup) {
  g_setup = setup;
  if (setup.sample_cost_ns >= 0)
    setSampleCost(uint64_t(setup.sample_cost_ns));
}

const SampleCounters &sampleCounters() { return g_counters; }

void resetSampleCounters() {
  // forgetInheritedSampler closed the inherited perf descriptors; libunwind's
  // pipe is the child's too.
  g_runtime_fds.store(g_kept_fds);
  g_counters.covered_cpu_ns.store(0);
  g_counters.unsplit_cpu_ns.store(0);
  g_counters.user_split_variance_ns.store(0);
  g_counters.timer_threads.store(0);
  g_counters.moved_to_timer.store(0);
  g_counters.moved_back.store(0);
  g_counters.timer_samples.store(0);
  g_counters.attributed.store(0);
  g_counters.outside.store(0);
  g_counters.overhead.store(0);
  g_counters.near_stack_end.store(0);
  g_counters.signals.store(0);
  g_counters.handler_ns.store(0);
}

int sampleSignal() { return g_sample_signal; }

bool openAboveDescriptorFloor(uint32_t needed, void (*open_descriptors)(void *), void *arg) {
  FdRoom room = fdRoom();
  if (room.budget < needed + uint64_t(g_runtime_fds.load()))
    return false;
  g_runtime_fds.fetch_add(needed);
  g_kept_fds += needed;
  int holder = ownOpen("/dev/null", O_RDONLY | O_CLOEXEC);
  if (holder < 0)
    return false;
  int held[CAUSAL_FD_FLOOR_MAX];
  uint32_t count = 0;
  if (uint64_t(holder) < room.floor)
    held[count++] = holder;
  while (count < CAUSAL_FD_FLOOR_MAX) {
    int fd = fcntl(holder, F_DUPFD_CLOEXEC, 0); // the lowest free number
    if (fd < 0)
      break;
    if (uint64_t(fd) >= room.floor) {
      ownClose(fd);
      break;
    }
    held[count++] = fd;
  }
  open_descriptors(arg);
  for (uint32_t i = 0; i < count; ++i)
    ownClose(held[i]);
  if (uint64_t(holder) >= room.floor)
    ownClose(holder);
  return true;
}

int installSampleHandler() {
  int chosen = 0;
  for (int signal = SIGRTMAX; signal >= SIGRTMIN && !chosen; --signal) {
    struct sigaction current;
    if (sigaction(signal, nullptr, &current) == 0 && !(current.sa_flags & SA_SIGINFO) &&
        current.sa_handler == SIG_DFL)
      chosen = signal;
  }
  if (!chosen)
    return EBUSY;
  struct sigaction action;
  memset(&action, 0, sizeof(action));
  action.sa_sigaction = onSampleSignal;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  if (sigaction(chosen, &action, nullptr) != 0)
    return errno;
  g_sample_signal = chosen;
  return 0;
}

bool SampleAccount::thin() const {
  return causal_thin_profile(double(expected), double(spread), double(arrived));
}

namespace {
// The square root of |x| >= 0 by Newton's method (the runtime does not link
// libm); to well within a sample for the spreads it is used for.
double squareRoot(double x) {
  if (!(x > 0))
    return 0;
  double root = x > 1 ? x : 1;
  for (int i = 0; i < 200; ++i) {
    double next = (root + x / root) / 2;
    if (next >= root)
      break;
    root = next;
  }
  return root;
}
} // namespace

SampleAccount accountSamples(const ThreadRegistry &threads) {
  SampleAccount account;
  // Live threads (not the caller: writeProfileOnce stopped its sampler,
  // which counted it): their CPU clock (user + system, precise); for perf
  // threads the user share of it is the process's (getrusage), and so for
  // ended perf threads whose split the kernel could not tell: the process's
  // is that of all its threads' ticks together.
  struct rusage self;
  double user_share = 1, process_ns = 0;
  if (getrusage(RUSAGE_SELF, &self) == 0) {
    double user = double(self.ru_utime.tv_sec) * 1e9 + double(self.ru_utime.tv_usec) * 1e3;
    double sys = double(self.ru_stime.tv_sec) * 1e9 + double(self.ru_stime.tv_usec) * 1e3;
    process_ns = user + sys;
    if (process_ns > 0)
      user_share = user / process_ns;
  }
  uint64_t unsplit = g_counters.unsplit_cpu_ns.load();
  uint64_t covered = g_counters.covered_cpu_ns.load() + uint64_t(double(unsplit) * user_share);
  double at_share_ns = double(unsplit); // CPU time counted at the process's share
  for (uint32_t i = 0, used = threads.slotsUsed(); i < used; ++i) {
    const ThreadState *state = threads.slot(i);
    if (!state || !state->in_use.load(std::memory_order_acquire) ||
        state->kind == SamplerKind::None || threadId(state) <= 0)
      continue;
    uint64_t total = threadCpuNs(threadId(state));
    if (!total)
      continue;
    covered += coveredCpu(state, uint64_t(double(total) * user_share), total);
    if (state->kind == SamplerKind::Perf)
      at_share_ns += double(cpuSinceBase(state, total, &state->cpu_base_total_ns));
  }
  account.expected = covered / g_setup.period_ns;
  // The spread: the ended perf threads' own splits, and the share's (its
  // variance is p (1 - p) / n of the process's n = CPU time / tick ticks),
  // times the CPU time counted at it, squared.
  double share_variance_per_tick = process_ns > 0 ? user_share * (1 - user_share) / process_ns : 0;
  double variance =
      double(CAUSAL_KERNEL_TICK_MAX_NS) * (double(g_counters.user_split_variance_ns.load()) +
                                           at_share_ns * at_share_ns * share_variance_per_tick);
  account.spread = uint64_t(squareRoot(variance) / double(g_setup.period_ns));
  account.arrived = g_counters.attributed.load() + g_counters.outside.load() +
                    g_counters.overhead.load() + g_counters.near_stack_end.load();
  return account;
}

void sayIfSamplesWereLost(const SampleAccount &account) {
  if (!account.thin())
    return;
  // Why, where it can be told: the handler replaced, the signal blocked.
  char reasons[512];
  size_t used = 0;
  reasons[0] = 0;
  struct sigaction current;
  if (g_sample_signal && sigaction(g_sample_signal, nullptr, &current) == 0 &&
      current.sa_sigaction != onSampleSignal)
    used += formatTo(reasons + used, sizeof(reasons) - used,
                     " The program replaced the handler of signal %d, the profiler's.",
                     g_sample_signal);
  message("this profile is thin: %llu samples arrived of the %llu (give or take %llu) the "
          "sampled threads' CPU time should have given (%llu %%; period %llu ns). Threads that "
          "block signals (the profiler's is %d), threads much shorter than a period, or a "
          "program that takes over the profiler's signal lose samples; `causal report` marks "
          "the profile as thin.%s",
          (unsigned long long)account.arrived, (unsigned long long)account.expected,
          (unsigned long long)account.spread,
          (unsigned long long)(account.arrived * 100 / account.expected),
          (unsigned long long)g_setup.period_ns, g_sample_signal, reasons);
}

// Median time of CAUSAL_PERF_SWITCH_PROBE_PAIRS PERF_EVENT_IOC_DISABLE and
// _ENABLE pairs on |fd|, an event of the calling thread (ns).
uint64_t medianDisableEnableNs(int fd) {
  uint64_t times[CAUSAL_PERF_SWITCH_PROBE_PAIRS];
  for (uint32_t i = 0; i < CAUSAL_PERF_SWITCH_PROBE_PAIRS; ++i) {
    uint64_t start = monotonicNs();
    ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
    ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
    times[i] = monotonicNs() - start;
  }
  std::sort(times, times + CAUSAL_PERF_SWITCH_PROBE_PAIRS);
  return times[CAUSAL_PERF_SWITCH_PROBE_PAIRS / 2];
}

// What a context switch costs a thread that a perf event samples
// (docs/runtime.md, "Threads that switch often"). Leaving its CPU, the
// kernel stops the event's timer; coming back, it starts it again: the work
// of PERF_EVENT_IOC_DISABLE and _ENABLE on the thread's own event, which
// reprograms the CPU's timer when the event's is the next to expire, as it
// is at most switches (a period of 1 ms against a tick of several). Timed
// on an event of the calling thread made for it, with a period of
// kSwitchProbePeriodNs (due before the tick but in 1/20 of the cases, and
// not due during the pairs; no signal, nothing recorded), less the same
// pairs on a counting event (the ioctls' own cost, and what a switch costs
// any event), each while |sampling_fd|, the thread's own event, is off:
// enabling one event of a thread schedules all of them out and in again.
// The medians of CAUSAL_PERF_SWITCH_PROBE_PAIRS pairs each; about 0.25 ms
// where a pair costs 12 us.
constexpr uint64_t kSwitchProbePeriodNs = 200000;

uint64_t measurePerfSwitchCost(int sampling_fd) {
  perf_event_attr attr;
  memset(&attr, 0, sizeof(attr));
  attr.size = sizeof(attr);
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_TASK_CLOCK;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  ioctl(sampling_fd, PERF_EVENT_IOC_DISABLE, 0);
  uint64_t pairs[2] = {0, 0}; // counting, sampling
  for (int sampling = 0; sampling < 2; ++sampling) {
    attr.sample_period = sampling ? kSwitchProbePeriodNs : 0;
    int fd = perfEventOpen(&attr);
    if (fd < 0)
      break;
    pairs[sampling] = medianDisableEnableNs(fd);
    ownClose(fd);
  }
  ioctl(sampling_fd, PERF_EVENT_IOC_ENABLE, 0);
  return pairs[1] > pairs[0] && pairs[0] ? pairs[1] - pairs[0] : 0;
}

// ---- What a sample costs (calibrateSampleCost) ----------------------------

// A fixed chain of dependent multiplications, |steps| long: the same work
// sampled or not (runtime code: never the program's).
__attribute__((noinline)) uint64_t costProbeWork(uint64_t steps) {
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (uint64_t i = 0; i < steps; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    asm volatile("" : "+r"(x));
  }
  return x;
}

// The calling thread's CPU time for |steps| of the probe's work.
uint64_t costProbeCpuNs(uint64_t steps) {
  uint64_t start = threadCpuNs();
  costProbeWork(steps);
  return threadCpuNs() - start;
}

// What a perf sample's delivery costs the calling thread, in ns (0: could
// not tell): CAUSAL_SAMPLE_COST_PROBE_ROUNDS rounds of the probe's work
// unsampled, then sampled by an event made like the sampler's (task clock,
// user mode, a signal per overflow) every CAUSAL_SAMPLE_COST_PROBE_PERIOD_NS;
// the median of the rounds' extra CPU time per signal. The thread is pinned
// to its CPU meanwhile (moved between CPUs, four runs read 29-43 us where
// pinned ones read 30.5-32.9 us), and the event takes a descriptor of the
// reserve, moved high (the program's open() must not see a number taken).
// The signal's handler does nothing on a thread without sampler state but
// count it (onSampleSignal): the handler's own time is measured per signal.
// Between rounds, |should_stop| may end it (*|stopped|: the program exits).
uint64_t measureSampleCost(bool (*should_stop)(), bool *stopped) {
  uint64_t floor;
  if (!takeFdFromReserve(&floor, /*quietly=*/true))
    return 0;
  perf_event_attr attr;
  memset(&attr, 0, sizeof(attr));
  attr.size = sizeof(attr);
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_TASK_CLOCK;
  attr.sample_period = CAUSAL_SAMPLE_COST_PROBE_PERIOD_NS;
  attr.disabled = 1;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  int fd = perfEventOpen(&attr);
  if (fd >= 0)
    fd = moveFdHigh(fd, floor);
  struct f_owner_ex owner = {F_OWNER_TID, currentTid()};
  if (fd < 0 || fcntl(fd, F_SETSIG, g_sample_signal) != 0 || fcntl(fd, F_SETOWN_EX, &owner) != 0 ||
      fcntl(fd, F_SETFL, O_ASYNC) != 0) {
    if (fd >= 0)
      ownClose(fd);
    giveFdToReserve();
    return 0;
  }
  cpu_set_t allowed, one;
  bool pinned = false;
  int cpu = sched_getcpu();
  if (cpu >= 0 && sched_getaffinity(0, sizeof(allowed), &allowed) == 0) {
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    pinned = sched_setaffinity(0, sizeof(one), &one) == 0;
  }
  // Steps for about a round's CPU time.
  uint64_t steps = 1u << 16;
  uint64_t trial = costProbeCpuNs(steps);
  steps = trial ? steps * CAUSAL_SAMPLE_COST_PROBE_ROUND_NS / trial : steps;
  uint64_t costs[CAUSAL_SAMPLE_COST_PROBE_ROUNDS];
  uint32_t rounds = 0;
  for (uint32_t round = 0; round < CAUSAL_SAMPLE_COST_PROBE_ROUNDS; ++round) {
    if (should_stop && should_stop()) {
      *stopped = true;
      break;
    }
    uint64_t plain = costProbeCpuNs(steps);
    __atomic_store_n(&tls_probe_signals, 0u, __ATOMIC_RELAXED);
    ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
    uint64_t sampled = costProbeCpuNs(steps);
    ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
    uint32_t signals = __atomic_load_n(&tls_probe_signals, __ATOMIC_RELAXED);
    if (signals)
      costs[rounds++] = sampled > plain ? (sampled - plain) / signals : 0;
  }
  ownClose(fd);
  giveFdToReserve();
  if (pinned)
    sched_setaffinity(0, sizeof(allowed), &allowed);
  if (!rounds || *stopped)
    return 0;
  std::sort(costs, costs + rounds);
  return costs[rounds / 2];
}

// perf for the calling thread if the descriptor reserve has room (said
// once if not, unless |quietly|: ENFILE then), else an errno value.
int startPerfWithinReserve(ThreadState *state, bool quietly) {
  uint64_t floor;
  if (!takeFdFromReserve(&floor, quietly))
    return ENFILE;
  int error = startPerf(state, floor);
  if (error)
    giveFdToReserve();
  return error;
}

SamplerKind startThreadSampling(ThreadState *state, bool is_main_thread) {
  setThreadId(state, currentTid());
  state->stack = stackOfCurrentThread(is_main_thread);
  // The reserve, or half of a stack smaller than twice that.
  uintptr_t stack_size = state->stack.end - state->stack.begin;
  state->sample_stack_floor =
      state->stack.begin + std::min<uintptr_t>(CAUSAL_SAMPLE_STACK_RESERVE_BYTES, stack_size / 2);
  threadCpuSplit(&state->cpu_base_user_ns, &state->cpu_base_total_ns,
                 &state->switch_window_switches);
  state->pause_switches = 0;
  __atomic_store_n(&state->unsampled_ns, uint64_t(0), __ATOMIC_RELAXED); // the profiler reads it
  __atomic_store_n(&state->unsampled_base_ns, uint64_t(0), __ATOMIC_RELAXED); // coveredCpu
  startLossWindow(state, state->cpu_base_user_ns, state->cpu_base_total_ns);
  state->switch_window_samples = state->samples;
  state->switch_window_cpu_ns = state->cpu_base_total_ns;
  state->sampler_moves = 0;
  state->delay_scale_x1024 = 1024;
  setLinePeriodState(state, 0);
  state->line_hits = state->cost_delay_ns = 0;
  tls_thread = state;
  if (g_sampling_ended.load(std::memory_order_acquire)) {
    state->kind = SamplerKind::None;
    return SamplerKind::None;
  }

  if (!g_sampler_decided.load(std::memory_order_acquire)) {
    // First thread (the main thread, from the constructor): decide. With no
    // room in the descriptor reserve (said), perf stays the process's
    // sampler, for later threads that may find room, and this thread uses
    // the timer (or, with CAUSAL_SAMPLER=perf, runs unsampled).
    SamplerKind chosen = SamplerKind::None;
    SamplerKind mine = SamplerKind::None;
    bool fd_room = true;
    if (g_setup.requested != SamplerKind::Timer) {
      uint64_t floor;
      fd_room = takeFdFromReserve(&floor);
      int perf_error = fd_room ? startPerf(state, floor) : 0;
      if (fd_room && !perf_error) {
        chosen = mine = SamplerKind::Perf;
        if (g_setup.requested == SamplerKind::None)
          g_perf_switch_cost_ns.store(g_setup.perf_switch_cost_ns >= 0
                                          ? uint64_t(g_setup.perf_switch_cost_ns)
                                          : measurePerfSwitchCost(state->perf_fd),
                                      std::memory_order_relaxed);
      } else if (fd_room) {
        giveFdToReserve();
        explainPerfFailure(perf_error, g_setup.requested != SamplerKind::Perf);
      } else {
        chosen = SamplerKind::Perf;
      }
    }
    if (mine == SamplerKind::None && g_setup.requested != SamplerKind::Perf) {
      int timer_error = startTimer(state);
      if (!timer_error) {
        mine = SamplerKind::Timer;
        if (chosen == SamplerKind::None)
          chosen = SamplerKind::Timer;
        g_counters.timer_threads.fetch_add(1, std::memory_order_relaxed);
      } else {
        chosen = SamplerKind::None;
        message("sampling is off: the CPU-time timer failed too: timer_create/timer_settime: %s. "
                "The program runs unprofiled.",
                strerror(timer_error));
      }
    } else if (chosen == SamplerKind::None) {
      message("sampling is off (%s=perf and perf_event is unavailable). "
              "The program runs unprofiled.",
              CAUSAL_ENV_SAMPLER);
    }
    g_process_sampler.store(chosen, std::memory_order_relaxed);
    g_sampler_decided.store(true, std::memory_order_release);
    return mine;
  }

  SamplerKind process = g_process_sampler.load(std::memory_order_relaxed);
  if (process == SamplerKind::None)
    return SamplerKind::None;
  if (process == SamplerKind::Perf) {
    int error = startPerfWithinReserve(state);
    if (!error)
      return SamplerKind::Perf;
    bool no_room = error == ENFILE; // beyond the descriptor reserve (said once)
    if (g_setup.requested == SamplerKind::Perf) {
      if (!no_room && !g_said_thread_failure.exchange(true))
        message("a thread could not start perf_event sampling (%s); it runs unsampled",
                strerror(error));
      return SamplerKind::None;
    }
    if (!no_room && !g_said_thread_fallback.exchange(true))
      message("a thread could not start perf_event sampling (%s); such threads use the "
              "CPU-time timer sampler",
              strerror(error));
  }
  int error = startTimer(state);
  if (!error) {
    g_counters.timer_threads.fetch_add(1, std::memory_order_relaxed);
    return SamplerKind::Timer;
  }
  if (!g_said_thread_failure.exchange(true))
    message("a thread could not start the CPU-time timer (%s); it runs unsampled", strerror(error));
  return SamplerKind::None;
}

void stopThreadSampling(ThreadState *state) {
  if (!state || state->kind == SamplerKind::None)
    return;
  sigset_t block, previous;
  sigemptyset(&block);
  sigaddset(&block, g_sample_signal);
  pthread_sigmask(SIG_BLOCK, &block, &previous);
  int cancel_state; // as in the handler: no cancellation inside libunwind
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
  // The samples this thread should have given (called by the thread itself).
  if (state == tls_thread) {
    uint64_t user_ns, total_ns;
    threadCpuSplit(&user_ns, &total_ns);
    bool perf = state->kind == SamplerKind::Perf;
    if (perf && cpuSplitUnknown(user_ns, total_ns)) {
      g_counters.unsplit_cpu_ns.fetch_add(cpuSinceBase(state, total_ns, &state->cpu_base_total_ns),
                                          std::memory_order_relaxed);
    } else {
      g_counters.covered_cpu_ns.fetch_add(coveredCpu(state, user_ns, total_ns),
                                          std::memory_order_relaxed);
      if (perf)
        g_counters.user_split_variance_ns.fetch_add(
            uint64_t(userTimeVariancePerTick(user_ns - state->cpu_base_user_ns,
                                             total_ns - state->cpu_base_total_ns)),
            std::memory_order_relaxed);
    }
  }
  if (state->kind == SamplerKind::Perf) {
    releasePerfEvent(state); // the signal is blocked
  } else if (state->timer_armed) {
    timer_delete(state->timer);
    state->timer_armed = false;
  }
  state->kind = SamplerKind::None;
  pthread_setcancelstate(cancel_state, nullptr);
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

// How a pause's spin suspends a perf event. PERF_EVENT_IOC_DISABLE and
// _ENABLE keep the event's progress towards its next sample, but enabling
// an event that had stopped at its limit (its POLL_HUP signal not yet
// handled) also lifts the limit until the handler re-arms it. With the
// signal deliverable that is at once (the POLL_HUP comes as the ioctl
// returns). With it blocked - a spin inside the sample handler, a thread
// ending, a program thread that blocks every signal - the event signalled
// every period with nothing to stop it: the user's whole RLIMIT_SIGPENDING
// queued and the kernel's fallback SIGIO killed the program (a test target,
// once in about 200 runs). Then the event is suspended by a period too long
// to end, and resumed by setting the period back: that never starts an
// event stopped at its limit, at the cost of a full period from the resume
// to the next sample.
constexpr uint64_t kSuspendedPeriodNs = 1000000000000000ull; // 11 days of CPU time

bool sampleSignalBlocked() {
  uint64_t mask = 0;
  if (rawSigprocmask(SIG_BLOCK, nullptr, &mask) != 0)
    return true; // cannot tell: the safe way
  return (mask & kernelSignalBit(g_sample_signal)) != 0;
}

void suspendThreadSampling(ThreadState *state) {
  if (state->kind != SamplerKind::None)
    state->suspended_at_ns = threadCpuNs(); // left out of the samples expected
  if (state->kind == SamplerKind::Perf && ownsPerfFd(state)) {
    state->suspended_by_period = sampleSignalBlocked();
    if (state->suspended_by_period) {
      uint64_t period = kSuspendedPeriodNs;
      ioctl(state->perf_fd, PERF_EVENT_IOC_PERIOD, &period);
    } else {
      ioctl(state->perf_fd, PERF_EVENT_IOC_DISABLE, 0);
    }
  } else if (state->kind == SamplerKind::Timer && state->timer_armed) {
    struct itimerspec off = {};
    timer_settime(state->timer, 0, &off, nullptr);
  }
}

void resumeThreadSampling(ThreadState *state) {
  if (state->kind != SamplerKind::None && state->suspended_at_ns) {
    uint64_t now = threadCpuNs();
    if (now > state->suspended_at_ns)
      __atomic_store_n(&state->unsampled_ns, state->unsampled_ns + (now - state->suspended_at_ns),
                       __ATOMIC_RELAXED); // the profiler thread reads it (watchThread)
    state->suspended_at_ns = 0;
  }
  if (g_sampling_ended.load(std::memory_order_relaxed))
    return; // a pause that ends after profiling ended leaves the sampler off
  if (state->kind == SamplerKind::Perf && ownsPerfFd(state)) {
    if (state->suspended_by_period) {
      uint64_t period =
          g_setup.period_ns / (state->line_period_divisor > 1 ? state->line_period_divisor : 1);
      ioctl(state->perf_fd, PERF_EVENT_IOC_PERIOD, &period);
    } else {
      ioctl(state->perf_fd, PERF_EVENT_IOC_ENABLE, 0);
    }
  } else if (state->kind == SamplerKind::Timer && state->timer_armed) {
    struct itimerspec spec;
    spec.it_interval.tv_sec = time_t(g_setup.period_ns / 1000000000ull);
    spec.it_interval.tv_nsec = long(g_setup.period_ns % 1000000000ull);
    spec.it_value = spec.it_interval;
    timer_settime(state->timer, 0, &spec, nullptr);
  }
}

void endSampling() { g_sampling_ended.store(true, std::memory_order_release); }

bool samplingEnded() { return g_sampling_ended.load(std::memory_order_acquire); }

void forgetInheritedSampler(ThreadState *state) {
  if (!state)
    return;
  if (ownsPerfFd(state))
    ownClose(state->perf_fd); // the parent's counter
  state->perf_fd = -1;
  state->timer_armed = false; // POSIX timers are not inherited
  state->kind = SamplerKind::None;
  state->in_handler = 0;
}

uint64_t perfSwitchCostNs() { return g_perf_switch_cost_ns.load(std::memory_order_relaxed); }

bool switchWindowsMayMove(const ThreadState *state) {
  return g_setup.requested == SamplerKind::None &&
         g_perf_switch_cost_ns.load(std::memory_order_relaxed) != 0 &&
         state->sampler_moves < CAUSAL_PERF_SWITCH_MOVES_MAX;
}

uint64_t threadContextSwitches() {
  struct rusage usage;
  if (getrusage(RUSAGE_THREAD, &usage) != 0)
    return 0;
  return uint64_t(usage.ru_nvcsw) + uint64_t(usage.ru_nivcsw);
}

const char *processSamplerName() {
  if (!g_sampler_decided.load(std::memory_order_acquire))
    return "none";
  switch (g_process_sampler.load(std::memory_order_relaxed)) {
  case SamplerKind::Perf:
    return "perf_event task-clock";
  case SamplerKind::Timer:
    return "timer (CLOCK_THREAD_CPUTIME_ID)";
  default:
    return "none";
  }
}

} // namespace causal::rt
