//===- runtime/ProcessEnd.cpp - Process end and signals: the profile flush -===//
//
// The profile's last block is appended once per process: at exit (an atexit
// handler, the runtime's destructor as a backup), at _exit, _Exit and
// quick_exit and before exec (their hooks, runtime/hooks/),
// and on a terminating or fatal signal left at its default (a one-shot
// handler that writes the profile and PROFILE.paths with async-signal-safe
// calls only, then lets the signal end the process as it would have). Before that, every
// CAUSAL_FLUSH_SECONDS, the part gained since the last one is appended
// (writeProfileSoFar, async-signal-safe), so that an end no code sees
// (SIGKILL) loses only the last seconds.
//
//===----------------------------------------------------------------------===//

#include "Experiment.h"
#include "Lifecycle.h"
#include "Paths.h"
#include "PathsControl.h"
#include "ProfileWriter.h"
#include "Runtime.h"
#include "Sampler.h"
#include "Waits.h"

#include "causal/tunables.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace causal::rt {

namespace {

uint64_t g_startup_realtime_ns = 0;
uint64_t g_startup_monotonic_ns = 0;
std::atomic<bool> g_profile_written{false};
pid_t g_pid = 0; // to recognize a vfork child (no atfork handlers)

// ---- The run in parts (the periodic flush) ----------------------------------

// The thread writing a part of the profile (its tid; 0: none): parts, the
// last block and the fatal-signal writer share the counts written so far
// (ModuleRegistry::takeCountToWrite) and the signal-safe writer's buffer.
std::atomic<long> g_part_writer{0};
uint32_t g_parts_written = 0; // parts of this run in the profile
// When the next part is due (CLOCK_MONOTONIC ns); UINT64_MAX: no flush.
std::atomic<uint64_t> g_next_part_ns{UINT64_MAX};
char g_run_id[48];                // "PID-STARTUP_NS": names the run in each of its parts
std::atomic<int> g_part_error{0}; // the first errno of a part not written
std::atomic<uint32_t> g_parts_failed{0};

long currentTid() { return rawSyscall(SYS_gettid); }

// ---- Bounded profiling (CAUSAL_DURATION_SECONDS, CAUSAL_STOP_FILE) -----------

uint64_t g_end_deadline_ns = UINT64_MAX; // CLOCK_MONOTONIC; UINT64_MAX: none
uint64_t g_next_stop_check_ns = 0;       // the stop file is looked for then
std::atomic<bool> g_ended_early{false};  // the profile was written before the end

/// Takes the right to write a part. |wait_ns|: how long to wait for another
/// thread that writes one (0: do not wait). False if the calling thread is
/// the one writing (a signal interrupted it) or the wait ran out.
bool takePartWriter(uint64_t wait_ns) {
  long self = currentTid();
  uint64_t waited = 0;
  for (;;) {
    long none = 0;
    if (g_part_writer.compare_exchange_strong(none, self, std::memory_order_acquire))
      return true;
    if (none == self || waited >= wait_ns)
      return false;
    rawSleepNs(CAUSAL_PROFILER_POLL_NS);
    waited += CAUSAL_PROFILER_POLL_NS;
  }
}
void releasePartWriter() { g_part_writer.store(0, std::memory_order_release); }

void startRunInParts() {
  g_parts_written = 0;
  g_part_error.store(0);
  g_parts_failed.store(0);
  char *out = g_run_id;
  formatTo(out, sizeof(g_run_id), "%d-%llu", int(g_pid), (unsigned long long)g_startup_realtime_ns);
  uint64_t period_ns = g_config.flush_seconds * 1000000000ull;
  g_next_part_ns.store(period_ns ? g_startup_monotonic_ns + period_ns : UINT64_MAX);
  g_end_deadline_ns = g_config.duration_seconds
                          ? g_startup_monotonic_ns + g_config.duration_seconds * 1000000000ull
                          : UINT64_MAX;
  g_next_stop_check_ns = 0;
}

/// The block to append now: the experiments, the counts and which part of
/// the run it is (the first part of a run in parts names the run: a run
/// that ends before its first flush is one block, as without the flush).
ProfileBlock blockNow(const char *experiments, size_t experiments_size, bool last,
                      const SampleAccount &account) {
  ProfileBlock block;
  block.startup_realtime_ns = g_startup_realtime_ns;
  block.runtime_ns = monotonicNs() - g_startup_monotonic_ns;
  block.experiments = experiments;
  block.experiments_size = experiments_size;
  block.sample_period_ns = g_config.period_ns;
  const SampleCounters &counters = sampleCounters();
  block.samples_outside = counters.outside.load();
  block.samples_attributed = counters.attributed.load();
  block.samples_expected = account.expected;
  block.samples_expected_spread = account.spread;
  block.samples_arrived = account.arrived;
  block.timer_samples = counters.timer_samples.load();
  block.first = g_parts_written == 0;
  block.last = last;
  block.run_id = last && block.first ? nullptr : g_run_id;
  block.take_context_samples = takeContextSamples;
  return block;
}

/// After appending a block: a part written counts; a part lost makes the
/// next one write every line again.
void noteBlockWritten(int error) {
  if (!error) {
    ++g_parts_written;
    return;
  }
  g_modules.forgetWrittenCounts();
  forgetContextSamplesWritten();
  int none = 0;
  g_part_error.compare_exchange_strong(none, error);
  g_parts_failed.fetch_add(1);
}

void sayWhatHappened(const SampleAccount &account) {
  const SampleCounters &counters = sampleCounters();
  uint64_t signals = counters.signals.load();
  uint64_t handler_ns = counters.handler_ns.load();
  message("samples: %llu charged to lines, %llu outside instrumented code, %llu profiler "
          "overhead (dropped), %llu near the end of a stack (dropped); %llu sample signals "
          "handled, %.2f us of CPU each on average; profile appended to %s",
          (unsigned long long)counters.attributed.load(),
          (unsigned long long)counters.outside.load(), (unsigned long long)counters.overhead.load(),
          (unsigned long long)counters.near_stack_end.load(), (unsigned long long)signals,
          signals ? double(handler_ns) / double(signals) / 1000.0 : 0.0, g_config.output_path);
  message("samples expected from the sampled threads' CPU time: %llu (give or take %llu), "
          "arrived: %llu (%llu "
          "threads sampled with the CPU-time timer, %llu of them moved from perf_event as they "
          "switched often, %llu moves back to perf_event once they switched less); sample "
          "signal %d",
          (unsigned long long)account.expected, (unsigned long long)account.spread,
          (unsigned long long)account.arrived, (unsigned long long)counters.timer_threads.load(),
          (unsigned long long)counters.moved_to_timer.load(),
          (unsigned long long)counters.moved_back.load(), sampleSignal());
  message(
      "experiments: %llu ns of delay inserted (global count), %llu ns paused by all "
      "threads (%llu ns of it runnable, competing for a CPU; %llu ns of CPU time spinning), %llu "
      "ns spent in end-of-experiment drains; %u progress points",
      (unsigned long long)g_experiment.global_delay_ns.load(),
      (unsigned long long)g_paused_ns.load(), (unsigned long long)g_spun_ns.load(),
      (unsigned long long)g_spun_cpu_ns.load(), (unsigned long long)g_drain_ns.load(),
      g_progress.size());
  message("pauses: %llu, %llu of them spinning while competing for a CPU, %llu spinning on a CPU "
          "that would idle, %llu sleeping where other processes wanted the CPUs; %llu context "
          "switches in pauses, not counted as their threads' own",
          (unsigned long long)g_pause_counts.all.load(),
          (unsigned long long)g_pause_counts.competing.load(),
          (unsigned long long)g_pause_counts.on_idle_cpu.load(),
          (unsigned long long)g_pause_counts.beside_other_processes.load(),
          (unsigned long long)g_pause_switches.load());
  uint64_t timed = g_latency_windows_timed.load(), sampled = g_latency_windows_sampled.load();
  if (timed + sampled)
    message("latency windows: %llu, %llu of them timed by their visits, %llu from the in-flight "
            "count sampled every %.1f ms (visits that did not go through the runtime)",
            (unsigned long long)(timed + sampled), (unsigned long long)timed,
            (unsigned long long)sampled, CAUSAL_PROFILER_POLL_NS / 1e6);
}

void writeSampleLog() {
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

void atExitHandler() { writeProfileOnce(); }

__attribute__((destructor)) void runtimeDestructor() { writeProfileOnce(); }

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
    if (takePartWriter(CAUSAL_PART_WAIT_NS)) {
      size_t size = 0;
      const char *experiments = peekPendingRecords(&size);
      appendProfileSignalSafe(g_config.output_path, g_modules,
                              blockNow(experiments, size, true, accountSamples(g_threads)));
      releasePartWriter();
    }
    writePathsOnSignal(); // PROFILE.paths: the whole run, its entries under way as ended now
  }
  pathsControlEnds(); // the live control's file goes with the process (signal-safe)
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
  if (sampleSignal())
    sigaddset(&action.sa_mask, sampleSignal());
  sigaction(signal, &action, nullptr);
}

} // namespace

void startProfileClock() {
  g_startup_realtime_ns = realtimeNs();
  g_startup_monotonic_ns = monotonicNs();
  g_pid = getpid();
}

void startProfileParts() { startRunInParts(); }

void profileForkChild() {
  g_startup_realtime_ns = realtimeNs();
  g_startup_monotonic_ns = monotonicNs();
  g_profile_written.store(false);
  g_pid = getpid();
  g_part_writer.store(0); // a parent's writer does not exist here
  startRunInParts();
}

bool writeProfileSoFar() {
  if (g_status.load(std::memory_order_acquire) != kActive ||
      g_profile_written.load(std::memory_order_acquire) || (g_pid && getpid() != g_pid))
    return false;
  if (!takePartWriter(0))
    return false;
  bool written = false;
  if (!g_profile_written.load(std::memory_order_acquire)) {
    int saved_errno = errno;
    int error;
    {
      ModuleTablesRead reading(g_modules); // an image unloaded meanwhile waits for the part
      const char *experiments = nullptr;
      size_t size = 0;
      // Not borrowed (the experiment thread appends to them): they go into a
      // later part.
      bool borrowed = borrowPendingRecords(&experiments, &size);
      error =
          appendProfileSignalSafe(g_config.output_path, g_modules,
                                  blockNow(experiments, size, false, accountSamples(g_threads)));
      if (borrowed)
        returnPendingRecords(/*written=*/!error);
    }
    noteBlockWritten(error);
    written = !error;
    errno = saved_errno;
  }
  releasePartWriter();
  return written;
}

void writeProfileIfDue() {
  uint64_t due = g_next_part_ns.load(std::memory_order_relaxed);
  if (due == UINT64_MAX)
    return;
  // The profiler thread writes the parts while it runs (a program thread's
  // sample handler does when there is none): not the program's time.
  if (profilerThreadRunning() && !isProfilerThread())
    return;
  uint64_t now = monotonicNs();
  if (now < due ||
      !g_next_part_ns.compare_exchange_strong(due, now + g_config.flush_seconds * 1000000000ull))
    return;
  writeProfileSoFar();
  // PROFILE.paths whole again, by the profiler thread only (its writer is
  // not signal-safe: without a profiler thread the paths wait for the end).
  if (isProfilerThread())
    writePaths(false);
}

bool profilingBounded() { return g_config.duration_seconds || g_config.stop_file[0]; }

bool profilingShouldEnd() {
  uint64_t now = monotonicNs();
  if (now >= g_end_deadline_ns)
    return true;
  if (!g_config.stop_file[0] || now < g_next_stop_check_ns)
    return false;
  g_next_stop_check_ns = now + CAUSAL_STOP_FILE_POLL_NS;
  // A system call of our own: the program's access() may be hooked (--waits).
  return rawSyscall(SYS_faccessat, AT_FDCWD, reinterpret_cast<long>(g_config.stop_file), F_OK) == 0;
}

void endProfilingEarly() {
  if (g_status.load(std::memory_order_acquire) != kActive ||
      g_profile_written.load(std::memory_order_acquire) || (g_pid && getpid() != g_pid))
    return;
  // No thread samples from now on (each turns its sampler off at its next
  // signal); the running experiment was ended and recorded by the caller.
  endSampling();
  g_ended_early.store(true, std::memory_order_release);
  uint64_t elapsed_ns = monotonicNs() - g_startup_monotonic_ns;
  writeProfileOnce();
  if (g_config.verbose)
    message("profiling ended after %.1f s (%s); the program continues unprofiled",
            double(elapsed_ns) / 1e9,
            monotonicNs() >= g_end_deadline_ns ? CAUSAL_ENV_DURATION : CAUSAL_ENV_STOP_FILE);
}

bool profilingEndedEarly() { return g_ended_early.load(std::memory_order_acquire); }

void registerExitWriter() { atexit(atExitHandler); }

void installFatalSignalHandlers() {
  for (int signal : kFatalSignals)
    installFatalSignalHandler(signal);
  for (int signal : kTerminatingSignals)
    installFatalSignalHandler(signal);
}

void writeProfileOnce() {
  if (g_status.load(std::memory_order_acquire) != kActive)
    return;
  if (g_profile_written.exchange(true)) {
    // Bounded profiling's end may be writing it on the profiler thread:
    // the process does not end before it is written (stopExperiments waits
    // for the thread).
    if (g_ended_early.load(std::memory_order_acquire))
      stopExperiments();
    return;
  }
  // End the running experiment (it is recorded) and the profiler thread.
  stopExperiments();
  finishWaits(); // PROFILE.waits: what is buffered, the threads, the run's end
  // Stop sampling the exiting thread: the writing below is the profiler's
  // time, not the program's.
  if (ThreadState *self = tls_thread)
    stopThreadSampling(self);
  writePaths(true); // PROFILE.paths: the whole run, its entries under way as ended now
  // A part being written by another thread is finished first; this thread
  // (a signal that interrupted its own part) writes after it all the same.
  bool writer = takePartWriter(CAUSAL_PART_WAIT_NS);
  SampleAccount account = accountSamples(g_threads);
  TextBuffer experiments;
  takePendingRecords(&experiments);
  TextBuffer block;
  const SampleCounters &counters = sampleCounters();
  uint64_t outside = counters.outside.load();
  renderProfile(g_modules, blockNow(experiments.data(), experiments.size(), true, account), &block);
  if (block.failed())
    message("out of memory while rendering the profile; nothing written");
  else if (int error = appendToFile(g_config.output_path, block.data(), block.size()))
    message("cannot write the profile to %s: %s", g_config.output_path, strerror(error));
  if (writer)
    releasePartWriter();
  if (uint32_t failed = g_parts_failed.load())
    message("%u periodic write%s of the profile to %s failed (%s): a process killed before its "
            "end would have lost more",
            failed, failed == 1 ? "" : "s", g_config.output_path, strerror(g_part_error.load()));

  if (g_sample_log.enabled())
    writeSampleLog();
  if (g_config.verbose)
    sayWhatHappened(account);
  sayIfSamplesWereLost(account);
  // A few samples: a start-up too short to tell (each thread's first period
  // is a random share of the period, so even a tiny program may get one in
  // the loader's or the C library's code).
  if (outside >= CAUSAL_MIN_OUTSIDE_SAMPLES_TO_WARN && counters.attributed.load() == 0)
    message("no sample landed in instrumented code (%llu outside it): was the code compiled "
            "with -fcausal-profile?",
            (unsigned long long)outside);
}

void flushProfileBeforeExec() {
  // A vfork child shares our memory and runs no atfork handler: writing
  // here would mark the parent's profile as written. Leave it to the parent.
  if (g_pid && getpid() != g_pid)
    return;
  writeProfileOnce();
}

// _exit and _Exit, called by the program (or a library) through the C
// library, end the process without atexit handlers; the profile is written
// first all the same, as exit writes it, and the status is the program's.
// exit's own end, and posix_spawn's child, call the C library's internal
// _exit, which does not come here; a vfork child writes nothing (as for
// exec). Never returns.
[[noreturn]] void exitProcessNow(int status) {
  flushProfileBeforeExec();
  for (;;) {
    rawSyscall(SYS_exit_group, status);
    rawSyscall(SYS_exit, status);
  }
}

} // namespace causal::rt
