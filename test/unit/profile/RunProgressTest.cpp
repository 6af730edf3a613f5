//===- RunProgressTest.cpp - `causal run`'s status and --until-stable -----===//
#include "RunProgress.h"

#include <gtest/gtest.h>

namespace causal::profile {
namespace {

LineResult rankedLine(const std::string &line, double slope, double low, double high,
                      bool discovery) {
  LineResult result;
  result.line = line;
  PointResult point;
  point.point = "p";
  point.slope = slope;
  point.slopeInterval = {low, high, true};
  result.points.push_back(point);
  result.rankKey = slope;
  result.discovery = discovery;
  return result;
}

Analysis ranking(std::vector<LineResult> lines) {
  Analysis analysis;
  analysis.lines = std::move(lines);
  analysis.experiments = 100;
  return analysis;
}

TEST(RunProgress, LeaderStandsOutOnlyAboveEveryOtherInterval) {
  AnalysisOptions options;
  // Separated: the leader's low end above the other's high end.
  EXPECT_TRUE(leaderStandsOut(ranking({rankedLine("a.c:1", 0.7, 0.6, 0.8, true),
                                       rankedLine("a.c:2", 0.2, 0.1, 0.3, false)}),
                              options));
  // Overlapping intervals: not yet.
  EXPECT_FALSE(leaderStandsOut(ranking({rankedLine("a.c:1", 0.7, 0.25, 0.8, true),
                                        rankedLine("a.c:2", 0.2, 0.1, 0.3, false)}),
                               options));
  // A third line overlapping is enough to say no.
  EXPECT_FALSE(leaderStandsOut(
      ranking({rankedLine("a.c:1", 0.7, 0.6, 0.8, true), rankedLine("a.c:2", 0.2, 0.1, 0.3, false),
               rankedLine("a.c:3", 0.1, -0.2, 0.65, false)}),
      options));
  // The leader may be noise (not kept by the false-discovery control).
  EXPECT_FALSE(leaderStandsOut(ranking({rankedLine("a.c:1", 0.7, 0.6, 0.8, false),
                                        rankedLine("a.c:2", 0.2, 0.1, 0.3, false)}),
                               options));
  // One line ranked: nothing to stand out from.
  EXPECT_FALSE(leaderStandsOut(ranking({rankedLine("a.c:1", 0.7, 0.6, 0.8, true)}), options));
  // No interval: cannot tell.
  LineResult noInterval = rankedLine("a.c:2", 0.2, 0, 0, false);
  noInterval.points[0].slopeInterval.valid = false;
  EXPECT_FALSE(
      leaderStandsOut(ranking({rankedLine("a.c:1", 0.7, 0.6, 0.8, true), noInterval}), options));
}

RunProgress reading(const std::string &leader, bool standsOut, size_t experiments) {
  RunProgress progress;
  progress.leader = leader;
  progress.leaderStandsOut = standsOut;
  progress.experiments = experiments;
  return progress;
}

TEST(RunProgress, StableAfterConsecutiveReadingsWithNewExperiments) {
  RankingStability stability;
  size_t experiments = 10;
  for (size_t i = 1; i < kStableReadings; ++i) {
    EXPECT_FALSE(stability.update(reading("a.c:1", true, experiments += 5)));
    EXPECT_EQ(stability.streak(), i);
  }
  // A reading without new experiments does not count.
  EXPECT_FALSE(stability.update(reading("a.c:1", true, experiments)));
  EXPECT_EQ(stability.streak(), kStableReadings - 1);
  EXPECT_TRUE(stability.update(reading("a.c:1", true, experiments += 5)));
}

TEST(RunProgress, AnotherLeaderOrAnOverlapStartsAgain) {
  RankingStability stability;
  size_t experiments = 10;
  for (size_t i = 1; i < kStableReadings; ++i)
    stability.update(reading("a.c:1", true, experiments += 5));
  EXPECT_FALSE(stability.update(reading("a.c:2", true, experiments += 5)));
  EXPECT_EQ(stability.streak(), 1u);
  for (size_t i = 2; i < kStableReadings; ++i)
    stability.update(reading("a.c:2", true, experiments += 5));
  EXPECT_FALSE(stability.update(reading("a.c:2", false, experiments += 5)));
  EXPECT_EQ(stability.streak(), 0u);
}

TEST(RunProgress, EndedOnlyWhenEveryRunInPartsHasItsLastPart) {
  Profile profile;
  Analysis analysis;
  AnalysisOptions options;
  profile.runs.emplace_back(); // written whole: complete
  profile.runs.back().runtimeNs = 2.5e9;
  EXPECT_TRUE(runProgress(profile, analysis, options).ended);
  EXPECT_DOUBLE_EQ(runProgress(profile, analysis, options).profiledSeconds, 2.5);
  profile.runs.emplace_back();
  profile.runs.back().partsId = "12-34"; // in parts, no shutdown yet
  EXPECT_FALSE(runProgress(profile, analysis, options).ended);
  profile.runs.back().shutdownSeen = true;
  EXPECT_TRUE(runProgress(profile, analysis, options).ended);
  EXPECT_FALSE(runProgress(Profile(), analysis, options).ended); // nothing read
}

TEST(RunProgress, LeaderIsTheFirstRankedLineWithItsSlope) {
  AnalysisOptions options;
  Analysis analysis = ranking(
      {rankedLine("a.c:1", 0.7, 0.6, 0.8, true), rankedLine("a.c:2", 0.2, 0.1, 0.3, false)});
  Profile profile;
  RunProgress progress = runProgress(profile, analysis, options);
  EXPECT_EQ(progress.leader, "a.c:1");
  EXPECT_EQ(progress.rankedLines, 2u);
  EXPECT_EQ(progress.experiments, 100u);
  EXPECT_DOUBLE_EQ(progress.leaderSlope, 0.7);
  EXPECT_DOUBLE_EQ(progress.leaderInterval.low, 0.6);
  EXPECT_TRUE(progress.leaderDiscovery);
  EXPECT_TRUE(progress.leaderStandsOut);
}

} // namespace
} // namespace causal::profile
