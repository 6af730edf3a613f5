//===- runtime/Experiment.cpp - Causal experiments and virtual speedup ----===//

#include "Experiment.h"

#include "ExperimentPolicy.h"
#include "ProfileWriter.h"
#include "Runtime.h"
#include "Sampler.h"

#include "causal/tunables.h"

#include <algorithm>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

// The flag the pass's inline check at progress points reads (abi.h): nonzero
// exactly while g_experiment.active is.
extern "C" {
CAUSAL_RT_EXPORT uint32_t __causal_delays_active = 0;
}

namespace causal::rt {

ExperimentGlobals g_experiment;
ExperimentConfig g_experiment_config;
ProgressRegistry g_progress;
std::atomic<uint64_t> g_paused_ns{0};
std::atomic<uint64_t> g_drain_ns{0};
std::atomic<uint64_t> g_spun_ns{0};
std::atomic<uint64_t> g_spun_cpu_ns{0};

namespace {

void setExperimentActive(uint32_t active) {
  g_experiment.active.store(active, std::memory_order_release);
  __atomic_store_n(&__causal_delays_active, active, __ATOMIC_RELEASE);
}

std::atomic<uint32_t> g_thread_started{0};
std::atomic<uint32_t> g_thread_launching{0}; // once per process (reset in a fork child)
std::atomic<uint32_t> g_stop_requested{0};
std::atomic<uint32_t> g_thread_stopped{0};
pthread_t g_profiler_thread;
__thread bool tls_is_profiler CAUSAL_RT_TLS = false;

// ---- Pending records: an mmap'd buffer (no malloc: readable from a fatal
// signal handler), guarded by a spin lock.
std::atomic<bool> g_pending_lock{false};
char *g_pending = nullptr;
size_t g_pending_size = 0;
size_t g_pending_capacity = 0;

void lockPending() {
  while (g_pending_lock.exchange(true, std::memory_order_acquire))
    __builtin_ia32_pause();
}
void unlockPending() { g_pending_lock.store(false, std::memory_order_release); }

void appendPending(const char *text, size_t size) {
  lockPending();
  if (g_pending_size + size > g_pending_capacity) {
    size_t capacity = g_pending_capacity ? g_pending_capacity : 65536;
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

// Pauses |ns| less the carried overshoot; keeps the new overshoot. A thread
// with a CPU of its own sleeps. A thread that competes for a CPU stays
// runnable instead (spins, its sampler stopped): sleeping would hand its
// share of the CPUs to other threads, which the virtual speedup must delay
// too (docs/runtime.md, "When threads outnumber CPUs").
void pause(ThreadState *state, uint64_t ns, bool competing) {
  PausePlan plan = planPause(ns, state->excess_delay_ns);
  state->excess_delay_ns = plan.excess_left_ns;
  if (!plan.sleep_ns)
    return;
  uint64_t cpu_begin = 0;
  if (competing) {
    suspendThreadSampling(state);
    cpu_begin = threadCpuNs();
  }
  uint64_t begin = monotonicNs();
  uint64_t elapsed = 0;
  while (elapsed < plan.sleep_ns) {
    if (competing) {
      __builtin_ia32_pause();
    } else {
      // Not the interposed nanosleep. A signal handler that ran meanwhile
      // is remembered (hooks/HookCore.h: the call the thread paid before
      // would have been interrupted); then loop on the clock.
      if (!rawSleepNs(plan.sleep_ns - elapsed))
        ++state->pause_interruptions;
    }
    elapsed = monotonicNs() - begin;
  }
  if (competing) {
    g_spun_cpu_ns.fetch_add(threadCpuNs() - cpu_begin, std::memory_order_relaxed);
    resumeThreadSampling(state);
    g_spun_ns.fetch_add(elapsed, std::memory_order_relaxed);
  }
  state->excess_delay_ns = elapsed - plan.sleep_ns;
  state->paused_ns += elapsed;
  g_paused_ns.fetch_add(elapsed, std::memory_order_relaxed);
}

// Raises the global count to at least |value|.
void raiseGlobal(uint64_t value) {
  uint64_t current = g_experiment.global_delay_ns.load(std::memory_order_relaxed);
  while (current < value && !g_experiment.global_delay_ns.compare_exchange_weak(
                                current, value, std::memory_order_relaxed))
    ;
}

// ---- Profiler thread ----------------------------------------------------

// The runtime's own sleeps never go through the interposed nanosleep.
void sleepNs(uint64_t ns) {
  uint64_t end = monotonicNs() + ns;
  for (uint64_t now = monotonicNs(); now < end; now = monotonicNs())
    rawSleepNs(end - now);
}

bool stopping() { return g_stop_requested.load(std::memory_order_acquire) != 0; }

// Sleeps |ns| in poll steps; false if asked to stop meanwhile.
bool waitNs(uint64_t ns) {
  uint64_t end = monotonicNs() + ns;
  for (;;) {
    if (stopping())
      return false;
    uint64_t now = monotonicNs();
    if (now >= end)
      return true;
    uint64_t step = end - now;
    sleepNs(step < CAUSAL_PROFILER_POLL_NS ? step : CAUSAL_PROFILER_POLL_NS);
  }
}

const char *lineFile(uint64_t packed, uint32_t *line_number) {
  uint32_t module = uint32_t(packed >> 32), line = uint32_t(packed);
  if (module >= g_modules.slotsUsed() || !g_modules.isActive(module))
    return nullptr;
  const causal_linetab_header *table = g_modules.table(module);
  if (!table || line >= table->num_lines)
    return nullptr;
  const causal_linetab_line &entry = causal_linetab_lines(table)[line];
  *line_number = entry.line;
  return causal_linetab_file(table, entry.file_index);
}

bool inScope(uint64_t packed) {
  uint32_t line_number;
  const char *file = lineFile(packed, &line_number);
  if (!file)
    return false;
  const ExperimentConfig &c = g_experiment_config;
  if (c.binary_scope[0] && !matchesAnyGlob(c.binary_scope, g_modules.path(uint32_t(packed >> 32))))
    return false;
  return c.scope[0] ? matchesAnyGlob(c.scope, file) : inDefaultSourceScope(file);
}

uint64_t findFixedLine() {
  const ExperimentConfig &c = g_experiment_config;
  for (uint32_t module = 0, used = g_modules.slotsUsed(); module < used; ++module) {
    if (!g_modules.isActive(module))
      continue;
    const causal_linetab_header *table = g_modules.table(module);
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

// Waits for the line of the next experiment; kNoLine if stopping.
uint64_t chooseLine() {
  const ExperimentConfig &c = g_experiment_config;
  bool said_missing = false;
  uint64_t waited = 0;
  for (;;) {
    if (stopping())
      return kNoLine;
    if (c.has_fixed_line) {
      uint64_t line = findFixedLine();
      if (line != kNoLine)
        return line;
      if (!said_missing && waited > 1000000000ull && g_config.verbose) {
        message("--fixed-line %s:%u: no such line in the instrumented images (yet)", c.fixed_file,
                c.fixed_line);
        said_missing = true;
      }
    } else {
      uint64_t candidate = g_experiment.candidate.load(std::memory_order_acquire);
      if (candidate != kNoLine) {
        if (inScope(candidate))
          return candidate;
        // Rejected: the next sample posts another one. Rejection keeps the
        // choice proportional to samples among in-scope lines.
        g_experiment.candidate.store(kNoLine, std::memory_order_release);
      }
    }
    sleepNs(CAUSAL_PROFILER_POLL_NS);
    waited += CAUSAL_PROFILER_POLL_NS;
  }
}

struct PointSnapshot {
  uint64_t arrivals, departures;
  double in_flight_area; // integral of (begins - ends) dt, in count x ns
};
PointSnapshot g_snapshots[CAUSAL_MAX_PROGRESS_POINTS];

void integrateInFlight(uint32_t points, uint64_t dt) {
  for (uint32_t p = 0; p < points; ++p) {
    if (g_progress.kind(p) != PointKind::Latency)
      continue;
    int64_t in_flight = int64_t(g_progress.arrivals(p) - g_progress.departures(p));
    g_snapshots[p].in_flight_area += double(in_flight) * double(dt);
  }
}

// ---- End-of-experiment drain (Experiment.h) --------------------------------

// True if thread |tid| of this process is running or waiting for a CPU
// (state R in /proc), false if it sleeps, waits for I/O or is stopped.
bool threadRunnable(pid_t tid) {
  char path[64];
  formatTo(path, sizeof path, "/proc/self/task/%d/stat", int(tid));
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  char text[512];
  ssize_t size = read(fd, text, sizeof text - 1);
  close(fd);
  if (size <= 0)
    return false;
  text[size] = 0;
  const char *paren = strrchr(text, ')'); // the name may hold spaces and ')'
  return paren && paren[1] == ' ' && paren[2] == 'R';
}

struct DrainWatch {
  uint64_t cpu_ns;     // the thread's CPU time at the last poll
  uint64_t checked_ns; // when its scheduler state was last read
  bool runnable;       // that state: running or waiting for a CPU
};
DrainWatch g_drain_watch[CAUSAL_MAX_THREADS];

// How often a thread whose CPU time stands still has its state re-read.
constexpr uint64_t kStateCheckNs = 1000000;

// Records every thread's CPU time at the start of a drain.
void startDrainWatch() {
  for (uint32_t i = 0, used = g_threads.slotsUsed(); i < used; ++i)
    if (ThreadState *state = g_threads.slot(i))
      g_drain_watch[i] = {threadCpuNs(state->tid), 0, true};
}

// True while a sampled thread that is not in a blocking call, and is
// running, waiting for a CPU or pausing in its sample handler, has paid
// less than the global count. A thread blocked outside the hooks (read,
// accept, ...) stops the wait for itself: it pays when it next runs.
bool runningThreadOwesDelays(uint64_t now) {
  bool owing = false;
  for (uint32_t i = 0, used = g_threads.slotsUsed(); i < used; ++i) {
    ThreadState *state = g_threads.slot(i);
    if (!state || !state->in_use.load(std::memory_order_acquire) ||
        state->kind == SamplerKind::None ||
        state->blocking_calls.load(std::memory_order_relaxed) != 0 || !owesDelays(state))
      continue;
    if (state->in_handler) {
      owing = true;
      continue;
    }
    DrainWatch &watch = g_drain_watch[i];
    uint64_t cpu = threadCpuNs(state->tid);
    if (cpu != watch.cpu_ns) {
      watch.cpu_ns = cpu;
      watch.runnable = true;
    } else if (now - watch.checked_ns >= kStateCheckNs) {
      watch.runnable = threadRunnable(state->tid);
      watch.checked_ns = now;
    }
    owing |= watch.runnable;
  }
  return owing;
}

// ---- How saturated the process is (docs/runtime.md) ------------------------

struct SchedTotals {
  uint64_t wait_ns = 0;           // run-queue time of all sampled threads
  uint64_t competing_samples = 0; // samples of the threads that competed for a CPU
};

std::atomic<uint64_t> g_experiment_epoch{0};
// Whether the last experiment found the process's threads outnumbering its
// CPUs; only then do threads tell competing for a CPU apart (the first
// experiment of a run uses Coz's model).
std::atomic<bool> g_process_oversubscribed{false};
// What threads that ended during the experiment contributed (threadEnds).
std::atomic<uint64_t> g_ended_wait_ns{0};
std::atomic<uint64_t> g_ended_competing_samples{0};

// Adds what the scheduler did with |state|'s thread since the experiment
// started (all of it for a thread born since) to |totals|; |start|: records
// the starting point instead.
void watchThread(ThreadState *state, uint64_t epoch, bool start, SchedTotals *totals) {
  SchedStat now;
  if (!state->tid || !readSchedStat(state->tid, &now))
    return;
  // Written by the owning thread's handler; an aligned 64-bit load is not torn.
  uint64_t samples = __atomic_load_n(&state->samples, __ATOMIC_RELAXED);
  if (start) {
    state->watch_stat = now;
    state->watch_samples = samples;
    __atomic_store_n(&state->watch_epoch, epoch, __ATOMIC_RELEASE);
    return;
  }
  bool same = __atomic_load_n(&state->watch_epoch, __ATOMIC_ACQUIRE) == epoch;
  SchedStat before = same ? state->watch_stat : SchedStat();
  uint64_t cpu = now.cpu_ns > before.cpu_ns ? now.cpu_ns - before.cpu_ns : 0;
  uint64_t wait = now.wait_ns > before.wait_ns ? now.wait_ns - before.wait_ns : 0;
  totals->wait_ns += wait;
  if (wait > cpu / CAUSAL_COMPETING_WAIT_DIVISOR)
    totals->competing_samples +=
        samples - (same && samples >= state->watch_samples ? state->watch_samples : 0);
}

// Over the sampled threads: starts watching (|start|) or sums what happened
// since, including the threads that ended meanwhile.
SchedTotals watchScheduler(uint64_t epoch, bool start) {
  SchedTotals totals;
  if (start) {
    g_ended_wait_ns.store(0, std::memory_order_relaxed);
    g_ended_competing_samples.store(0, std::memory_order_relaxed);
  }
  for (uint32_t i = 0, used = g_threads.slotsUsed(); i < used; ++i) {
    ThreadState *state = g_threads.slot(i);
    if (state && state->in_use.load(std::memory_order_acquire))
      watchThread(state, epoch, start, &totals);
  }
  totals.wait_ns += g_ended_wait_ns.load(std::memory_order_relaxed);
  totals.competing_samples += g_ended_competing_samples.load(std::memory_order_relaxed);
  return totals;
}

// The union of the sampled threads' affinity masks (the profiler thread's
// own is not the program's).
const cpu_set_t *threadsAffinity() {
  static cpu_set_t all;
  CPU_ZERO(&all);
  for (uint32_t i = 0, used = g_threads.slotsUsed(); i < used; ++i) {
    ThreadState *state = g_threads.slot(i);
    cpu_set_t mask;
    if (state && state->in_use.load(std::memory_order_acquire) && state->tid &&
        sched_getaffinity(state->tid, sizeof mask, &mask) == 0)
      CPU_OR(&all, &all, &mask);
  }
  return &all;
}

// Runs one experiment on |line|; returns the fewest visits any point saw.
uint64_t runExperiment(Rng &rng, uint64_t line, uint64_t length_ns) {
  const ExperimentConfig &c = g_experiment_config;
  uint32_t speedup =
      c.fixed_speedup_percent >= 0 ? uint32_t(c.fixed_speedup_percent) : drawSpeedupPercent(rng);
  uint32_t points = g_progress.size();
  for (uint32_t p = 0; p < points; ++p)
    g_snapshots[p] = {g_progress.arrivals(p), g_progress.departures(p), 0.0};
  // The selected line's name, copied now: when the program exits (or
  // dlcloses the library) during the experiment, the image is unregistered
  // and its table may be gone by the time the record is written.
  static char selected_file[PATH_MAX];
  uint32_t line_number = 0;
  const char *file = lineFile(line, &line_number);
  formatTo(selected_file, sizeof selected_file, "%s", file ? file : "<unknown>");

  uint64_t global_before = g_experiment.global_delay_ns.load(std::memory_order_relaxed);
  g_experiment.selected_samples.store(0, std::memory_order_relaxed);
  g_experiment.delay_per_sample_ns.store(delayPerSample(speedup, g_config.period_ns),
                                         std::memory_order_relaxed);
  g_experiment.start_global_ns.store(global_before, std::memory_order_relaxed);
  g_experiment.selected.store(line, std::memory_order_relaxed);
  double cpus = availableCpus(threadsAffinity());
  uint64_t epoch = g_experiment_epoch.fetch_add(1, std::memory_order_relaxed) + 1;
  watchScheduler(epoch, true);
  uint64_t process_cpu_before = processCpuNs();
  uint64_t spun_cpu_before = g_spun_cpu_ns.load(std::memory_order_relaxed);
  g_experiment.shared_cpu_delay_ns.store(0, std::memory_order_relaxed);
  uint64_t start = monotonicNs();
  setExperimentActive(1);

  uint64_t last = start;
  for (;;) {
    bool stop = stopping();
    uint64_t now = monotonicNs();
    integrateInFlight(points, now - last);
    last = now;
    if (stop || (!c.end_to_end && now - start >= length_ns))
      break;
    sleepNs(CAUSAL_PROFILER_POLL_NS);
  }

  // Drain (Experiment.h): no new delays; running threads pay what they owe.
  g_experiment.selected.store(kNoLine, std::memory_order_relaxed);
  if (!stopping() && !c.end_to_end) {
    uint64_t drain_end =
        last + uint64_t(CAUSAL_DRAIN_BATCHES) * g_config.batch * g_config.period_ns;
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
  setExperimentActive(0);
  uint64_t elapsed = last - start;
  uint64_t selected_samples = g_experiment.selected_samples.load(std::memory_order_relaxed);
  // Threads on a CPU (program work, not runnable pauses) and waiting for
  // one, on average over the experiment; the CPUs the competing threads
  // kept busy turn their share of the speedup into delay.
  SchedTotals sched = watchScheduler(epoch, false);
  uint64_t spun_cpu = g_spun_cpu_ns.load(std::memory_order_relaxed) - spun_cpu_before;
  uint64_t process_cpu = processCpuNs() - process_cpu_before;
  double running =
      elapsed ? double(process_cpu - std::min(spun_cpu, process_cpu)) / double(elapsed) : 0;
  double waiting = elapsed ? double(sched.wait_ns) / double(elapsed) : 0;
  // CPUs kept busy by the competing threads, measured in samples (the same
  // unit as the selected samples' delay; spins are not sampled).
  uint64_t shared_delay = sharedCpuDelay(
      g_experiment.shared_cpu_delay_ns.load(std::memory_order_relaxed),
      elapsed ? double(sched.competing_samples) * double(g_config.period_ns) / double(elapsed) : 0);
  uint64_t delay =
      g_experiment.global_delay_ns.load(std::memory_order_relaxed) - global_before + shared_delay;
  g_process_oversubscribed.store(processOversubscribed(cpus, running, waiting),
                                 std::memory_order_relaxed);

  TextBuffer text;
  // duration = elapsed - inserted delay; Coz writes the unsigned difference
  // (a wrapped value, which readers take as negative, if delay > elapsed).
  text.appendf("experiment\tselected=%s:%u\tspeedup=%.2f\tduration=%llu\tselected-samples=%llu"
               "\tdelay=%llu\tshared-cpu-delay=%llu\tcpus=%.2f\trunning=%.2f\twaiting=%.2f\n",
               selected_file, line_number, speedup / 100.0, (unsigned long long)(elapsed - delay),
               (unsigned long long)selected_samples, (unsigned long long)delay,
               (unsigned long long)shared_delay, cpus, running, waiting);
  uint64_t min_visits = UINT64_MAX;
  for (uint32_t p = 0; p < points; ++p) {
    uint64_t arrivals = g_progress.arrivals(p) - g_snapshots[p].arrivals;
    if (g_progress.kind(p) == PointKind::Throughput) {
      text.appendf("throughput-point\tname=%s\tdelta=%llu\n", g_progress.name(p),
                   (unsigned long long)arrivals);
      min_visits = arrivals < min_visits ? arrivals : min_visits;
    } else {
      uint64_t departures = g_progress.departures(p) - g_snapshots[p].departures;
      double difference = elapsed ? g_snapshots[p].in_flight_area / double(elapsed) : 0.0;
      text.appendf("latency-point\tname=%s\tarrivals=%llu\tdepartures=%llu\tdifference=%.4f\n",
                   g_progress.name(p), (unsigned long long)arrivals, (unsigned long long)departures,
                   difference);
      min_visits = arrivals < min_visits ? arrivals : min_visits;
      min_visits = departures < min_visits ? departures : min_visits;
    }
  }
  if (c.end_to_end)
    text.appendf("throughput-point\tname=" CAUSAL_END_TO_END_POINT "\tdelta=1\n");
  if (!text.failed())
    appendPending(text.data(), text.size());
  return min_visits;
}

void *profilerMain(void *) {
  tls_is_profiler = true;
  const ExperimentConfig &c = g_experiment_config;
  Rng rng(c.seed);
  uint64_t length = c.min_length_ns;
  while (!stopping()) {
    if (!c.end_to_end && g_progress.size() == 0) {
      waitNs(c.cooloff_ns); // no progress point yet: nothing to measure
      continue;
    }
    g_experiment.candidate.store(kNoLine, std::memory_order_release);
    uint64_t line = chooseLine();
    if (line == kNoLine)
      break;
    uint64_t min_visits = runExperiment(rng, line, length);
    if (c.end_to_end)
      break; // one experiment per run
    length = nextExperimentLength(length, min_visits, c.min_length_ns);
    waitNs(c.cooloff_ns);
  }
  g_thread_stopped.store(1, std::memory_order_release);
  return nullptr;
}

using PthreadCreateFn = int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

// Resolved before any fork: a fork child starts its thread without dlsym.
std::atomic<PthreadCreateFn> g_real_pthread_create{nullptr};

bool launchProfilerThread() {
  PthreadCreateFn real = g_real_pthread_create.load(std::memory_order_acquire);
  if (!real) {
    real = reinterpret_cast<PthreadCreateFn>(dlsym(RTLD_NEXT, "pthread_create"));
    g_real_pthread_create.store(real, std::memory_order_release);
  }
  if (!real)
    return false;
  g_stop_requested.store(0);
  g_thread_stopped.store(0);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 256 * 1024);
  // No signal of the program is delivered to this thread. The sample
  // signal stays unblocked: no sampler targets this thread, and its handler
  // does nothing in a thread without state (a blocked SIGPROF would make
  // this thread's allocations look like allocations in signal context).
  sigset_t all, previous;
  sigfillset(&all);
  sigdelset(&all, CAUSAL_SAMPLE_SIGNAL);
  pthread_sigmask(SIG_BLOCK, &all, &previous);
  int error = real(&g_profiler_thread, &attr, profilerMain, nullptr);
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

uint64_t parsePercent(const char *name, const char *value, bool *ok) {
  uint64_t result = 0;
  *ok = value && *value;
  for (const char *p = value; *ok && *p; ++p) {
    if (*p < '0' || *p > '9' || result > 100)
      *ok = false;
    else
      result = result * 10 + uint64_t(*p - '0');
  }
  if (*ok && result > 100)
    *ok = false;
  if (!*ok && value)
    message("%s=%s is not a percentage from 0 to 100; ignored", name, value);
  return result;
}

} // namespace

void readExperimentConfig() {
  ExperimentConfig &c = g_experiment_config;
  const char *enabled = envString(CAUSAL_ENV_EXPERIMENTS);
  c.enabled = !(enabled && !strcmp(enabled, "0"));
  c.end_to_end = envFlag(CAUSAL_ENV_END_TO_END);
  const char *shared = envString(CAUSAL_ENV_SHARED_CPUS);
  c.shared_cpus = !(shared && !strcmp(shared, "0"));
  if (const char *fixed = envString(CAUSAL_ENV_FIXED_LINE)) {
    c.has_fixed_line = parseFixedLine(fixed, c.fixed_file, sizeof(c.fixed_file), &c.fixed_line);
    if (!c.has_fixed_line)
      message("%s=%s is not FILE:LINE; ignored", CAUSAL_ENV_FIXED_LINE, fixed);
  }
  if (const char *speedup = envString(CAUSAL_ENV_FIXED_SPEEDUP)) {
    bool ok = false;
    uint64_t percent = parsePercent(CAUSAL_ENV_FIXED_SPEEDUP, speedup, &ok);
    if (ok && percent % (100 / CAUSAL_SPEEDUP_DIVISIONS) != 0)
      message("%s=%s: speedups are drawn in steps of %u %%; using %llu %% as given",
              CAUSAL_ENV_FIXED_SPEEDUP, speedup, 100 / CAUSAL_SPEEDUP_DIVISIONS,
              (unsigned long long)percent);
    c.fixed_speedup_percent = ok ? int(percent) : -1;
  }
  bool malformed = false;
  c.seed = envUnsigned(CAUSAL_ENV_SEED, 0, &malformed);
  if (malformed)
    message("%s is not a number; using a seed from the clock", CAUSAL_ENV_SEED);
  if (!envString(CAUSAL_ENV_SEED) || malformed)
    c.seed = realtimeNs() ^ (uint64_t(getpid()) << 32);
  malformed = false;
  c.min_length_ns = envUnsigned(CAUSAL_ENV_EXPERIMENT_NS, CAUSAL_DEFAULT_EXPERIMENT_NS, &malformed);
  if (malformed || c.min_length_ns < 1000000ull || c.min_length_ns > CAUSAL_MAX_EXPERIMENT_NS) {
    message("%s must be from 1000000 to %llu ns; using %llu", CAUSAL_ENV_EXPERIMENT_NS,
            (unsigned long long)CAUSAL_MAX_EXPERIMENT_NS,
            (unsigned long long)CAUSAL_DEFAULT_EXPERIMENT_NS);
    c.min_length_ns = CAUSAL_DEFAULT_EXPERIMENT_NS;
  }
  malformed = false;
  c.cooloff_ns = envUnsigned(CAUSAL_ENV_COOLOFF_NS, CAUSAL_DEFAULT_COOLOFF_NS, &malformed);
  if (malformed || c.cooloff_ns > CAUSAL_MAX_EXPERIMENT_NS) {
    message("%s is not a number of ns (at most %llu); using %llu", CAUSAL_ENV_COOLOFF_NS,
            (unsigned long long)CAUSAL_MAX_EXPERIMENT_NS,
            (unsigned long long)CAUSAL_DEFAULT_COOLOFF_NS);
    c.cooloff_ns = CAUSAL_DEFAULT_COOLOFF_NS;
  }
  if (const char *scope = envString(CAUSAL_ENV_SCOPE))
    formatTo(c.scope, sizeof(c.scope), "%s", scope);
  if (const char *scope = envString(CAUSAL_ENV_BINARY_SCOPE))
    formatTo(c.binary_scope, sizeof(c.binary_scope), "%s", scope);
}

void onSampledLine(ThreadState *state, const ResolvedAddress &where, uint64_t weight) {
  uint64_t packed = packLine(where.module, where.line);
  if (g_experiment.active.load(std::memory_order_acquire)) {
    if (packed == g_experiment.selected.load(std::memory_order_relaxed)) {
      uint64_t delay = g_experiment.delay_per_sample_ns.load(std::memory_order_relaxed);
      // Minimize delays: only the local count grows (settleDelays stretches
      // the delay to wall time, adds it and publishes).
      state->selected_delay_ns += delay * weight;
      g_experiment.selected_samples.fetch_add(weight, std::memory_order_relaxed);
    }
  } else if (g_experiment.candidate.load(std::memory_order_relaxed) == kNoLine) {
    uint64_t expected = kNoLine;
    g_experiment.candidate.compare_exchange_strong(expected, packed, std::memory_order_release);
  }
}

void settleDelays(ThreadState *state) {
  bool active = g_experiment.active.load(std::memory_order_acquire) != 0;
  uint64_t selected = state->selected_delay_ns;
  state->selected_delay_ns = 0;
  uint64_t local = state->local_delay_ns.load(std::memory_order_relaxed);
  uint64_t global = g_experiment.global_delay_ns.load(std::memory_order_relaxed);
  SchedWindow window;
  if (active && (selected || global > local)) {
    // Only when there is a delay to add or to pay.
    if (g_experiment_config.shared_cpus && g_process_oversubscribed.load(std::memory_order_relaxed))
      window = observeScheduler(state);
    if (selected && window.competing) {
      // CPU time taken from the CPUs the competing threads share; no
      // thread pauses for it (docs/runtime.md).
      g_experiment.shared_cpu_delay_ns.fetch_add(selected, std::memory_order_relaxed);
    } else if (selected) {
      local += selected;
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
  state->in_handler = 1;   // a sample signal meanwhile leaves its samples queued
  settleDelays(state);
  state->in_handler = 0;
  errno = saved_errno;
}

void threadEnds(ThreadState *state) {
  if (!g_experiment.active.load(std::memory_order_acquire))
    return;
  SchedTotals totals;
  watchThread(state, g_experiment_epoch.load(std::memory_order_relaxed), false, &totals);
  g_ended_wait_ns.fetch_add(totals.wait_ns, std::memory_order_relaxed);
  g_ended_competing_samples.fetch_add(totals.competing_samples, std::memory_order_relaxed);
}

void startExperiments() {
  const ExperimentConfig &c = g_experiment_config;
  // Started only once there is something to measure: the thread makes the
  // process multi-threaded, which costs a single-threaded program libc's
  // fast paths (an uncontended mutex pair: ~4 ns -> ~20 ns here).
  if (!c.enabled || (!c.end_to_end && g_progress.size() == 0))
    return;
  if (g_status.load(std::memory_order_acquire) != kActive)
    return;
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
  for (int i = 0; i < 2000 && !g_thread_stopped.load(std::memory_order_acquire); ++i)
    sleepNs(1000000);
  setExperimentActive(0);
  g_thread_started.store(0, std::memory_order_release);
  // Not restarted in this process (g_thread_launching stays set).
}

void experimentsForkChild() {
  setExperimentActive(0);
  g_experiment.selected.store(kNoLine);
  g_experiment.candidate.store(kNoLine);
  g_experiment.selected_samples.store(0);
  // The parent writes its own pending records; the child's start empty.
  g_pending_lock.store(false);
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
  if (g_pending_lock.exchange(true, std::memory_order_acquire)) {
    *size = 0;
    return nullptr; // held by a thread that stopped inside it: skip
  }
  // Left locked on purpose: the process is about to die.
  *size = g_pending_size;
  return g_pending;
}

bool isProfilerThread() { return tls_is_profiler; }

} // namespace causal::rt
