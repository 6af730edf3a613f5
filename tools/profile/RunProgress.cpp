//===- RunProgress.cpp - A run's causal profile so far, for `causal run` --===//

#include "RunProgress.h"

#include <algorithm>

namespace causal::profile {

const PointResult *rankingPoint(const LineResult &line, const AnalysisOptions &options) {
  for (const PointResult &point : line.points) {
    double value = options.rankBy == RankBy::MaxImpact ? point.maxImpact : point.slope;
    if ((std::isnan(value) ? -INFINITY : value) == line.rankKey)
      return &point;
  }
  return line.points.empty() ? nullptr : &line.points.front();
}

bool leaderStandsOut(const Analysis &analysis, const AnalysisOptions &options) {
  if (analysis.lines.size() < 2 || !analysis.lines.front().discovery)
    return false;
  const PointResult *leader = rankingPoint(analysis.lines.front(), options);
  if (!leader || !leader->slopeInterval.valid)
    return false;
  for (size_t i = 1; i < analysis.lines.size(); ++i) {
    const PointResult *other = rankingPoint(analysis.lines[i], options);
    if (!other || !other->slopeInterval.valid ||
        other->slopeInterval.high >= leader->slopeInterval.low)
      return false;
  }
  return true;
}

RunProgress runProgress(const Profile &profile, const Analysis &analysis,
                        const AnalysisOptions &options) {
  RunProgress progress;
  progress.runs = profile.runs.size();
  progress.experiments = analysis.experiments;
  progress.rankedLines = analysis.lines.size();
  progress.ended = !profile.runs.empty();
  for (const Run &run : profile.runs) {
    if (!run.partsId.empty() && !run.shutdownSeen)
      progress.ended = false; // a run in parts still running (or killed)
    progress.profiledSeconds = std::max(progress.profiledSeconds, run.runtimeNs / 1e9);
  }
  if (!analysis.lines.empty()) {
    const LineResult &first = analysis.lines.front();
    progress.leader = first.line;
    progress.leaderDiscovery = first.discovery;
    if (const PointResult *point = rankingPoint(first, options)) {
      progress.leaderSlope = point->slope;
      progress.leaderInterval = point->slopeInterval;
    }
    progress.leaderStandsOut = leaderStandsOut(analysis, options);
  }
  return progress;
}

bool RankingStability::update(const RunProgress &progress) {
  if (!progress.leaderStandsOut) {
    streak_ = 0;
    leader_.clear();
  } else if (progress.leader != leader_) {
    streak_ = 1;
    leader_ = progress.leader;
  } else if (progress.experiments > experiments_) {
    ++streak_;
  }
  experiments_ = progress.experiments;
  return streak_ >= kStableReadings;
}

} // namespace causal::profile
