//===- RunProgress.h - A run's causal profile so far, for `causal run` ----===//
//
// What `causal run` shows while the program runs (the status line, the
// summary line) and what `causal run --until-stable` decides from: the
// Analysis of what the run appended to the profile so far, computed by
// profile::analyze with the report's default options, so that "ranked" and
// "leader" mean exactly what `causal report` shows.
//
// The ranking is stable (docs/usage.md, "Bounding a run") when the same line
// stood out in kStableReadings consecutive readings of the profile, each with
// more experiments than the one before. A line stands out when at least two
// lines are ranked, it ranks first, the false-discovery control kept it (its
// slope is above 0) and its slope interval lies entirely above the slope
// interval of every other ranked line.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_PROFILE_RUNPROGRESS_H
#define CAUSAL_PROFILE_RUNPROGRESS_H

#include "Analysis.h"

#include <cstddef>
#include <string>

namespace causal::profile {

/// A run's profile so far, in the few numbers a status line shows.
struct RunProgress {
  size_t runs = 0;            // runs (processes) read
  size_t experiments = 0;     // experiments read
  size_t rankedLines = 0;     // lines with a curve (the report's ranking)
  bool ended = false;         // every run read is complete (written whole, or its last part read)
  double profiledSeconds = 0; // the longest run's last `runtime` (how long it was profiled)
  std::string leader;         // FILE:LINE ranked first ("" if none)
  double leaderSlope = NAN;
  Interval leaderInterval; // its slope interval
  bool leaderDiscovery = false;
  bool leaderStandsOut = false; // the rule above
};

/// The point of \p line that gave it its rank (null if none).
const PointResult *rankingPoint(const LineResult &line, const AnalysisOptions &options);

/// Whether the first line of \p analysis stands out (the rule above).
bool leaderStandsOut(const Analysis &analysis, const AnalysisOptions &options);

/// The status of \p profile analysed as \p analysis.
RunProgress runProgress(const Profile &profile, const Analysis &analysis,
                        const AnalysisOptions &options);

/// Readings of the same leader standing out, with more experiments each
/// time, that make the ranking stable.
constexpr size_t kStableReadings = 5;

/// Follows the readings of one run (the rule above).
class RankingStability {
public:
  /// Takes one reading; true once the ranking is stable.
  bool update(const RunProgress &progress);
  size_t streak() const { return streak_; }

private:
  std::string leader_;
  size_t experiments_ = 0;
  size_t streak_ = 0;
};

} // namespace causal::profile

#endif // CAUSAL_PROFILE_RUNPROGRESS_H
