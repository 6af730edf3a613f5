//===- runtime/ExperimentPolicy.h - Choices the experiment controller makes -===//
//
// The pure parts of the experiment logic, kept apart so they can be tested
// without a running profiler: the seedable RNG, the speedup draw (Coz's
// rule), the length of the next experiment, scope globs and --fixed-line
// parsing. No allocation, no locks.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_RUNTIME_EXPERIMENTPOLICY_H
#define CAUSAL_RUNTIME_EXPERIMENTPOLICY_H

#include <stddef.h>
#include <stdint.h>

namespace causal::rt {

constexpr uint64_t kNoLine = ~0ull;
inline uint64_t packLine(uint32_t module, uint32_t line) { return (uint64_t(module) << 32) | line; }

/// What an experiment selects: a line (code that runs on a CPU) or the
/// waits at a line that one kind of pseudo-thread ends (WaitTargets.h). A
/// wait target is its line packed as above with the kind in the line
/// index's top bits, which no line table reaches; a sample's line never
/// equals one.
/// Numbered as causal/profile_schema.h's kWaitTargetKinds.
enum class WaitTarget : uint32_t { None = 0, Timer = 1, Disk = 2, Network = 3, Other = 4 };
constexpr uint32_t kWaitTargetShift = 28;
constexpr uint32_t kLineIndexMask = (1u << kWaitTargetShift) - 1;
inline uint64_t packWaitTarget(uint64_t line, WaitTarget kind) {
  return line | (uint64_t(kind) << kWaitTargetShift);
}
inline WaitTarget waitTargetOf(uint64_t target) {
  return target == kNoLine ? WaitTarget::None
                           : WaitTarget((uint32_t(target) >> kWaitTargetShift) & 7);
}
/// A line in a calling context (Paths.h, "Calling contexts"): its line packed
/// as above with the context's id (1 to 65535) in bits 44-59, above every
/// module slot; a sample's line packed with its thread's context equals it
/// when the sample counts.
constexpr uint32_t kContextShift = 44;
constexpr uint64_t kContextBits = 0xffffull << kContextShift;
inline uint64_t packContext(uint64_t line, uint32_t context) {
  return line | (uint64_t(context & 0xffff) << kContextShift);
}
inline uint32_t contextOf(uint64_t target) {
  return target == kNoLine ? 0 : uint32_t((target & kContextBits) >> kContextShift);
}
inline uint64_t withoutContext(uint64_t target) {
  return target == kNoLine ? kNoLine : (target & ~kContextBits);
}
/// The line of a target (itself for a line).
inline uint64_t lineOfTarget(uint64_t target) {
  return target == kNoLine ? kNoLine : (target & ~uint64_t(~kLineIndexMask) & ~kContextBits);
}
/// "timer", "disk", "network", "other" (null: None): the profile's name of a
/// wait target is "FILE:LINE (KIND wait)".
const char *waitTargetName(WaitTarget kind);

/// splitmix64: small, seedable, the same sequence everywhere.
class Rng {
public:
  explicit Rng(uint64_t seed = 0) : state_(seed) {}
  uint64_t next();
  /// Uniform in [0, bound] (inclusive), bound < 2^32.
  uint32_t uniformInclusive(uint32_t bound);

private:
  uint64_t state_;
};

/// The next splitmix64 value of |state|.
inline uint64_t splitmix64(uint64_t &state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// Uniform in [0, bound) (bound > 0): the line choice's draw in the sample
/// handler (no locks, no calls).
inline uint64_t nextRandomBelow(uint64_t &state, uint64_t bound) {
  return uint64_t((unsigned __int128)splitmix64(state) * bound >> 64);
}

/// A reservoir of one: a sample of |weight| that brings the weight seen
/// since the last choice to |total| replaces the candidate with probability
/// weight / total, so that the candidate is any of the samples seen with
/// probability in proportion to its weight, whatever their timing.
inline bool reservoirTakes(uint64_t &random, uint64_t weight, uint64_t total) {
  return nextRandomBelow(random, total) < weight;
}

/// Speedup of the next experiment in percent (0..100, multiple of
/// 100 / CAUSAL_SPEEDUP_DIVISIONS): r uniform in [0, weight + divisions];
/// r <= weight gives 0 (the baselines), else (r - weight) steps.
uint32_t drawSpeedupPercent(Rng &rng);

/// Speedup in percent of A/B experiment number |index| (0, 1, 2, ... in a
/// run) that alternates 0 % and |speedup_percent| as 0, S, S, 0, 0, S, S, 0:
/// the pairs (0, S) and (S, 0) take turns, so a steady drift of the
/// program's speed moves both arms alike (docs/report.md, "Confirmation").
uint32_t abSpeedupPercent(uint64_t index, uint32_t speedup_percent);

/// Length of the experiment after one of |length_ns| whose least-visited
/// progress point saw |min_visits| visits: doubled below CAUSAL_MIN_VISITS,
/// halved (not below |minimum_ns|) above twice that, else unchanged; never
/// above CAUSAL_MAX_EXPERIMENT_NS.
uint64_t nextExperimentLength(uint64_t length_ns, uint64_t min_visits, uint64_t minimum_ns);

/// Delay each sample in the selected line adds: speedup x sample period.
inline uint64_t delayPerSample(uint32_t speedup_percent, uint64_t period_ns) {
  return period_ns * speedup_percent / 100;
}

/// The divisor k of the selected line's finer period (docs/runtime.md, "What
/// the samples cost, and the experiment's line at a finer period"): during
/// an experiment a perf-sampled thread whose sample falls in the selected
/// line samples every |period_ns| / k until the experiment ends. 1: never.
/// |line_period_ns| is CAUSAL_LINE_SAMPLE_PERIOD_NS: 0, never; above 0, k =
/// |period_ns| / it; -1 (unset), CAUSAL_LINE_PERIOD_DIVISOR, lowered while
/// period / k is under CAUSAL_LINE_PERIOD_COST_MULTIPLE x |cost_ns|, what a
/// sample costs its thread. Either way, period / k stays at least
/// CAUSAL_MIN_SAMPLE_PERIOD_NS and k at most CAUSAL_LINE_PERIOD_DIVISOR_MAX.
uint32_t linePeriodDivisor(uint64_t period_ns, int64_t line_period_ns, uint64_t cost_ns);

/// The delay a signal of the selected line adds when it falls in the line:
/// the speedup of the program's CPU time it stands for, |signal_period_ns|
/// (the period, or the finer one) less what the sample itself cost,
/// |cost_ns| (0: the costs are not taken out). The cost is added to the
/// thread's count for every signal (chargeSignal, Experiment.cpp), so a
/// signal in the line adds speedup x (period - cost) + cost in all.
inline uint64_t lineDelayPerSignal(uint32_t speedup_percent, uint64_t signal_period_ns,
                                   uint64_t cost_ns) {
  uint64_t work = signal_period_ns > cost_ns ? signal_period_ns - cost_ns : 0;
  return work * speedup_percent / 100;
}

/// What a thread does with its delay counts after processing samples (the
/// paper's rules, counts in ns). |floor| is the global count when the
/// running experiment started (older debts are forgiven).
struct DelaySettlement {
  uint64_t local;           ///< the thread's new local count
  uint64_t raise_global_to; ///< 0, or the value the global count must reach
  uint64_t pause_ns;        ///< how long the thread must pause
};
DelaySettlement settleDelayCounts(uint64_t local, uint64_t global, uint64_t floor,
                                  bool experiment_active);

/// A progress visit's virtual time: |real_ns| since the experiment started
/// less the delays the visiting thread has taken since then (its local count
/// |local| above the start's global count |floor|: paused for, credited, or
/// inserted by its own samples) and its pause's overshoot |excess|. Not the
/// global count: a thread that still owes delays (inserted while it paid
/// what it owed at the visit) is that much ahead of the other threads in
/// virtual time, and pays them after the visit, inside the window the visit
/// opens (docs/report.md, "Whose clock a visit reads").
int64_t visitVirtualNs(int64_t real_ns, uint64_t local, uint64_t floor, uint64_t excess);

/// A latency point over one experiment window (Experiment.cpp): its counters
/// (begins and ends, the program's own increments, each made after its
/// visit's call) at the window's start and end, and what the visits' calls
/// summed while the flag was up: their number and their virtual times
/// (docs/report.md, "Latency").
struct LatencyCounts {
  uint64_t begins = 0, ends = 0;
};
struct LatencySums {
  int64_t begin_ns = 0, end_ns = 0;
  uint64_t begins = 0, ends = 0;
};
/// Visits that may race a window's start or end: a thread between its
/// visit's call and its count as the flag rises or falls, one or two at a
/// time (more only when the profiler thread is held up right there).
constexpr uint64_t kRacingVisits = 2;
/// The window's mean number of requests in flight in virtual time and the
/// begins and ends that count for it.
struct LatencyWindow {
  double in_flight; ///< NaN: not from the visits (the caller samples)
  uint64_t arrivals, departures;
};
/// The window of length |virtual_end| (> 0) from the visits: area =
/// sum(end times) - sum(begin times) + n_E * virtual_end. The visits are
/// those in |sums|, and n_E comes from them: n_E = n_S + begins - ends. The
/// counters disagree with the sums by the visits that raced the edges:
/// one counted in |start| whose call, after the flag rose, is in the sums as
/// well (the sums hold more than the counters gained) was counted twice, and
/// n_S is lowered; one counted after the flag fell (the counters gained more)
/// is after the window, and left out. NaN when the sums and the counters
/// differ by more than kRacingVisits (visits from code built without the
/// pass) or the counts make no sense.
LatencyWindow latencyWindow(const LatencyCounts &start, const LatencyCounts &end,
                            const LatencySums &sums, int64_t virtual_end);

/// A thread woken by another program thread skips the delays inserted while
/// it was blocked (from |global_before| to |global_now|), never past the
/// global count: a sample of its own that raised the global count after
/// |global_before| was read (a sample signal between the hook's read and the
/// call) is already in |local|, and counting it again made every other
/// thread pay it twice (bench/oversub's 128-thread pool: 3-26 ms of extra
/// delay in one experiment of 100-400 ms). Never lowers |local|.
inline uint64_t creditedLocal(uint64_t local, uint64_t global_before, uint64_t global_now) {
  if (global_now <= global_before || local >= global_now)
    return local;
  uint64_t credited = local + (global_now - global_before);
  return credited < global_now ? credited : global_now;
}

/// The delay that stands for |shared_cpu_delay_ns| of virtual speedup taken
/// by threads that competed for CPUs: in a process whose runnable threads
/// outnumber the CPUs they share, removing CPU time shortens the run by that
/// time divided by the CPUs the competing threads kept busy on average,
/// B = |competing_cpu_ns| / |elapsed_ns|: their CPU time as the scheduler
/// counts it, kernel time included (a thread's system calls hold a CPU as its
/// own code does; perf samples user mode only, so B in samples left the
/// kernel time out), pauses' spins excluded. docs/runtime.md derives it. The
/// selected samples that added the shared delay (|shared_cpu_delay_ns| /
/// |delay_per_sample_ns| of them, each a |period_ns| of CPU) are the
/// competing threads' CPU time too, whatever the end-of-experiment count
/// says: so the result never exceeds speedup x |elapsed_ns|. 0 when nothing
/// was busy.
uint64_t sharedCpuDelay(uint64_t shared_cpu_delay_ns, uint64_t competing_cpu_ns,
                        uint64_t delay_per_sample_ns, uint64_t period_ns, uint64_t elapsed_ns);

/// Whether the process's threads outnumbered its CPUs over an experiment:
/// |running| threads on a CPU and |waiting| for one, on average, more than
/// CAUSAL_OVERSUBSCRIBED_PERCENT % of |cpus|.
bool processOversubscribed(double cpus, double running, double waiting);

/// The saturation probe's threads waiting for a CPU, on average, as it
/// counts them for processWaitsForOthers: |wait_ns| of run-queue time over
/// |elapsed_ns|, or none below CAUSAL_SATURATION_PROBE_MIN_WAIT_NS (one
/// preemption in a probe of 20 ms is not other processes holding the CPUs).
double probeWaitingForOthers(uint64_t wait_ns, uint64_t elapsed_ns);

/// Whether the process's threads waited for CPUs that other processes held
/// over an experiment: not oversubscribed (above), and |waiting| more than
/// 1 / CAUSAL_COMPETING_WAIT_DIVISOR of |running|. Then selected samples are
/// scaled by their thread's CPU share (cpuShareScaleX1024).
bool processWaitsForOthers(double cpus, double running, double waiting);

/// Whether a thread's pause that spins leaves no other thread without a CPU:
/// |runnable| other threads of the program could run (outside blocking
/// calls), |cpus| the process may use (one of them the pausing thread's).
bool spinLeavesCpuIdle(uint32_t runnable, uint32_t cpus);

/// Whether a thread's pause may end with a spin (docs/runtime.md, "Virtual
/// speedup and delay accounting"): over the last window of |window_ns|, the
/// CPUs available less the time the process's threads spent on a CPU or
/// waiting for one came to |spare_ns| (negative when threads waited), and
/// this thread took |own_ns| of that time. Without it, the other threads
/// must have left at least CAUSAL_SPIN_FREE_CPU_PERCENT % of a CPU free:
/// else the spin takes a CPU from a thread that would have run on it. No
/// window yet: yes.
bool spinIsHarmless(int64_t spare_ns, uint64_t own_ns, uint64_t window_ns);

/// Decays the sums of CPU and run-queue time by a quarter and adds a new
/// window's; true if the thread competes for a CPU (waits more than
/// 1 / CAUSAL_COMPETING_WAIT_DIVISOR of the time it runs).
bool updateCompetition(uint64_t *recent_cpu_ns, uint64_t *recent_wait_ns, uint64_t cpu_ns,
                       uint64_t wait_ns);

/// The factor, x1024, by which the delay of a selected sample is scaled when
/// its thread shares its CPU with other processes (the process does not
/// outnumber its CPUs): 1 / the thread's CPU share, (|cpu_ns| + |wait_ns|) /
/// |cpu_ns|, its CPU and run-queue time over the last experiment (schedstat),
/// when it waited more than 1 / CAUSAL_COMPETING_WAIT_DIVISOR of the time it
/// ran (else 1024, as with no CPU time), capped at
/// CAUSAL_CPU_SHARE_SCALE_MAX_PERCENT %.
uint32_t cpuShareScaleX1024(uint64_t cpu_ns, uint64_t wait_ns);

/// The factor, x1024, by which a perf-sampled thread's delays for samples of
/// the selected line are scaled for the samples the kernel did not deliver:
/// |arrived| samples came in a window in which the thread ran
/// |covered_user_ns| of user time with its sampler on (perf samples user mode
/// only) and |user_ns| of |total_ns| CPU time in all. expected / arrived,
/// where expected = covered_user_ns / period_ns, when that is at least
/// CAUSAL_LOSS_SCALE_FROM_PERCENT %, capped at CAUSAL_LOSS_SCALE_MAX_PERCENT %;
/// else 1024, as when system time exceeded CAUSAL_LOSS_MAX_SYSTEM_PERCENT % of
/// the window (tunables.h).
uint32_t lostSampleScaleX1024(uint64_t arrived, uint64_t covered_user_ns, uint64_t user_ns,
                              uint64_t total_ns, uint64_t period_ns);

/// A pause of |owed_ns| with |excess_ns| overshoot carried from earlier
/// pauses: how long to sleep and the overshoot left.
struct PausePlan {
  uint64_t sleep_ns;
  uint64_t excess_left_ns;
};
PausePlan planPause(uint64_t owed_ns, uint64_t excess_ns);

/// True if |path| matches one of the ':'-separated fnmatch globs of |globs|.
bool matchesAnyGlob(const char *globs, const char *path);

/// The default source scope: not a system file (CAUSAL_SYSTEM_SOURCE_GLOBS).
bool inDefaultSourceScope(const char *path);

/// Splits "FILE:LINE" (the last ':' separates); false if malformed. |file|
/// receives FILE, NUL-terminated.
bool parseFixedLine(const char *text, char *file, size_t file_size, uint32_t *line);
/// CAUSAL_FIXED_WAIT: FILE:LINE, or FILE:LINE@KIND with KIND one of timer,
/// disk, network, other (*kind None without it). False if it is neither.
bool parseFixedWait(const char *text, char *file, size_t file_size, uint32_t *line,
                    WaitTarget *kind);

/// True if a table path names the --fixed-line FILE: equal, the path ends
/// with "/" FILE, or a relative path is a suffix ("/" path) of FILE.
bool pathMatchesFixedFile(const char *path, const char *file);

} // namespace causal::rt

#endif // CAUSAL_RUNTIME_EXPERIMENTPOLICY_H
