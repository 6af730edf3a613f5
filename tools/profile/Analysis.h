//===- Analysis.h - From experiments to causal profiles -------------------===//
//
// Turns the experiments of a Profile into one speedup curve per (selected
// line, progress point):
//
//   * experiments are grouped by line, progress point and speedup (rounded
//     to 1 %); every experiment counts, and a group whose experiments
//     together saw fewer than `minVisits` visits is dropped (dropping
//     single low-visit experiments instead would bias the curve upwards);
//   * pooled baselines: a 0 % experiment inserts no delay whatever line it
//     names, so each curve's baseline is the line's own 0 % experiments
//     together with the `baselineWindow` (default 1) nearest 0 % experiments (same run,
//     same point) of each of the line's experiments;
//   * throughput: period p = sum(duration) / sum(delta); latency: Little's
//     law, W = L / lambda with L the duration-weighted mean in-flight count
//     and lambda = sum(arrivals) / sum(duration);
//   * program speedup at line speedup s: (p0 - ps) / p0 (W for latency), so
//     a positive value always means "the program got faster";
//   * phase correction (Coz paper, Eq. 8), on by default: every value is
//     multiplied by f = (s_line / T) / (s_obs / t_obs), the fraction of the
//     run during which the line runs, clamped to [0, 1];
//   * least-squares slope through the origin, maximum impact (only over
//     speedups measured by two experiments or more), and percentile
//     bootstrap 95 % intervals for every curve point, the slope and the
//     maximum;
//   * the physical bound: a speedup s of a line that ran b = samples x
//     period / wall time removes at most s x b of a throughput run; a slope
//     or curve point above it beyond its interval is flagged, and such a
//     line ranks below every line that respects its bound;
//   * a (line, point) with less evidence than `minExperiments` experiments
//     and `minEvidenceVisits` visits at speedups above 0 is not ranked;
//   * confirmation: the runs of `causal confirm` (experiments marked
//     ab-speedup=S, 0 % and S alternating on one fixed line) are kept out
//     of all of the above; for each of their (line, point) the A/B program
//     speedup at S with a bootstrap interval over A/B pairs, compared with
//     the ranking's prediction slope x S: confirmed, refuted or open.
//
// docs/report.md gives the formulas.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_PROFILE_ANALYSIS_H
#define CAUSAL_PROFILE_ANALYSIS_H

#include "LineName.h"
#include "ProfileReader.h"

#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace causal::profile {

enum class RankBy { Slope, MaxImpact, Name };

struct AnalysisOptions {
  double minVisits = 5;   // per (line, point, speedup) group, all its experiments together
  size_t minSpeedups = 5; // distinct speedups, baseline included (Coz: 5)
  bool phaseCorrection = true;
  /// Throughput periods from the visits' times where the profile has them
  /// (docs/report.md, "Throughput from visit times"); false: counts only.
  bool visitTimes = true;
  size_t bootstrapRounds = 1000; // 0 disables the intervals
  /// A set of experiments resampled (a curve's, or its pooled neighbours)
  /// of at least this many (256 at most: a drawn set's counts are kept in
  /// a byte) gets Poisson(1) weights per round instead of a draw of as
  /// many with replacement (docs/report.md, "Intervals").
  size_t poissonBootstrapFrom = 256;
  uint64_t seed = 1;
  double confidence = 0.95;
  RankBy rankBy = RankBy::Slope;
  std::vector<std::string> onlyPoints; // empty: all progress points
  /// Pooled baselines: for each experiment of a line, this many nearest
  /// 0 % experiments of the same run and progress point (any selected line)
  /// join the line's baseline. 0: only the line's own 0 % experiments.
  size_t baselineWindow = 1;
  /// Evidence a (line, point) needs before it is ranked: experiments at
  /// speedups above 0 in its curve, and the visits (throughput) or
  /// arrivals (latency) they saw together.
  size_t minExperiments = 10;
  double minEvidenceVisits = 100;
  /// Many lines compared: Benjamini-Hochberg over the ranked lines' one-sided
  /// bootstrap p-values (slope <= 0); the lines it keeps at this false-
  /// discovery rate rank above the others. 0, or no bootstrap: off.
  double falseDiscoveryRate = 0.1;
  /// Confirmation (A/B runs): the A/B pairs a (line, point) needs before it
  /// gets a verdict, and the interval width (program speedup, 0.10 = 10
  /// points) at which the interval is narrow enough to refute a line and
  /// for `causal confirm` to stop.
  size_t minConfirmPairs = 10;
  double confirmNarrowWidth = 0.10;
};

struct Interval {
  double low = 0, high = 0;
  bool valid = false;
};

struct CurvePoint {
  double speedup = 0;        // line speedup, 0..1
  double programSpeedup = 0; // positive: faster
  Interval interval;
  size_t experiments = 0;
  double durationNs = 0;
  bool exceedsBound = false; // above speedup x bound, beyond its interval
};

/// The physical bound of a (line, point) curve (docs/report.md, "Physical
/// bound"). A virtual speedup s of a line removes at most s x (CPU time
/// sampled in the line) from a run, so no throughput point can improve by
/// more than s x b.
struct Bound {
  bool known = false;   // false: latency point, or no samples to compute b from
  double b = NAN;       // whole runs: sum(samples x period) / sum(runtime)
  double inPhase = NAN; // during the line's own 0 % experiments (b_A)
  /// Run-queue stretch: (running + waiting) / running threads over the
  /// runs' experiments, 1 if not recorded or a wait target.
  double stretch = 1;
  double limit = NAN; // the b the curve is checked against: max(b, b_A) x stretch
  /// How far above limit (relative) an interval must lie to be flagged: b
  /// is itself measured (docs/report.md, "Physical bound").
  double margin = NAN;
  bool slopeExceeds = false;
  size_t pointsExceeding = 0;
  std::string note; // why there is no bound, if so
  bool exceeded() const { return slopeExceeds || pointsExceeding > 0; }
};

/// Why a (line, point) pair has no curve.
enum class Shortfall {
  None,
  NoBaseline,
  BaselineTooFewVisits,
  InvalidBaseline,
  TooFewSpeedups,
  TooLittleEvidence
};

struct PointResult {
  std::string point;
  PointKind kind = PointKind::Throughput;
  std::vector<CurvePoint> curve; // sorted by speedup, baseline (0 %) first
  double slope = 0;
  Interval slopeInterval;
  /// One-sided bootstrap p-value of "slope <= 0": (1 + replicates <= 0) /
  /// (1 + replicates); NaN without intervals.
  double slopePValue = NAN;
  double maxImpact = NAN; // NaN: no speedup above 0 was measured twice
  double maxImpactSpeedup = NAN;
  Interval maxImpactInterval;
  size_t experiments = 0;         // the line's own, all speedups
  size_t baselineExperiments = 0; // pooled baseline, own ones included
  size_t ownBaselineExperiments = 0;
  size_t distinctSpeedups = 0;
  double evidenceVisits = 0; // visits (latency: arrivals) at speedups above 0
  Bound bound;
  Shortfall shortfall = Shortfall::None;
  // Phase correction (Eq. 8).
  bool phaseCorrected = false;
  double phaseFactor = 1; // multiplied into every program speedup
  std::string phaseNote;  // why no correction was possible, if so
};

/// Share of its CPUs that a process's CPUs must stand idle, and the most of
/// them it may run on, for its threads' waits for a CPU to count as wake-ups
/// rather than competition (cpusLeftIdle).
inline constexpr double kIdleCpuShare = 0.15;

/// Whether CPUs stood idle while the process could have used them: |idle|
/// CPUs idle on average (below 0: not recorded) at least kIdleCpuShare of
/// its |cpus|, and its threads |running| on at most 1 - kIdleCpuShare of
/// them (a CPU quota leaves the machine's other CPUs idle while the process
/// runs on all it may use). Threads that waited for a CPU then waited to be
/// woken up, not for CPUs that other threads held (docs/report.md,
/// "Saturation").
inline bool cpusLeftIdle(double cpus, double running, double idle) {
  return cpus > 0 && idle >= 0 && idle >= kIdleCpuShare * cpus &&
         running <= (1 - kIdleCpuShare) * cpus;
}

/// How saturated the process was during a line's experiments (the
/// runtime's cpus=, running=, waiting=, idle=, shared-cpu-delay= fields;
/// averages over the experiments that wrote them). docs/report.md explains
/// the notes.
struct Saturation {
  size_t experiments = 0;      // experiments that recorded it (0: none did)
  double cpus = 0;             // CPUs the process could use
  double running = 0;          // program threads on a CPU
  double waiting = 0;          // program threads waiting for a CPU
  size_t idleExperiments = 0;  // of the experiments, those that recorded idle=
  double idle = -1;            // CPUs idle (below 0: not recorded)
  double sharedDelayShare = 0; // of the inserted delay, the part from shared CPUs
  /// More threads wanted a CPU than there were CPUs.
  bool oversubscribed() const { return experiments && running + waiting > 1.1 * cpus; }
  /// Threads waited for a CPU while CPUs stood idle: the waits were
  /// wake-ups (hand-offs between threads), not competition.
  bool waitedWithCpusIdle() const {
    return experiments && (oversubscribed() || waiting > 0.5) && cpusLeftIdle(cpus, running, idle);
  }
  /// Threads waited for CPUs that the process did not keep busy and that
  /// did not stand idle: other processes took them.
  bool otherLoad() const {
    return experiments && waiting > 0.5 && running < 0.8 * cpus &&
           !cpusLeftIdle(cpus, running, idle);
  }
};

struct LineResult {
  std::string line;                // FILE:LINE, or FILE:LINE (KIND wait): splitLineName()
  std::vector<PointResult> points; // only those with a curve
  size_t experiments = 0;
  double rankKey = 0;        // slope or max impact of its best point
  bool exceedsBound = false; // some point exceeds its physical bound
  double pValue = NAN;       // slopePValue of the point that gave rankKey
  bool discovery = false;    // kept by the false-discovery control
  Saturation saturation;
};

struct NotEnoughData {
  std::string line;
  std::string point;
  Shortfall reason = Shortfall::None;
  size_t experiments = 0;
  size_t distinctSpeedups = 0;
  size_t evidenceExperiments = 0; // at speedups above 0 with a value
  double evidenceVisits = 0;
  /// What it lacks, in words ("6 more experiments at speedups above 0%"),
  /// its samples (over the runs), and roughly how many more seconds of
  /// running would give it that at the rate its experiments came (NaN: no
  /// estimate; a longer run may not help). estimateShortfalls() fills them.
  std::string lacking;
  double samples = 0;
  double moreSeconds = NAN;
};

/// What identifies a FILE:LINE to a person: its function (demangled, from
/// the profile's `samples function=`) and its source text (the line of the
/// file, trimmed, when the file is readable: addSourceText()).
struct LineLabel {
  std::string function;
  std::string source;
};

struct ProgressPointSummary {
  std::string name;
  PointKind kind = PointKind::Throughput;
  size_t experiments = 0; // experiments in which it was measured (latency: duration > 0)
  double visits = 0;      // delta or arrivals, summed
  double durationNs = 0;  // of those experiments, summed
  /// Throughput: experiments whose period came from the visits' times
  /// (docs/report.md, "Throughput from visit times"), not from their count.
  size_t periodFromTimes = 0;
  /// Experiments that measured it but were ignored for a duration <= 0
  /// (latency points only; not in the counts above).
  size_t ignoredExperiments = 0;
  /// Line/point pairs of this point left unranked for want of visits
  /// (NotEnoughData with a reason other than an invalid baseline).
  size_t pairsShortOfVisits = 0;
  double visitsPerExperiment() const { return experiments ? visits / experiments : 0; }
  /// Too few visits per experiment for a line to reach the evidence minimum
  /// in `minExperiments` experiments at speedups above 0.
  bool sparse(const struct AnalysisOptions &o) const;
};

/// What A/B runs say about a line's ranking (docs/report.md, "Confirmation").
enum class Verdict {
  Confirmed, // the interval lies above 0
  Refuted,   // the effect is below 0, far below the prediction, or narrowly about 0
  Open       // not enough evidence either way
};

const char *verdictName(Verdict verdict); // "confirmed", "refuted", "open"

/// One (line, point) measured by A/B runs: experiments at 0 % (arm A) and at
/// `speedup` (arm B) alternating on the fixed line.
struct Confirmation {
  std::string line;
  std::string point;
  PointKind kind = PointKind::Throughput;
  double speedup = NAN; // of arm B, 0..1
  size_t runs = 0;      // A/B runs that measured it
  size_t experiments = 0;
  size_t pairs = 0;            // adjacent (A, B) pairs, the unit of the bootstrap
  size_t starvedPairs = 0;     // left out: a window starved of CPU by other processes
  double durationNs = 0;       // of the paired experiments
  double visits = 0;           // visits (latency: arrivals) in them
  double estimate = NAN;       // program speedup at `speedup`: (m_A - m_B) / m_A
  Interval interval;           // percentile bootstrap over pairs
  size_t rank = 0;             // the line's rank in the ranking (1 = top); 0: not ranked
  bool predicted = false;      // the ranking has a curve of this (line, point)
  double prediction = NAN;     // slope x speedup
  Interval predictionInterval; // slope interval x speedup
  bool predictionPhaseCorrected = false;
  Verdict verdict = Verdict::Open;
  std::string reason; // why this verdict, in words
  double width() const { return interval.valid ? interval.high - interval.low : INFINITY; }
};

/// The verdict of a Confirmation from its estimate, interval, pairs and
/// prediction (sets `verdict` and `reason`); docs/report.md gives the rules.
void judgeConfirmation(Confirmation &confirmation, const AnalysisOptions &options);

/// When `causal confirm` stops measuring a line: when its interval is
/// narrow (at least minConfirmPairs pairs and a width of at most
/// confirmNarrowWidth) or the time budget is spent. The rule looks at the
/// width only, never at the verdict, so that looking again after every run
/// does not make a confirmation likelier than the interval's level says.
enum class ConfirmStop { Continue, Narrow, Budget };
ConfirmStop confirmationStop(const Confirmation *confirmation, double elapsedSeconds,
                             double budgetSeconds, const AnalysisOptions &options);

struct Analysis {
  std::vector<LineResult> lines; // ranked
  std::vector<NotEnoughData> notEnoughData;
  std::vector<ProgressPointSummary> progressPoints;
  size_t runs = 0;
  size_t runsWithRuntime = 0;
  size_t experiments = 0;             // all experiments read
  size_t experimentsUsed = 0;         // with at least one usable measurement
  size_t droppedLowVisits = 0;        // (line, point, speedup) groups under minVisits
  size_t droppedBadDuration = 0;      // experiments with a duration <= 0, none of it used
  size_t nonPositiveDurationKept = 0; // the same, their throughput points used
  double experimentTimeNs = 0;        // sum of experiment durations
  double runtimeNs = 0;               // sum of the runs' runtimes
  double insertedDelayNs = 0;         // sum of `delay=` (causal extension) where written
  bool latencyTimeAveraged = false;   // every run was written by causal
  size_t runsWithAssumedPeriod =
      0;                     // runs with runtime but no sample-period: kDefaultSamplePeriodNs
  double samplesInLines = 0; // over runs: each run's last samples records
  double samplesOutside = 0; // over runs: samples outside instrumented code (causal)
  /// Over the runs that recorded them (causal, schema 5): samples the
  /// sampled threads' CPU time should have given, and those that arrived;
  /// runs where fewer than CAUSAL_THIN_PROFILE_PERCENT % arrived (thin).
  double samplesExpected = 0;
  double samplesArrived = 0;
  size_t thinRuns = 0;
  /// Of the samples that arrived, those a CPU-time timer took (schema 8):
  /// they cover kernel time, perf's user time only.
  double timerSamples = 0;
  /// The false-discovery control: applied (options and intervals allow it),
  /// lines it compared (those with a p-value), lines it kept.
  bool fdrApplied = false;
  double fdrRate = 0;
  size_t fdrCompared = 0;
  size_t discoveries = 0;
  /// A/B runs (`causal confirm`): kept out of everything above.
  size_t confirmationRuns = 0;
  size_t confirmationExperiments = 0;
  std::vector<Confirmation> confirmations; // ranked lines first, by rank
  std::vector<std::string> warnings;
  /// Every line above (ranked, without enough data, confirmed) that has a
  /// function or source text, by FILE:LINE.
  std::map<std::string, LineLabel> labels;
};

Analysis analyze(const Profile &profile, const AnalysisOptions &options);

/// The confirmation of \p line (its ranked point, else its first), or null.
const Confirmation *findConfirmation(const Analysis &analysis, const std::string &line);

/// Samples of one FILE:LINE, summed over runs (each run's last cumulative
/// `samples` record).
struct LineSamples {
  std::string location;
  double count = 0;
  LineLabel label;
};

/// Every sampled line, most samples first (ties by location). This is the
/// ordinary profile: where the time went, not what would speed it up.
std::vector<LineSamples> hottestLines(const Profile &profile);

const char *shortfallText(Shortfall reason);

/// Fills each notEnoughData entry's lacking, samples and moreSeconds from
/// the options' minimums and the line's observed rate of experiments
/// (analyze() calls it; docs/report.md, "Not enough data").
void estimateShortfalls(Analysis &analysis, const Profile &profile, const AnalysisOptions &options);
/// Function names of the analysis' lines from the profile (analyze() calls it).
void addFunctionNames(Analysis &analysis, const Profile &profile);
/// Source text of the analysis' lines (or of sampled lines): each file read
/// once, only regular files up to 64 MiB; the line trimmed of surrounding
/// white space and cut to \p maxChars (with "..."). Unreadable files,
/// lines past the end: no text.
void addSourceText(Analysis &analysis, size_t maxChars = 100);
void addSourceText(std::vector<LineSamples> &lines, size_t maxChars = 100);

/// Helpers shared with the tests.
double slopeThroughOrigin(const std::vector<CurvePoint> &curve);
/// Value at quantile q (0..1) of sorted values, linear interpolation.
double quantileSorted(const std::vector<double> &sorted, double q);
/// Quantile p (0 < p < 1) of Student's t distribution with \p df > 0
/// degrees of freedom.
double studentTQuantile(double p, double df);
/// The level at which a percentile bootstrap interval of an estimate from
/// \p n resampled units is read so that it covers about \p confidence:
/// the expanded percentile interval (Hesterberg, 2015), whose tails are
/// those of sqrt(n / (n - 1)) t_{n-1} instead of the normal's. A plain
/// percentile interval is too narrow for small n (95 % from 7 units
/// covers about 87 %); for n of 100 the level is 0.95 -> 0.954. n < 2:
/// \p confidence.
double expandedPercentileConfidence(double confidence, size_t n);

} // namespace causal::profile

#endif
