//===- runtime/Experiment.cpp - Causal experiments and virtual speedup ----===//

#include "Experiment.h"
#include "Lifecycle.h"

#include "ExperimentPolicy.h"
#include "FastClock.h"
#include "Paths.h"
#include "PathsControl.h"
#include "ProfileWriter.h"
#include "Sampler.h"
#include "SpinLock.h"
#include "WaitTargets.h"

#include "causal/tunables.h"

static_assert(CAUSAL_MAX_MODULES <= (1u << (causal::rt::kContextShift - 32)),
              "a module slot stays below a target's context bits (ExperimentPolicy.h)");

#include <algorithm>
#include <cmath>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

// The flag the pass's inline check at progress points reads (abi.h): nonzero
// exactly while g_experiment.active is.
extern "C" {
CAUSAL_RT_EXPORT uint32_t __causal_delays_active = 0;
}

namespace causal::rt {

ExperimentGlobals g_experiment;
ProgressRegistry g_progress;
std::atomic<uint64_t> g_paused_ns{0};
std::atomic<uint64_t> g_drain_ns{0};
std::atomic<uint64_t> g_spun_ns{0};
std::atomic<uint64_t> g_spun_cpu_ns{0};
PauseCounts g_pause_counts;
std::atomic<uint64_t> g_pause_switches{0};
std::atomic<uint64_t> g_latency_windows_timed{0}, g_latency_windows_sampled{0};
// Over the last experiment (or the saturation probe): the CPUs available
// less the time the process's threads were on a CPU or waiting for one, and
// the window's length (spinIsHarmless; 0 until then).
std::atomic<int64_t> g_spare_cpu_ns{0};
std::atomic<uint64_t> g_spare_window_ns{0};
// The CPUs the process may use, as of the last experiment's start (or the
// saturation probe); 0 until then (cpuWouldIdle).
std::atomic<uint32_t> g_process_cpus{0};
// Whether the last experiment's threads waited for CPUs that other processes
// held (then selected samples are scaled by their thread's CPU share, and no
// CPU a pause leaves would idle).
std::atomic<bool> g_process_waits_for_others{false};

namespace {

// Given once at start-up (setupExperiments); constant afterwards.
ExperimentSetup g_setup;
std::atomic<bool> g_setup_done{false};

void setExperimentActive(uint32_t active) {
  g_experiment.active.store(active, std::memory_order_release);
  __atomic_store_n(&__causal_delays_active, active, __ATOMIC_RELEASE);
}

std::atomic<uint32_t> g_thread_started{0};
std::atomic<uint32_t> g_thread_launching{0}; // once per process (reset in a fork child)
std::atomic<uint32_t> g_stop_requested{0};
std::atomic<uint32_t> g_end_requested{0}; // bounded profiling ended (doPollStepChores)
std::atomic<uint32_t> g_thread_stopped{0};
pthread_t g_profiler_thread;
__thread bool tls_is_profiler CAUSAL_RT_TLS = false;

// ---- Pending records: an mmap'd buffer (no malloc: readable from a fatal
// signal handler), guarded by a spin lock.
SpinLock g_pending_lock;
char *g_pending = nullptr;
size_t g_pending_size = 0;
size_t g_pending_capacity = 0;
constexpr size_t kPendingInitialBytes = 65536;

void lockPending() { g_pending_lock.lock(); }
void unlockPending() { g_pending_lock.unlock(); }

void appendPending(const char *text, size_t size) {
  lockPending();
  if (g_pending_size + size > g_pending_capacity) {
    size_t capacity = g_pending_capacity ? g_pending_capacity : kPendingInitialBytes;
    while (capacity < g_pending_size + size)
      capacity *= 2;
    void *grown = g_pending ? mremap(g_pending, g_pending_capacity, capacity, MREMAP_MAYMOVE)
                            : mmap(nullptr, capacity, PROT_READ | PROT_WRITE,
                                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (grown == MAP_FAILED) {
      unlockPending();
      return; // the experiment is lost, the run goes on
    }
    g_pending = static_cast<char *>(grown);
    g_pending_capacity = capacity;
  }
  memcpy(g_pending + g_pending_size, text, size);
  g_pending_size += size;
  unlockPending();
}

// ---- Pausing ------------------------------------------------------------

// What the scheduler did with the calling thread since its last reading.
struct SchedWindow {
  uint64_t cpu_ns = 0, wait_ns = 0; // this window's CPU and run-queue time
  bool competing = false;           // the thread recently waited for a CPU
};

// Whether the calling thread competes for a CPU, from its schedstat (read
// with open, read, close: signal-safe, about 15 us here, so at most once
// every CAUSAL_SCHEDSTAT_SAMPLES samples of the thread; between readings
// the last answer holds).
SchedWindow observeScheduler(ThreadState *state) {
  SchedWindow window;
  if (state->sched_read && state->samples < state->sched_next_samples) {
    window.competing = state->competing;
    return window;
  }
  state->sched_next_samples = state->samples + CAUSAL_SCHEDSTAT_SAMPLES;
  SchedStat now;
  if (!readSchedStat(0, &now))
    return window; // no schedstat: behave as with a CPU of its own
  // The first reading counts from zero: a thread's schedstat starts at its
  // creation, so a short-lived thread (a pool of 128 threads of 10 ms each
  // has a dozen samples per thread) is classified at its first delay, not
  // CAUSAL_SCHEDSTAT_SAMPLES samples later.
  if (now.cpu_ns >= state->sched.cpu_ns && now.wait_ns >= state->sched.wait_ns) {
    window.cpu_ns = now.cpu_ns - state->sched.cpu_ns;
    window.wait_ns = now.wait_ns - state->sched.wait_ns;
  }
  state->sched = now;
  state->sched_read = true;
  window.competing = updateCompetition(&state->recent_cpu_ns, &state->recent_wait_ns, window.cpu_ns,
                                       window.wait_ns);
  state->competing = window.competing;
  return window;
}

// Whether a CPU this thread (|self|) leaves while it pauses would idle: the
// last experiment's threads did not wait for CPUs other processes held, and
// fewer of the program's other threads are outside blocking calls than the
// process has CPUs besides this one's. Threads in a call that the hooks do
// not see count as runnable, so the answer errs towards no.
bool cpuWouldIdle(const ThreadState *self) {
  uint32_t cpus = g_process_cpus.load(std::memory_order_relaxed);
  if (cpus == 0 || !g_setup.threads || g_process_waits_for_others.load(std::memory_order_relaxed))
    return false;
  uint32_t runnable = 0;
  for (uint32_t i = 0, used = g_setup.threads->slotsUsed(); i < used; ++i) {
    const ThreadState *state = g_setup.threads->slot(i);
    if (!state || state == self || !state->in_use.load(std::memory_order_relaxed) ||
        threadId(state) == 0 || state->blocking_calls.load(std::memory_order_relaxed) != 0)
      continue;
    if (!spinLeavesCpuIdle(++runnable, cpus))
      return false;
  }
  return true;
}

// Counts a pause that sleeps (all of it, or the rest of a spin) because the
// last experiment's threads waited for CPUs other processes held.
void countPauseBesideOtherProcesses() {
  if (g_process_waits_for_others.load(std::memory_order_relaxed))
    g_pause_counts.beside_other_processes.fetch_add(1, std::memory_order_relaxed);
}

// Pauses |ns| less the carried overshoot; keeps the new overshoot. A thread
// with a CPU of its own sleeps, and spins (its sampler stopped) the last
// CAUSAL_PAUSE_SPIN_NS: a sleep ends 0.1-0.3 ms late on the VMs we measured,
// and a pause that long inside a latency window, or while a waiter waits for
// the thread, is time that no delay accounts for (the overshoot is carried
// to the next pause, which may come after the window has closed). It spins
// only while the other threads leave a CPU free (spinIsHarmless): else the
// spin takes the CPU from a thread that would have run, and it sleeps. A thread
// that competes for a CPU spins throughout: sleeping would hand its share of
// the CPUs to other threads, which the virtual speedup must delay too
// (docs/runtime.md, "When threads outnumber CPUs"). One that may spin spins
// all of it while the CPU would otherwise idle (cpuWouldIdle), yielding at
// every turn.
void pause(ThreadState *state, uint64_t ns, bool competing) {
  PausePlan plan = planPause(ns, state->excess_delay_ns);
  state->excess_delay_ns = plan.excess_left_ns;
  if (!plan.sleep_ns)
    return;
  uint64_t begin = monotonicNs();
  uint64_t elapsed = 0;
  uint64_t spin_from = plan.sleep_ns; // no CPU to spare: sleeps all of it
  // Spins all of it, as long as no other thread would run on the CPU: a
  // sleep leaves the CPU idle, and waking an idle vCPU makes the thread's
  // next timer late (docs/runtime.md, "pauses on CPUs that would idle").
  bool whole = false;
  if (competing) {
    spin_from = 0;
  } else if (spinIsHarmless(g_spare_cpu_ns.load(std::memory_order_relaxed),
                            __atomic_load_n(&state->window_runnable_ns, __ATOMIC_RELAXED),
                            g_spare_window_ns.load(std::memory_order_relaxed))) {
    spin_from = plan.sleep_ns > CAUSAL_PAUSE_SPIN_NS ? plan.sleep_ns - CAUSAL_PAUSE_SPIN_NS : 0;
    whole = spin_from != 0 && cpuWouldIdle(state);
    if (spin_from != 0 && !whole)
      countPauseBesideOtherProcesses();
  }
  g_pause_counts.all.fetch_add(1, std::memory_order_relaxed);
  if (competing)
    g_pause_counts.competing.fetch_add(1, std::memory_order_relaxed);
  else if (whole)
    g_pause_counts.on_idle_cpu.fetch_add(1, std::memory_order_relaxed);
  uint64_t spun_cpu_ns = 0;
  // Its switches, when it sleeps or yields and a switch window may look at
  // them: the profiler's, not the thread's own (Sampler.cpp, closeSwitchWindow).
  bool count_switches = (whole || spin_from != 0) && switchWindowsMayMove(state);
  uint64_t switches_before = count_switches ? threadContextSwitches() : 0;
  if (whole) { // until the pause ends or another thread could use the CPU
    suspendThreadSampling(state);
    uint64_t cpu_begin = threadCpuNs();
    uint64_t checked = 0;
    while (elapsed < plan.sleep_ns) {
      // A thread woken meanwhile onto this CPU runs at once: it still
      // counts as blocked until it returns from its call, which it could not
      // while this one held the CPU.
      sched_yield();
      elapsed = monotonicNs() - begin;
      if (elapsed - checked >= CAUSAL_PAUSE_IDLE_CHECK_NS && elapsed < spin_from) {
        checked = elapsed;
        if (!cpuWouldIdle(state)) {
          countPauseBesideOtherProcesses();
          break;
        }
      }
    }
    spun_cpu_ns = threadCpuNs() - cpu_begin;
    resumeThreadSampling(state);
    elapsed = monotonicNs() - begin; // the resume is part of the pause (below)
  }
  // Not the interposed nanosleep; a signal that cuts it short sleeps again
  // (payOwedDelaysBeforeBlocking tells the program's signals apart).
  while (elapsed < spin_from) {
    rawSleepNs(spin_from - elapsed);
    elapsed = monotonicNs() - begin;
  }
  if (elapsed < plan.sleep_ns) {
    suspendThreadSampling(state);
    uint64_t cpu_begin = threadCpuNs();
    while (elapsed < plan.sleep_ns) {
      __builtin_ia32_pause();
      elapsed = monotonicNs() - begin;
    }
    spun_cpu_ns += threadCpuNs() - cpu_begin;
    resumeThreadSampling(state);
    // The resume is part of the pause (an ioctl or a timer_settime, 6-12 us
    // on these VMs, about as long as the suspend, which the spin already
    // counts): left out, every spinning pause overran by it unaccounted.
    elapsed = monotonicNs() - begin;
  }
  if (count_switches) {
    uint64_t switches = threadContextSwitches();
    if (switches > switches_before) {
      state->pause_switches += switches - switches_before;
      g_pause_switches.fetch_add(switches - switches_before, std::memory_order_relaxed);
    }
    elapsed = monotonicNs() - begin;
  }
  g_spun_cpu_ns.fetch_add(spun_cpu_ns, std::memory_order_relaxed);
  if (competing)
    g_spun_ns.fetch_add(elapsed, std::memory_order_relaxed);
  state->excess_delay_ns = elapsed - plan.sleep_ns;
  state->paused_ns += elapsed;
  g_paused_ns.fetch_add(elapsed, std::memory_order_relaxed);
  // Inside a chosen function (--paths): not the function's time.
  if (state->path_depth != 0) {
    __atomic_store_n(&state->path_paused_ns, state->path_paused_ns + elapsed, __ATOMIC_RELAXED);
    __atomic_store_n(&state->path_paused_cpu_ns, state->path_paused_cpu_ns + spun_cpu_ns,
                     __ATOMIC_RELAXED);
  }
}

// Raises the global count to at least |value|.
void raiseGlobal(uint64_t value) { raiseGlobalDelay(value); }

// ---- Profiler thread ----------------------------------------------------

// The runtime's own sleeps never go through the interposed nanosleep.
void sleepNs(uint64_t ns) {
  uint64_t end = monotonicNs() + ns;
  for (uint64_t now = monotonicNs(); now < end; now = monotonicNs())
    rawSleepNs(end - now);
}

bool stopping() { return g_stop_requested.load(std::memory_order_acquire) != 0; }

// What the profiler thread does at every poll step, so that a long
// experiment does not hold it back: the periodic flush (ProcessEnd.cpp), a
// part of the profile when one is due; the waits clock's re-anchoring when
// its anchor is due (FastClock.h: a program thread that finds it due does
// it too, so this spares the program's threads most of them); the end of
// bounded profiling.
void doPollStepChores() {
  if (g_setup.write_profile_if_due)
    g_setup.write_profile_if_due();
  pollPathsControl(); // `causal paths enable|disable|top --pid`
  tickFastClock();
  // Bounded profiling: the end stops the experiments like the program's end.
  if (g_setup.bounded && !g_end_requested.load(std::memory_order_relaxed) &&
      g_setup.profiling_should_end()) {
    g_end_requested.store(1, std::memory_order_relaxed);
    g_stop_requested.store(1, std::memory_order_release);
  }
}

// Sleeps |ns| in poll steps; false if asked to stop meanwhile.
bool waitNs(uint64_t ns) {
  uint64_t end = monotonicNs() + ns;
  for (;;) {
    if (stopping())
      return false;
    doPollStepChores();
    uint64_t now = monotonicNs();
    if (now >= end)
      return true;
    uint64_t step = end - now;
    sleepNs(step < CAUSAL_PROFILER_POLL_NS ? step : CAUSAL_PROFILER_POLL_NS);
  }
}

// The profiler thread reads images' line tables (file names, lines) as the
// sample handlers do: counted as a reader, so that an image unloaded meanwhile
// (dlclose) waits until it is done (ModuleRegistry::unregisterModule). Without
// it, choosing a line while the program dlclosed a library read the unmapped
// table (faults/dlopen-dlclose.test's plain run crashed 5 times in 60).

// Call inside a ModuleTablesRead: the name lives in the image's table.
const char *lineFile(uint64_t packed, uint32_t *line_number) {
  packed = lineOfTarget(packed); // a wait target's line
  uint32_t module = uint32_t(packed >> 32), line = uint32_t(packed);
  if (module >= g_setup.modules->slotsUsed() || !g_setup.modules->isActive(module))
    return nullptr;
  const causal_linetab_header *table = g_setup.modules->table(module);
  if (!table || line >= table->num_lines)
    return nullptr;
  const causal_linetab_line &entry = causal_linetab_lines(table)[line];
  *line_number = entry.line;
  return causal_linetab_file(table, entry.file_index);
}

bool inScope(uint64_t packed) {
  ModuleTablesRead reading(*g_setup.modules);
  uint32_t line_number;
  const char *file = lineFile(packed, &line_number);
  if (!file)
    return false;
  const ExperimentConfig &c = g_setup.config;
  if (c.binary_scope[0] &&
      !matchesAnyGlob(c.binary_scope, g_setup.modules->path(uint32_t(lineOfTarget(packed) >> 32))))
    return false;
  return c.scope[0] ? matchesAnyGlob(c.scope, file) : inDefaultSourceScope(file);
}

uint64_t findFixedLine() {
  ModuleTablesRead reading(*g_setup.modules);
  const ExperimentConfig &c = g_setup.config;
  for (uint32_t module = 0, used = g_setup.modules->slotsUsed(); module < used; ++module) {
    if (!g_setup.modules->isActive(module))
      continue;
    const causal_linetab_header *table = g_setup.modules->table(module);
    if (!table)
      continue;
    const causal_linetab_line *lines = causal_linetab_lines(table);
    for (uint32_t i = 0; i < table->num_lines; ++i) {
      if (lines[i].line != c.fixed_line)
        continue;
      const char *file = causal_linetab_file(table, lines[i].file_index);
      if (file && pathMatchesFixedFile(file, c.fixed_file))
        return packLine(module, i);
    }
  }
  return kNoLine;
}

// Free experiments of this run so far, and those on wait targets; choices
// of a line in a calling context (profiler thread only).
uint64_t g_free_experiments = 0;
uint64_t g_wait_experiments = 0;
uint64_t g_context_choices = 0;

// Waits for the line of the next experiment; kNoLine if stopping.
uint64_t chooseLine() {
  const ExperimentConfig &c = g_setup.config;
  bool said_missing = false;
  uint64_t waited = 0;
  uint32_t waits_put_back = 0;
  for (;;) {
    if (stopping())
      return kNoLine;
    if (c.has_fixed_line) {
      uint64_t line = findFixedLine();
      // A fixed wait is known once a wait there showed its kind
      // (WaitTargets.h), unless CAUSAL_FIXED_WAIT named it.
      if (line != kNoLine && c.fixed_is_wait)
        line = fixedWaitTarget(line);
      if (line != kNoLine && c.fixed_path[0]) // its samples under the caller only
        line = packContext(line, kFixedPathContext);
      if (line != kNoLine)
        return line;
      if (!said_missing && waited > CAUSAL_FIXED_LINE_MISSING_NS && g_setup.verbose) {
        message("%s %s:%u: no such line in the instrumented images (yet)",
                c.fixed_is_wait ? "--fixed-wait" : "--fixed-line", c.fixed_file, c.fixed_line);
        said_missing = true;
      }
    } else {
      uint64_t candidate = g_experiment.candidate.exchange(kNoLine, std::memory_order_acquire);
      if (candidate != kNoLine) {
        // The next choice draws from the samples taken from now on.
        g_experiment.candidate_weight.store(0, std::memory_order_relaxed);
        // Wait targets get at most their share of the experiments
        // (CAUSAL_WAIT_TARGET_MAX_SHARE_PERCENT); over it, one is put back,
        // unless nothing but waits came for a while (a program that hardly
        // runs on a CPU).
        bool wait = waitTargetOf(candidate) != WaitTarget::None;
        bool over_share = wait &&
                          g_wait_experiments * 100 >
                              uint64_t(CAUSAL_WAIT_TARGET_MAX_SHARE_PERCENT) * g_free_experiments &&
                          ++waits_put_back <= CAUSAL_WAIT_TARGET_MAX_PUT_BACK;
        if (inScope(candidate) && !over_share) {
          g_free_experiments++;
          g_wait_experiments += wait;
          // A line in a calling context (--path-experiments): every other
          // such choice is the whole line, so that each caller's curve and
          // the line's own accumulate.
          if (contextOf(candidate) && (g_context_choices++ & 1))
            candidate = withoutContext(candidate);
          return candidate;
        }
        // Rejected: draw again from the samples that follow. Rejection
        // keeps the choice proportional to samples among in-scope lines.
      }
    }
    doPollStepChores();
    sleepNs(CAUSAL_PROFILER_POLL_NS);
    waited += CAUSAL_PROFILER_POLL_NS;
  }
}

struct PointSnapshot {
  LatencyCounts counts;  // begins: the point's arrivals, ends: its departures
  double in_flight_area; // integral of (begins - ends) dt, in count x ns
};
PointSnapshot g_snapshots[CAUSAL_MAX_PROGRESS_POINTS];

void integrateInFlight(uint32_t points, uint64_t dt) {
  for (uint32_t p = 0; p < points; ++p) {
    if (g_progress.kind(p) != PointKind::Latency)
      continue;
    g_snapshots[p].in_flight_area += double(g_progress.inFlight(p)) * double(dt);
  }
}

// A latency point's visits as an experiment's end found them: the visit
// sums taken as the flag fell and the point's counters read right after
// (latencyWindow).
struct LatencyEnd {
  LatencySums sums;
  LatencyCounts counts;
};
LatencyEnd g_latency_ends[CAUSAL_MAX_PROGRESS_POINTS];

// Visits per second of each throughput point in the last experiment (0
// before the first: its visits are timed).
double g_visit_rates[CAUSAL_MAX_PROGRESS_POINTS];

uint64_t maxTimedVisits(uint64_t length_ns) {
  double visits = CAUSAL_MAX_TIMED_VISITS_PER_SECOND * double(length_ns) / 1e9;
  return visits < 64 ? 64 : uint64_t(visits);
}

// A throughput point's visit times and count at the end of the experiment.
ProgressRegistry::VisitTimes g_end_times[CAUSAL_MAX_PROGRESS_POINTS];
uint64_t g_end_arrivals[CAUSAL_MAX_PROGRESS_POINTS];

// The span, gap squares and number of a throughput point's timed visits
// (profile_records.def), when the point's |arrivals| visits were timed: all
// of them, up to the one or two that may race the window's start or end (a
// thread between its visit's timing and its increment). Nothing otherwise
// (visits from code built without the pass, a point visited too often to be
// timed). The visits were timed in virtual time without the shared-CPU
// delay, which is settled only now (|virtual_end| long, |duration| with
// it): the times are scaled to the experiment's duration, that delay being
// spread over the window like the CPU capacity it stands for.
void visitTimesOf(const ProgressRegistry::VisitTimes &times, uint64_t arrivals, int64_t virtual_end,
                  uint64_t duration, records::ThroughputPoint &point) {
  if (times.timed == ProgressRegistry::kIncompleteTimes || times.timed < 2 ||
      times.timed + kRacingVisits < arrivals || times.timed > arrivals + kRacingVisits ||
      times.last_ns <= times.first_ns || virtual_end <= 0)
    return;
  double scale = std::min(1.0, double(duration) / double(virtual_end));
  point.span = uint64_t(std::llround(double(times.last_ns - times.first_ns) * scale));
  point.gap_squares = uint64_t(std::llround(times.gap_squares * scale * scale / 1e6));
  point.timed_visits = times.timed;
}

// ---- End-of-experiment drain (Experiment.h) --------------------------------

// True if thread |tid| of this process is running or waiting for a CPU
// (state R in /proc), false if it sleeps, waits for I/O or is stopped.
bool threadRunnable(pid_t tid) {
  char path[64];
  formatTo(path, sizeof path, "/proc/self/task/%d/stat", int(tid));
  char text[512];
  if (!readSmallFile(path, text, sizeof text))
    return false;
  const char *paren = strrchr(text, ')'); // the name may hold spaces and ')'
  return paren && paren[1] == ' ' && paren[2] == 'R';
}

struct DrainWatch {
  uint64_t cpu_ns;     // the thread's CPU time at the last poll
  uint64_t checked_ns; // when its scheduler state was last read
  bool runnable;       // that state: running or waiting for a CPU
};
DrainWatch g_drain_watch[CAUSAL_MAX_THREADS];

// Records every thread's CPU time at the start of a drain.
void startDrainWatch() {
  for (uint32_t i = 0, used = g_setup.threads->slotsUsed(); i < used; ++i)
    if (ThreadState *state = g_setup.threads->slot(i))
      g_drain_watch[i] = {threadCpuNs(threadId(state)), 0, true};
}

// True while a sampled thread that is not in a blocking call, and is
// running, waiting for a CPU or pausing in its sample handler, has paid
// less than the global count. A thread blocked outside the hooks (read,
// accept, ...) stops the wait for itself: it pays when it next runs.
bool runningThreadOwesDelays(uint64_t now) {
  bool owing = false;
  for (uint32_t i = 0, used = g_setup.threads->slotsUsed(); i < used; ++i) {
    ThreadState *state = g_setup.threads->slot(i);
    if (!state || !state->in_use.load(std::memory_order_acquire) ||
        state->kind == SamplerKind::None ||
        state->blocking_calls.load(std::memory_order_relaxed) != 0 || !owesDelays(state))
      continue;
    if (state->in_handler) {
      owing = true;
      continue;
    }
    DrainWatch &watch = g_drain_watch[i];
    uint64_t cpu = threadCpuNs(threadId(state));
    if (cpu != watch.cpu_ns) {
      watch.cpu_ns = cpu;
      watch.runnable = true;
    } else if (now - watch.checked_ns >= CAUSAL_DRAIN_STATE_CHECK_NS) {
      watch.runnable = threadRunnable(threadId(state));
      watch.checked_ns = now;
    }
    owing |= watch.runnable;
  }
  return owing;
}

// ---- How saturated the process is (docs/runtime.md) ------------------------

struct SchedTotals {
  uint64_t wait_ns = 0;          // run-queue time of all sampled threads
  uint64_t competing_cpu_ns = 0; // CPU time of the threads that competed for a CPU (no spins)
};

std::atomic<uint64_t> g_experiment_epoch{0};
// Whether the last experiment found the process's threads outnumbering its
// CPUs; only then do threads tell competing for a CPU apart (the first
// experiment of a run uses Coz's model).
std::atomic<bool> g_process_oversubscribed{false};
// What threads that ended during the experiment contributed (threadEnds).
std::atomic<uint64_t> g_ended_wait_ns{0};
std::atomic<uint64_t> g_ended_competing_cpu_ns{0};

// Adds what the scheduler did with |state|'s thread since the experiment
// started (all of it for a thread born since) to |totals|; |start|: records
// the starting point instead.
void watchThread(ThreadState *state, uint64_t epoch, bool start, SchedTotals *totals) {
  SchedStat now;
  pid_t tid = threadId(state);
  if (!tid || !readSchedStat(tid, &now))
    return;
  // Written by the owning thread; an aligned 64-bit load is not torn.
  uint64_t unsampled = __atomic_load_n(&state->unsampled_ns, __ATOMIC_RELAXED);
  if (start) {
    state->watch_stat = now;
    state->watch_unsampled_ns = unsampled;
    __atomic_store_n(&state->watch_epoch, epoch, __ATOMIC_RELEASE);
    return;
  }
  bool same = __atomic_load_n(&state->watch_epoch, __ATOMIC_ACQUIRE) == epoch;
  SchedStat before = same ? state->watch_stat : SchedStat();
  uint64_t cpu = now.cpu_ns > before.cpu_ns ? now.cpu_ns - before.cpu_ns : 0;
  uint64_t wait = now.wait_ns > before.wait_ns ? now.wait_ns - before.wait_ns : 0;
  totals->wait_ns += wait;
  __atomic_store_n(&state->window_runnable_ns, cpu + wait, __ATOMIC_RELAXED);
  __atomic_store_n(&state->cpu_share_scale_x1024, cpuShareScaleX1024(cpu, wait), __ATOMIC_RELAXED);
  if (wait > cpu / CAUSAL_COMPETING_WAIT_DIVISOR) {
    // Its CPU time as the scheduler counts it, system calls included (they
    // hold the CPU as the program's code does; perf samples user mode only),
    // less its pauses' spins (the sampler's suspended CPU time).
    uint64_t spun =
        unsampled -
        (same && unsampled >= state->watch_unsampled_ns ? state->watch_unsampled_ns : 0);
    totals->competing_cpu_ns += cpu > spun ? cpu - spun : 0;
  }
}

// Over the sampled threads: starts watching (|start|) or sums what happened
// since, including the threads that ended meanwhile.
SchedTotals watchScheduler(uint64_t epoch, bool start) {
  SchedTotals totals;
  if (start) {
    g_ended_wait_ns.store(0, std::memory_order_relaxed);
    g_ended_competing_cpu_ns.store(0, std::memory_order_relaxed);
  }
  for (uint32_t i = 0, used = g_setup.threads->slotsUsed(); i < used; ++i) {
    ThreadState *state = g_setup.threads->slot(i);
    if (state && state->in_use.load(std::memory_order_acquire))
      watchThread(state, epoch, start, &totals);
  }
  totals.wait_ns += g_ended_wait_ns.load(std::memory_order_relaxed);
  totals.competing_cpu_ns += g_ended_competing_cpu_ns.load(std::memory_order_relaxed);
  return totals;
}

// What the pauses of the next experiment go by (spinIsHarmless): over a
// window of |elapsed| ns, the |cpus| available less the process's CPU time
// (spins included: a spinning thread holds a CPU) and its threads' run-queue
// time.
void noteSpareCpu(double cpus, uint64_t elapsed, uint64_t process_cpu, uint64_t wait) {
  g_spare_cpu_ns.store(int64_t(cpus * double(elapsed)) - int64_t(process_cpu) - int64_t(wait),
                       std::memory_order_relaxed);
  g_spare_window_ns.store(elapsed, std::memory_order_relaxed);
}

// The idle time of some CPUs (idleCpuNs) and when it was read.
struct IdleReading {
  double idle_ns;
  uint64_t at_ns;
};

IdleReading readIdle(const cpu_set_t *mask) { return {idleCpuNs(mask), monotonicNs()}; }

// CPUs idle on average between two readings; -1 when unknown. /proc/stat
// counts in clock ticks (10 ms), so one experiment's figure is coarse; the
// report averages a line's experiments.
double idleCpusSince(IdleReading before, IdleReading after) {
  if (before.idle_ns < 0 || after.idle_ns < before.idle_ns || after.at_ns <= before.at_ns)
    return -1;
  return (after.idle_ns - before.idle_ns) / double(after.at_ns - before.at_ns);
}

// The union of the sampled threads' affinity masks (the profiler thread's
// own is not the program's).
const cpu_set_t *threadsAffinity() {
  static cpu_set_t all;
  CPU_ZERO(&all);
  for (uint32_t i = 0, used = g_setup.threads->slotsUsed(); i < used; ++i) {
    ThreadState *state = g_setup.threads->slot(i);
    cpu_set_t mask;
    if (state && state->in_use.load(std::memory_order_acquire) && threadId(state) &&
        sched_getaffinity(threadId(state), sizeof mask, &mask) == 0)
      CPU_OR(&all, &all, &mask);
  }
  return &all;
}

// Before a run's first experiment: whether the process's threads outnumber
// its CPUs, watched over CAUSAL_SATURATION_PROBE_NS as an experiment would
// watch them. Without it the first experiment used Coz's model whatever the
// load: on bench/oversub's 128-thread pool its threads paused by sleeping,
// and the experiment measured the program 35 % slower at a speedup of 50 %
// (the later ones, with the shared-CPU model, about 2x faster). It also
// tells the first experiment's pauses whether a CPU is free (noteSpareCpu).
void probeSaturation() {
  double cpus = availableCpus(threadsAffinity());
  g_process_cpus.store(uint32_t(cpus), std::memory_order_relaxed);
  uint64_t epoch = g_experiment_epoch.fetch_add(1, std::memory_order_relaxed) + 1;
  watchScheduler(epoch, true);
  uint64_t process_cpu_before = processCpuNs();
  uint64_t start = monotonicNs();
  if (!waitNs(CAUSAL_SATURATION_PROBE_NS))
    return;
  uint64_t elapsed = monotonicNs() - start;
  SchedTotals sched = watchScheduler(epoch, false);
  uint64_t process_cpu = processCpuNs() - process_cpu_before;
  double running = elapsed ? double(process_cpu) / double(elapsed) : 0;
  double waiting = elapsed ? double(sched.wait_ns) / double(elapsed) : 0;
  g_process_oversubscribed.store(processOversubscribed(cpus, running, waiting),
                                 std::memory_order_relaxed);
  g_process_waits_for_others.store(
      processWaitsForOthers(cpus, running, probeWaitingForOthers(sched.wait_ns, elapsed)),
      std::memory_order_relaxed);
  noteSpareCpu(cpus, elapsed, process_cpu, sched.wait_ns);
}

// Runs one experiment on |line|; returns the fewest visits any point saw.
uint64_t runExperiment(Rng &rng, uint64_t line, uint64_t length_ns) {
  const ExperimentConfig &c = g_setup.config;
  static uint64_t ab_experiments = 0; // experiments of this run so far (profiler thread only)
  uint32_t speedup = c.ab_speedup_percent > 0
                         ? abSpeedupPercent(ab_experiments++, uint32_t(c.ab_speedup_percent))
                     : c.fixed_speedup_percent >= 0 ? uint32_t(c.fixed_speedup_percent)
                                                    : drawSpeedupPercent(rng);
  uint32_t points = g_progress.size();
  // The selected line's name, copied now: when the program exits (or
  // dlcloses the library) during the experiment, the image is unregistered
  // and its table may be gone by the time the record is written.
  static char selected_file[PATH_MAX];
  uint32_t line_number = 0;
  {
    ModuleTablesRead reading(*g_setup.modules);
    const char *file = lineFile(line, &line_number);
    formatTo(selected_file, sizeof selected_file, "%s", file ? file : "<unknown>");
  }
  static char selected_caller[CAUSAL_PATHS_CONTEXT_NAME_BYTES];
  uint32_t context = contextOf(line);
  formatTo(selected_caller, sizeof selected_caller, "%s", context ? pathContextName(context) : "");

  uint64_t global_before = g_experiment.global_delay_ns.load(std::memory_order_relaxed);
  g_experiment.selected_samples.store(0, std::memory_order_relaxed);
  g_experiment.delay_per_sample_ns.store(delayPerSample(speedup, g_setup.period_ns),
                                         std::memory_order_relaxed);
  g_experiment.start_global_ns.store(global_before, std::memory_order_relaxed);
  WaitTarget wait_kind = waitTargetOf(line);
  g_experiment.speedup_percent.store(speedup, std::memory_order_relaxed);
  g_experiment.selected_wait_ns.store(0, std::memory_order_relaxed);
  if (wait_kind != WaitTarget::None) {
    forgetWaitsInTarget(*g_setup.threads);
    g_experiment.start_wait_clock_ns.store(fastMonotonicNs(), std::memory_order_relaxed);
  }
  g_experiment.selected.store(line, std::memory_order_relaxed);
  const cpu_set_t *mask = threadsAffinity();
  double cpus = availableCpus(mask);
  g_process_cpus.store(uint32_t(cpus), std::memory_order_relaxed);
  uint64_t epoch = g_experiment_epoch.fetch_add(1, std::memory_order_relaxed) + 1;
  watchScheduler(epoch, true);
  uint64_t process_cpu_before = processCpuNs();
  IdleReading idle_before = readIdle(mask);
  uint64_t spun_cpu_before = g_spun_cpu_ns.load(std::memory_order_relaxed);
  g_experiment.shared_cpu_delay_ns.store(0, std::memory_order_relaxed);
  for (uint32_t p = 0; p < points; ++p) {
    g_progress.takeVisitSums(p); // visits of earlier experiments' drains
    g_progress.takeVisitTimes(p);
    // The clock is read at a throughput point's visits only while they are
    // rare enough for the reads to cost nothing much and for the count
    // alone to be coarse (docs/report.md, "Throughput from visit times"):
    // not for a point that was visited more often in the last experiment,
    // and in this one for no more visits than that rate allows.
    bool rare = g_visit_rates[p] <= CAUSAL_MAX_TIMED_VISITS_PER_SECOND;
    g_progress.timeVisits(p, rare ? maxTimedVisits(length_ns) : 0);
  }
  uint64_t start = monotonicNs();
  g_experiment.start_ns.store(start, std::memory_order_relaxed);
  setExperimentActive(1);
  if (wait_kind != WaitTarget::None)
    g_experiment.wait_target_active.store(1, std::memory_order_relaxed);
  // After the flag: a visit whose call saw it and whose count lands before
  // the snapshot is in both, which latencyWindow tells from the sums and
  // the counts at the end (before the flag, a visit could be in neither).
  for (uint32_t p = 0; p < points; ++p) {
    uint64_t departures = g_progress.departures(p); // first, as in inFlight()
    g_snapshots[p] = {{g_progress.arrivals(p), departures}, 0.0};
    // Visits timed since the flag went up were counted before the snapshot
    // (the profiler thread may have been preempted in between): not this
    // experiment's.
    if (g_progress.kind(p) == PointKind::Throughput)
      g_progress.takeVisitTimes(p);
  }

  uint64_t last = start;
  for (;;) {
    bool stop = stopping();
    uint64_t now = monotonicNs();
    integrateInFlight(points, now - last);
    last = now;
    if (stop || (!c.end_to_end && now - start >= length_ns))
      break;
    if (wait_kind != WaitTarget::None) // the others pay while a selected wait lasts
      accrueWaitsInTarget(*g_setup.threads);
    doPollStepChores();
    sleepNs(CAUSAL_PROFILER_POLL_NS);
  }

  // Drain (Experiment.h): no new delays; running threads pay what they owe.
  if (wait_kind != WaitTarget::None) // the selected waits' time up to now, then no more
    accrueWaitsInTarget(*g_setup.threads);
  g_experiment.wait_target_active.store(0, std::memory_order_relaxed);
  g_experiment.selected.store(kNoLine, std::memory_order_relaxed);
  if (!stopping() && !c.end_to_end) {
    uint64_t drain_end = last + uint64_t(CAUSAL_DRAIN_BATCHES) * g_setup.batch * g_setup.period_ns;
    uint64_t drain_start = last;
    startDrainWatch();
    while (!stopping() && runningThreadOwesDelays(last)) {
      uint64_t now = monotonicNs();
      integrateInFlight(points, now - last);
      last = now;
      if (now >= drain_end)
        break;
      sleepNs(CAUSAL_DRAIN_POLL_NS);
    }
    uint64_t now = monotonicNs();
    integrateInFlight(points, now - last);
    last = now;
    g_drain_ns.fetch_add(last - drain_start, std::memory_order_relaxed);
  }
  // A throughput point's visit times and count, read together while the
  // flag is still up, so that they cover the same visits (visitTimesOf).
  for (uint32_t p = 0; p < points; ++p)
    if (g_progress.kind(p) == PointKind::Throughput) {
      g_end_times[p] = g_progress.takeVisitTimes(p);
      g_end_arrivals[p] = g_progress.arrivals(p);
    }
  setExperimentActive(0);
  // A latency point's visit sums as the flag falls, its counters at once
  // after (latencyWindow): a visit's call comes before its count, so the
  // counters then hold every visit of the sums (up to a thread between the
  // two), and the visits after the flag that they also hold are few.
  for (uint32_t p = 0; p < points; ++p)
    if (g_progress.kind(p) == PointKind::Latency) {
      ProgressRegistry::VisitSums sums = g_progress.takeVisitSums(p);
      g_latency_ends[p].sums = {sums.begin_ns, sums.end_ns, sums.begins, sums.ends};
      g_latency_ends[p].counts.ends = g_progress.departures(p); // first, as in inFlight()
      g_latency_ends[p].counts.begins = g_progress.arrivals(p);
    }
  uint64_t elapsed = last - start;
  // Virtual time at the end of the window (it is 0 at the start).
  int64_t virtual_end =
      int64_t(elapsed) -
      int64_t(g_experiment.global_delay_ns.load(std::memory_order_relaxed) - global_before);
  // A wait target's "samples": the selected waits' blocked time in sample
  // periods, so that selected samples x period stays the time in the target.
  uint64_t selected_samples = wait_kind == WaitTarget::None
                                  ? g_experiment.selected_samples.load(std::memory_order_relaxed)
                                  : (g_experiment.selected_wait_ns.load(std::memory_order_relaxed) +
                                     g_setup.period_ns / 2) /
                                        g_setup.period_ns;
  // Threads on a CPU (program work, not runnable pauses) and waiting for
  // one, on average over the experiment; the CPUs the competing threads
  // kept busy turn their share of the speedup into delay.
  SchedTotals sched = watchScheduler(epoch, false);
  uint64_t spun_cpu = g_spun_cpu_ns.load(std::memory_order_relaxed) - spun_cpu_before;
  uint64_t process_cpu = processCpuNs() - process_cpu_before;
  double running =
      elapsed ? double(process_cpu - std::min(spun_cpu, process_cpu)) / double(elapsed) : 0;
  double waiting = elapsed ? double(sched.wait_ns) / double(elapsed) : 0;
  // CPUs kept busy by the competing threads: their CPU time, kernel time
  // included, spins not.
  uint64_t shared_delay = sharedCpuDelay(
      g_experiment.shared_cpu_delay_ns.load(std::memory_order_relaxed), sched.competing_cpu_ns,
      g_experiment.delay_per_sample_ns.load(std::memory_order_relaxed), g_setup.period_ns, elapsed);
  uint64_t delay =
      g_experiment.global_delay_ns.load(std::memory_order_relaxed) - global_before + shared_delay;
  g_process_oversubscribed.store(processOversubscribed(cpus, running, waiting),
                                 std::memory_order_relaxed);
  g_process_waits_for_others.store(processWaitsForOthers(cpus, running, waiting),
                                   std::memory_order_relaxed);
  noteSpareCpu(cpus, elapsed, process_cpu, sched.wait_ns);

  TextBuffer text;
  records::Experiment experiment;
  experiment.selected = {selected_file, line_number, waitTargetName(wait_kind),
                         context ? selected_caller : nullptr};
  experiment.speedup = speedup / 100.0;
  // duration = elapsed - inserted delay; Coz writes the unsigned difference
  // (a wrapped value, which readers take as negative, if delay > elapsed).
  experiment.duration = elapsed - delay;
  experiment.selected_samples = selected_samples;
  experiment.delay = delay;
  experiment.shared_cpu_delay = shared_delay;
  experiment.cpus = cpus;
  experiment.running = running;
  experiment.waiting = waiting;
  // Known: written even when 0 (IfSet leaves out exact zeros only).
  double idle = idleCpusSince(idle_before, readIdle(mask));
  if (idle >= 0)
    experiment.idle = std::max(idle, 1e-9);
  if (c.ab_speedup_percent > 0)
    experiment.ab_speedup = c.ab_speedup_percent / 100.0;
  writeRecord(text, experiment);
  uint64_t min_visits = UINT64_MAX;
  for (uint32_t p = 0; p < points; ++p) {
    bool throughput = g_progress.kind(p) == PointKind::Throughput;
    if (throughput) {
      uint64_t arrivals = g_end_arrivals[p] - g_snapshots[p].counts.begins;
      records::ThroughputPoint point;
      point.name = g_progress.name(p);
      point.delta = arrivals;
      visitTimesOf(g_end_times[p], arrivals, virtual_end, elapsed - std::min(delay, elapsed),
                   point);
      g_visit_rates[p] = elapsed ? double(arrivals) * 1e9 / double(elapsed) : 0.0;
      writeRecord(text, point);
      min_visits = arrivals < min_visits ? arrivals : min_visits;
    } else {
      // The area from the visits' virtual times, visits that raced the
      // window's edges told apart (docs/report.md, "Visits at a window's
      // edges").
      LatencyWindow window = latencyWindow(g_snapshots[p].counts, g_latency_ends[p].counts,
                                           g_latency_ends[p].sums, virtual_end);
      records::LatencyPoint point;
      point.name = g_progress.name(p);
      point.arrivals = window.arrivals;
      point.departures = window.departures;
      double difference = window.in_flight;
      if (std::isnan(difference)) { // some visits did not go through the runtime
        difference = elapsed ? g_snapshots[p].in_flight_area / double(elapsed) : 0.0;
        g_latency_windows_sampled.fetch_add(1, std::memory_order_relaxed);
      } else {
        g_latency_windows_timed.fetch_add(1, std::memory_order_relaxed);
      }
      // Coz's viewer parses `difference` as an integer (0.99 would read as
      // 0, an invalid baseline): it gets the count rounded, `in-flight` the
      // count itself.
      point.difference = std::nearbyint(difference);
      point.in_flight = difference;
      writeRecord(text, point);
      min_visits = point.arrivals < min_visits ? point.arrivals : min_visits;
      min_visits = point.departures < min_visits ? point.departures : min_visits;
    }
  }
  if (c.end_to_end) {
    records::ThroughputPoint end_to_end;
    end_to_end.name = CAUSAL_END_TO_END_POINT;
    end_to_end.delta = 1;
    writeRecord(text, end_to_end);
  }
  if (!text.failed())
    appendPending(text.data(), text.size());
  return min_visits;
}

void *profilerMain(void *) {
  tls_is_profiler = true;
  const ExperimentConfig &c = g_setup.config;
  Rng rng(c.seed);
  uint64_t length = c.min_length_ns;
  bool probed = false;     // probeSaturation, once per profiler thread
  bool calibrated = false; // calibrateSampleCost, once per profiler thread
  while (!stopping()) {
    doPollStepChores();
    if (!c.enabled || (!c.end_to_end && g_progress.size() == 0)) {
      // No progress point yet, or no experiments: nothing to measure (the
      // thread runs only to watch for the end of bounded profiling).
      waitNs(c.cooloff_ns > CAUSAL_PROFILER_IDLE_NS ? c.cooloff_ns : CAUSAL_PROFILER_IDLE_NS);
      continue;
    }
    if (!probed) {
      probeSaturation();
      probed = true;
      continue; // the line is chosen from the samples up to now
    }
    uint64_t line = chooseLine();
    if (line == kNoLine)
      break;
    uint64_t min_visits = runExperiment(rng, line, length);
    if (c.end_to_end)
      break; // one experiment per run
    if (!calibrated) {
      // What a sample costs, measured once per process tree after the first
      // experiment (before it, a short program would have none; Sampler.h).
      calibrateSampleCost(stopping);
      calibrated = true;
    }
    length = nextExperimentLength(length, min_visits, c.min_length_ns);
    waitNs(c.cooloff_ns);
  }
  // Bounded profiling ended: the profile is written before the thread
  // says it stopped, so that an exit meanwhile waits for it.
  if (g_end_requested.load(std::memory_order_relaxed))
    g_setup.end_profiling();
  pathsControlStopsServing();
  g_thread_stopped.store(1, std::memory_order_release);
  return nullptr;
}

bool launchProfilerThread() {
  if (!prepareRuntimeThreads())
    return false;
  g_stop_requested.store(0);
  g_thread_stopped.store(0);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, CAUSAL_PROFILER_STACK_BYTES);
  // No signal of the program is delivered to this thread. The sample
  // signal stays unblocked: no sampler targets this thread, and its handler
  // does nothing in a thread without state (a blocked sample signal would make
  // this thread's allocations look like allocations in signal context).
  sigset_t all, previous;
  sigfillset(&all);
  sigdelset(&all, sampleSignal());
  pthread_sigmask(SIG_BLOCK, &all, &previous);
  int error = createRuntimeThread(&g_profiler_thread, &attr, profilerMain, nullptr);
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  pthread_attr_destroy(&attr);
  if (error) {
    message("cannot start the profiler thread (%s); no experiments are run", strerror(error));
    return false;
  }
  pthread_detach(g_profiler_thread);
  g_thread_started.store(1, std::memory_order_release);
  return true;
}

} // namespace

void accrueSelectedWaits() { accrueWaitsInTarget(*g_setup.threads); }

void raiseGlobalDelay(uint64_t value) {
  uint64_t current = g_experiment.global_delay_ns.load(std::memory_order_relaxed);
  while (current < value && !g_experiment.global_delay_ns.compare_exchange_weak(
                                current, value, std::memory_order_relaxed))
    ;
}

void setupExperiments(const ExperimentSetup &setup) {
  g_setup = setup;
  setupWaitTargets(setup.config, setup.period_ns);
  g_setup_done.store(true, std::memory_order_release);
}

void onSampledLine(ThreadState *state, const ResolvedAddress &where, uint64_t weight) {
  uint64_t packed = packLine(where.module, where.line);
  // The line in the thread's calling context (Paths.h): what an experiment
  // on a line in a context must match, and a free run's candidate with
  // --path-experiments (0 otherwise: no chosen function active, or no mode).
  uint32_t context = __atomic_load_n(&state->path_context, __ATOMIC_RELAXED);
  uint64_t in_context = context ? packContext(packed, context) : packed;
  if (context) { // its whole-run count in that context (Paths.h)
    const causal_linetab_header *table = g_setup.modules->table(where.module);
    if (table && where.line < table->num_lines) {
      const causal_linetab_line &line = causal_linetab_lines(table)[where.line];
      countContextSample(in_context, weight, causal_linetab_file(table, line.file_index), line.line,
                         causal_linetab_function(table, where.line));
    }
  }
  if (g_experiment.active.load(std::memory_order_acquire)) {
    uint64_t selected = g_experiment.selected.load(std::memory_order_relaxed);
    if (packed == selected || in_context == selected)
      state->line_hits += weight; // chargeSignal turns them into delay
  }
  // The next experiment's line, in proportion to samples: a reservoir of one
  // over every sample since the last choice (during the experiment and the
  // pause after it), each replacing the candidate with probability weight /
  // total weight so far. Taking the first sample after the pause instead
  // favours threads that sample often: a thread on a CPU signals a batch
  // every few ms, one that sleeps 90 % of the time ten times less often, and
  // the first arrival after a given moment comes from the frequent one far
  // more often than their shares of the samples say (bench/ranking: a line
  // with 9 % of the samples got 5 % of the experiments).
  uint64_t total =
      g_experiment.candidate_weight.fetch_add(weight, std::memory_order_relaxed) + weight;
  if (reservoirTakes(state->choice_random, weight, total))
    g_experiment.candidate.store(g_setup.config.path_experiments ? in_context : packed,
                                 std::memory_order_release);
}

void onFinerSample(ThreadState *state, const ResolvedAddress &where) {
  if (!g_experiment.active.load(std::memory_order_acquire))
    return;
  uint64_t selected = g_experiment.selected.load(std::memory_order_relaxed);
  uint64_t packed = packLine(where.module, where.line);
  uint32_t context = __atomic_load_n(&state->path_context, __ATOMIC_RELAXED);
  if (packed == selected || (context && packContext(packed, context) == selected))
    state->line_hits++;
}

void chargeSignal(ThreadState *state, uint32_t divisor, uint64_t cost_ns) {
  if (uint64_t hits = state->line_hits) {
    state->line_hits = 0;
    // Minimize delays: only this thread's count grows (settleDelays adds
    // it to the local count, or to the shared-CPU delay when the thread
    // competes for a CPU, and publishes). The speedup of the program's CPU
    // time the signal stands for: the period, or the finer one, less the
    // sample's own cost when that is taken out.
    uint32_t speedup = g_experiment.speedup_percent.load(std::memory_order_relaxed);
    state->selected_delay_ns +=
        hits * lineDelayPerSignal(speedup, g_setup.period_ns / divisor, cost_ns);
    // |divisor| signals at the finer period make one selected sample, as
    // they make one ordinary sample.
    state->line_hit_parts += hits;
    uint64_t whole = state->line_hit_parts / divisor;
    state->line_hit_parts -= whole * divisor;
    if (whole)
      g_experiment.selected_samples.fetch_add(whole, std::memory_order_relaxed);
  }
  state->cost_delay_ns += cost_ns;
}

// How --shared-cpus accounts this experiment's delays (docs/runtime.md):
// from the CPUs threads compete for (the process outnumbers its CPUs), or by
// each thread's CPU share (other processes hold its CPUs); neither: per
// thread, as Coz does.
bool delaysFromSharedCpus() {
  return g_setup.config.shared_cpus && g_process_oversubscribed.load(std::memory_order_relaxed);
}
bool delaysByCpuShare() {
  return g_setup.config.shared_cpus && g_process_waits_for_others.load(std::memory_order_relaxed);
}

bool experimentTakesSampleCosts() {
  if (!g_experiment.active.load(std::memory_order_relaxed) ||
      g_experiment.selected.load(std::memory_order_relaxed) == kNoLine)
    return false; // no experiment, or its drain: what is owed is paid, nothing new added
  return !delaysFromSharedCpus() && !delaysByCpuShare();
}

void settleDelays(ThreadState *state) {
  bool active = g_experiment.active.load(std::memory_order_acquire) != 0;
  uint64_t selected = state->selected_delay_ns;
  state->selected_delay_ns = 0;
  uint64_t cost = state->cost_delay_ns;
  state->cost_delay_ns = 0;
  uint64_t local = state->local_delay_ns.load(std::memory_order_relaxed);
  uint64_t global = g_experiment.global_delay_ns.load(std::memory_order_relaxed);
  SchedWindow window;
  if (active && cost) {
    // The thread's samples' cost: a virtual speedup of the sampler by 100 %
    // (docs/runtime.md, "What the samples cost"). Threads sampled alike
    // cancel out; the others pay it, as they pay a line's delays.
    local += cost;
    state->local_delay_ns.store(local, std::memory_order_relaxed);
  }
  if (active && (selected || global > local)) {
    // Only when there is a delay to add or to pay.
    uint32_t share_scale_x1024 = 1024;
    if (delaysFromSharedCpus()) {
      window = observeScheduler(state);
    } else if (selected && delaysByCpuShare()) {
      // Coz's model, but the thread shares its CPU with other processes:
      // the line's wall time is its CPU time / the thread's CPU share, and
      // that is what its speedup saves (docs/runtime.md). The share is the
      // one the profiler thread read over the last experiment (watchThread):
      // read here, schedstat cost this thread 15 us per sample on a loaded
      // CPU. Nothing goes to the shared-CPU delay.
      share_scale_x1024 = __atomic_load_n(&state->cpu_share_scale_x1024, __ATOMIC_RELAXED);
    }
    if (selected && window.competing) {
      // CPU time taken from the CPUs the competing threads share; no
      // thread pauses for it (docs/runtime.md). Scaled for the samples the
      // kernel did not deliver, as below: it is divided by CPU time, not by
      // samples.
      g_experiment.shared_cpu_delay_ns.fetch_add(selected * state->delay_scale_x1024 / 1024,
                                                 std::memory_order_relaxed);
    } else if (selected) {
      // Scaled for the samples of this thread the kernel did not deliver
      // (Sampler.cpp, closeSampleWindows): the others are delayed by the share
      // of the line's CPU time, not by the share that was sampled; and by
      // the thread's CPU share when other processes hold its CPU.
      local += selected * state->delay_scale_x1024 / 1024 * share_scale_x1024 / 1024;
      state->local_delay_ns.store(local, std::memory_order_relaxed);
    }
  }
  DelaySettlement settlement = settleDelayCounts(
      local, global, g_experiment.start_global_ns.load(std::memory_order_relaxed), active);
  if (settlement.raise_global_to)
    raiseGlobal(settlement.raise_global_to);
  if (settlement.pause_ns)
    pause(state, settlement.pause_ns, window.competing);
  state->local_delay_ns.store(settlement.local, std::memory_order_relaxed);
}

void payOwedDelays(ThreadState *state) {
  if (state->in_handler)
    return;                // inside the sample handler (e.g. libunwind's locks): it settles itself
  int saved_errno = errno; // called around the program's calls, whose errno it must keep
  state->in_handler = 1;   // a sample signal meanwhile counts as profiler overhead
  settleDelays(state);
  state->in_handler = 0;
  errno = saved_errno;
}

bool payOwedDelaysBeforeBlocking(ThreadState *state) {
  if (state->in_handler)
    return false;
  uint64_t global = g_experiment.global_delay_ns.load(std::memory_order_relaxed);
  uint64_t local = state->local_delay_ns.load(std::memory_order_relaxed);
  // Left deliverable: the sample signal (a pause is sampled like any
  // time), the faults a bug of ours or the program's raises synchronously,
  // and glibc's internal SIGCANCEL (32) and SIGSETXID (33), which another
  // thread's pthread_cancel or setuid waits for.
  auto bit = kernelSignalBit;
  uint64_t block = ~(bit(sampleSignal() > 0 ? sampleSignal() : SIGPROF) | bit(SIGSEGV) |
                     bit(SIGBUS) | bit(SIGFPE) | bit(SIGILL) | bit(SIGTRAP) | bit(SIGSYS) |
                     bit(32) | bit(33) | bit(SIGKILL) | bit(SIGSTOP));
  uint64_t previous = 0;
  bool held = global >= local + CAUSAL_HOLD_SIGNALS_MIN_OWED_NS &&
              rawSigprocmask(SIG_BLOCK, &block, &previous) == 0;
  payOwedDelays(state);
  // During an experiment on a wait target, the selected wait raises the
  // global count while this thread pays: pay until caught up, or the debt
  // would be carried into the blocking call (WaitTargets.h).
  // The count is brought up to now first: the profiler thread raises it
  // only every poll step. At a speedup of 100 % the debt does not shrink:
  // the thread pays until the selected wait ends (or the experiment does).
  for (int round = 0; round < CAUSAL_WAIT_TARGET_PAY_ROUNDS &&
                      g_experiment.wait_target_active.load(std::memory_order_relaxed);
       ++round) {
    accrueSelectedWaits();
    if (g_experiment.global_delay_ns.load(std::memory_order_relaxed) <
        state->local_delay_ns.load(std::memory_order_relaxed) + CAUSAL_WAIT_TARGET_PAY_MIN_NS)
      break;
    payOwedDelays(state);
  }
  if (!held)
    return false;
  uint64_t pending = 0;
  rawSyscall(SYS_rt_sigpending, reinterpret_cast<long>(&pending), sizeof(uint64_t));
  uint64_t came = pending & block & ~previous;
  // Only a signal with a handler interrupts a call: one ignored, or whose
  // default action is to ignore it (SIGCHLD, SIGWINCH, ...), does not, but
  // a blocked signal is kept pending whatever its disposition.
  bool handled = false;
  for (int signal = 1; came && signal <= 64 && !handled; ++signal) {
    if (!(came & bit(signal)))
      continue;
    struct sigaction action;
    handled = sigaction(signal, nullptr, &action) == 0 && action.sa_handler != SIG_DFL &&
              action.sa_handler != SIG_IGN;
  }
  // Handlers of what came meanwhile run as the mask is restored: before the
  // call, as they would have run inside it.
  rawSigprocmask(SIG_SETMASK, &previous, nullptr);
  return handled;
}

void threadEnds(ThreadState *state) {
  if (!g_experiment.active.load(std::memory_order_acquire))
    return;
  SchedTotals totals;
  watchThread(state, g_experiment_epoch.load(std::memory_order_relaxed), false, &totals);
  g_ended_wait_ns.fetch_add(totals.wait_ns, std::memory_order_relaxed);
  g_ended_competing_cpu_ns.fetch_add(totals.competing_cpu_ns, std::memory_order_relaxed);
}

void startExperiments() {
  const ExperimentConfig &c = g_setup.config;
  // Started only once there is something to measure: the thread makes the
  // process multi-threaded, which costs a single-threaded program libc's
  // fast paths (an uncontended mutex pair: ~4 ns -> ~20 ns here). Live
  // control of call paths needs it too (PathsControl.h): a program with
  // chosen functions gets it (unless --no-paths-control).
  if (!g_setup.bounded && !pathsControlOpen() &&
      (!c.enabled || (!c.end_to_end && g_progress.size() == 0)))
    return;
  if (!g_setup_done.load(std::memory_order_acquire))
    return; // profiling is not (yet) on
  uint32_t expected = 0;
  if (!g_thread_launching.compare_exchange_strong(expected, 1))
    return; // started, or being started, by another thread
  if (!launchProfilerThread())
    g_thread_launching.store(0);
}

void stopExperiments() {
  if (!g_thread_started.load(std::memory_order_acquire) || isProfilerThread())
    return;
  g_stop_requested.store(1, std::memory_order_release);
  for (uint64_t waited = 0;
       waited < CAUSAL_PROFILER_STOP_WAIT_NS && !g_thread_stopped.load(std::memory_order_acquire);
       waited += CAUSAL_PROFILER_POLL_NS)
    sleepNs(CAUSAL_PROFILER_POLL_NS);
  setExperimentActive(0);
  g_thread_started.store(0, std::memory_order_release);
  // Not restarted in this process (g_thread_launching stays set).
}

void experimentsForkChild() {
  setExperimentActive(0);
  g_experiment.wait_target_active.store(0);
  g_experiment.selected.store(kNoLine);
  g_experiment.candidate.store(kNoLine);
  g_experiment.candidate_weight.store(0);
  g_experiment.selected_samples.store(0);
  // The parent writes its own pending records; the child's start empty.
  g_pending_lock.reset();
  g_pending_size = 0;
  bool was_running = g_thread_started.exchange(0) != 0;
  g_thread_launching.store(0);
  if (was_running)
    startExperiments();
}

void takePendingRecords(TextBuffer *out) {
  lockPending();
  if (g_pending_size)
    out->append(g_pending, g_pending_size);
  g_pending_size = 0;
  unlockPending();
}

const char *peekPendingRecords(size_t *size) {
  if (!g_pending_lock.tryLock()) {
    *size = 0;
    return nullptr; // held by a thread that stopped inside it: skip
  }
  // Left locked on purpose: the process is about to die.
  *size = g_pending_size;
  return g_pending;
}

bool borrowPendingRecords(const char **records, size_t *size) {
  *records = nullptr;
  *size = 0;
  if (!g_pending_lock.tryLock())
    return false;
  // Held even when there is nothing (no experiment yet: no buffer at all).
  *records = g_pending;
  *size = g_pending_size;
  return true;
}

void returnPendingRecords(bool written) {
  if (written)
    g_pending_size = 0;
  unlockPending();
}

bool isProfilerThread() { return tls_is_profiler; }

bool profilerThreadRunning() {
  return g_thread_started.load(std::memory_order_acquire) &&
         !g_thread_stopped.load(std::memory_order_acquire);
}

} // namespace causal::rt

// A progress point is visited while an experiment runs (abi.h): the thread
// pays what it owes, so that it is counted at its place in virtual time,
// and a latency visit records that time.
extern "C" CAUSAL_RT_EXPORT void __causal_progress_visit(void *counter) {
  using namespace causal::rt;
  ThreadState *state = tls_thread;
  if (state && __builtin_expect(owesDelays(state), 0))
    payOwedDelays(state);
  // Called only while the flag is set (abi.h); a visit that races the end of
  // the experiment lands in sums the next experiment discards at its start.
  bool end = false;
  uint32_t point = counter ? g_progress.pointOf(counter, &end) : ProgressRegistry::kNoPoint;
  if (point == ProgressRegistry::kNoPoint)
    return;
  bool throughput = g_progress.kind(point) == PointKind::Throughput;
  if (throughput && !g_progress.timesVisits(point)) // visited too often to time
    return;
  int64_t real = int64_t(monotonicNs() - g_experiment.start_ns.load(std::memory_order_relaxed));
  uint64_t floor = g_experiment.start_global_ns.load(std::memory_order_relaxed);
  // The visiting thread's own clock (visitVirtualNs): what it has taken, and
  // its pause's overshoot (a thread that paused longer than it owed is that
  // much behind until its next pause). A thread the runtime does not know
  // goes by the global count.
  int64_t virtual_ns =
      state ? visitVirtualNs(real, state->local_delay_ns.load(std::memory_order_relaxed), floor,
                             state->excess_delay_ns)
            : visitVirtualNs(real, g_experiment.global_delay_ns.load(std::memory_order_relaxed),
                             floor, 0);
  if (throughput)
    g_progress.recordTimedVisit(point, virtual_ns);
  else
    g_progress.recordVisit(point, end, virtual_ns);
}
