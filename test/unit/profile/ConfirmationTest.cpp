//===- ConfirmationTest.cpp - A/B runs: estimates, verdicts, stop rule ----===//
//
// Profiles generated with a known answer: an ordinary run whose ranking
// predicts a line's effect (its curve is min(s, 0.5), slope 0.674, so 33.7 %
// at 50 %), followed by A/B runs (experiments marked ab-speedup, 0 % and
// 50 % alternating 0, S, S, 0) whose true effect is set per test, with
// deterministic noise per experiment.
//
//===----------------------------------------------------------------------===//
#include "Analysis.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>

using namespace causal::profile;

namespace {

const char kLine[] = "work.c:10";

/// Deterministic noise in [-1, 1].
struct Noise {
  uint64_t state;
  explicit Noise(uint64_t seed) : state(seed * 2654435761u + 1) {}
  double next() {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return double(state >> 11) / double(1ull << 53) * 2 - 1;
  }
};

struct AbProfile {
  std::ostringstream text;

  /// The ordinary run: the line's curve is min(s, 0.5) (phase factor 1).
  void ranking(const std::string &line = kLine, double scale = 1) {
    text << "startup\ttime=1\tprofiler=causal\tsample-period=1000000\n";
    for (int k = 0; k <= 20; ++k)
      for (int c = 0; c < 2; ++c) {
        double s = k / 20.0, y = scale * std::min(s, 0.5);
        text << "experiment\tselected=" << line << "\tspeedup=" << s
             << "\tduration=" << std::llround(1e9 * (1 - y))
             << "\tselected-samples=100\nthroughput-point\tname=tp\tdelta=1000\n";
      }
    // 100 samples per second in the baseline and over the run: factor 1;
    // b = 4200 x 1 ms / 42 s = 0.1 (the bound is not the subject here).
    text << "runtime\ttime=42000000000\nsamples\tlocation=" << line << "\tcount=4200\n";
  }

  /// One A/B run of \p experiments experiments on \p line: the B arm (at
  /// \p speedup) shortens the period by \p effect; each experiment's period
  /// is off by up to \p noise (relative), and the program's speed drifts by
  /// \p drift per experiment (both arms alike).
  /// The experiments i with i % \p starveEvery == 3 (0: none; with 8, all in
  /// arm A) ran starved of CPU by other processes: 1 % of a CPU, 50 times as
  /// long, 2 visits.
  void abRun(double effect, size_t experiments, double noise = 0.02, double drift = 0,
             const std::string &line = kLine, double speedup = 0.5, uint64_t seed = 7,
             size_t starveEvery = 0) {
    text << "startup\ttime=2\tprofiler=causal\tsample-period=1000000\n";
    Noise random(seed);
    for (size_t i = 0; i < experiments; ++i) {
      bool b = i % 4 == 1 || i % 4 == 2;
      bool starved = starveEvery && i % starveEvery == 3;
      double period = 1e6 * (1 + drift * double(i)) * (1 + noise * random.next());
      if (b)
        period *= 1 - effect;
      double visits = starved ? 2 : 200;
      text << "experiment\tselected=" << line << "\tspeedup=" << (b ? speedup : 0)
           << "\tduration=" << std::llround(period * 200 * (starved ? 50 : 1))
           << "\tselected-samples=20\tcpus=2\trunning=" << (starved ? 0.01 : 1)
           << "\twaiting=" << (starved ? 1.2 : 0.1) << "\tab-speedup=" << speedup
           << "\nthroughput-point\tname=tp\tdelta=" << visits << "\n";
    }
    text << "runtime\ttime=9000000000\nsamples\tlocation=" << line << "\tcount=900\n";
  }

  Profile profile() const {
    Profile p;
    std::string error;
    EXPECT_TRUE(readProfileText(text.str(), "ab.coz", p, ReadOptions(), error)) << error;
    return p;
  }
};

/// A copy: the analysis may be a temporary.
Confirmation only(const Analysis &analysis) {
  EXPECT_EQ(analysis.confirmations.size(), 1u);
  return analysis.confirmations.at(0);
}

/// The one confirmation of the profile |text|.
Confirmation confirmationOf(const std::string &text) {
  Profile profile;
  std::string error;
  EXPECT_TRUE(readProfileText(text, "ab.coz", profile, ReadOptions(), error)) << error;
  return only(analyze(profile, AnalysisOptions()));
}

Confirmation judged(double estimate, double low, double high, double prediction, double predLow,
                    double predHigh, size_t pairs = 20, bool phaseCorrected = true) {
  Confirmation c;
  c.line = kLine;
  c.point = "tp";
  c.speedup = 0.5;
  c.pairs = pairs;
  c.estimate = estimate;
  c.interval = {low, high, true};
  if (!std::isnan(prediction)) {
    c.predicted = true;
    c.prediction = prediction;
    c.predictionInterval = {predLow, predHigh, true};
    c.predictionPhaseCorrected = phaseCorrected;
  }
  judgeConfirmation(c, AnalysisOptions());
  return c;
}

} // namespace

TEST(Confirmation, ABRunsAreKeptOutOfTheRanking) {
  AbProfile plain;
  plain.ranking();
  AbProfile withAb;
  withAb.ranking();
  withAb.abRun(0.3, 80);
  Analysis before = analyze(plain.profile(), AnalysisOptions());
  Analysis after = analyze(withAb.profile(), AnalysisOptions());
  ASSERT_EQ(before.lines.size(), 1u);
  ASSERT_EQ(after.lines.size(), 1u);
  const PointResult &a = before.lines[0].points.at(0), &b = after.lines[0].points.at(0);
  EXPECT_EQ(a.slope, b.slope);
  EXPECT_EQ(a.experiments, b.experiments);
  EXPECT_EQ(a.phaseFactor, b.phaseFactor);
  EXPECT_EQ(a.bound.b, b.bound.b);
  EXPECT_EQ(before.runs, after.runs);
  EXPECT_EQ(before.experiments, after.experiments);
  EXPECT_EQ(before.runtimeNs, after.runtimeNs);
  EXPECT_EQ(after.confirmationRuns, 1u);
  EXPECT_EQ(after.confirmationExperiments, 80u);
  EXPECT_EQ(before.confirmations.size(), 0u);
}

TEST(Confirmation, ARealEffectIsConfirmedWithTheEstimateAndThePrediction) {
  AbProfile p;
  p.ranking();
  p.abRun(0.3, 80);
  Analysis analysis = analyze(p.profile(), AnalysisOptions());
  const Confirmation &c = only(analysis);
  EXPECT_EQ(c.line, kLine);
  EXPECT_EQ(c.point, "tp");
  EXPECT_DOUBLE_EQ(c.speedup, 0.5);
  // Of 80 experiments the first and the last are left out (warm-up, exit):
  // 1 (B) is unpaired, then (2, 3), ..., (76, 77); 78 (B) is unpaired.
  EXPECT_EQ(c.pairs, 38u);
  EXPECT_EQ(c.experiments, 78u);
  EXPECT_EQ(c.runs, 1u);
  EXPECT_NEAR(c.estimate, 0.3, 0.01); // 2 % noise per experiment, averaged over 40 of each
  ASSERT_TRUE(c.interval.valid);
  EXPECT_LT(c.interval.low, c.estimate);
  EXPECT_GT(c.interval.high, c.estimate);
  EXPECT_LT(c.width(), 0.03);
  EXPECT_EQ(c.rank, 1u);
  ASSERT_TRUE(c.predicted);
  EXPECT_NEAR(c.prediction, 0.5 * 4.8375 / 7.175, 1e-9);
  EXPECT_TRUE(c.predictionPhaseCorrected);
  EXPECT_EQ(c.verdict, Verdict::Confirmed) << c.reason;
  EXPECT_EQ(findConfirmation(analysis, kLine), &analysis.confirmations[0]);
}

TEST(Confirmation, NoEffectIsRefutedByANarrowIntervalAboutZero) {
  AbProfile p;
  p.ranking();
  p.abRun(0.0, 80);
  const Confirmation &c = only(analyze(p.profile(), AnalysisOptions()));
  EXPECT_NEAR(c.estimate, 0, 0.01);
  EXPECT_LE(c.interval.low, 0);
  EXPECT_GE(c.interval.high, 0);
  EXPECT_EQ(c.verdict, Verdict::Refuted) << c.reason;
}

TEST(Confirmation, AnEffectFarBelowThePredictionIsRefuted) {
  // +5 % where 33.7 % was predicted: real but under half the prediction.
  AbProfile p;
  p.ranking();
  p.abRun(0.05, 80);
  const Confirmation &c = only(analyze(p.profile(), AnalysisOptions()));
  EXPECT_GT(c.interval.low, 0);
  EXPECT_EQ(c.verdict, Verdict::Refuted) << c.reason;
  EXPECT_NE(c.reason.find("under half"), std::string::npos) << c.reason;
}

TEST(Confirmation, FewPairsOrAWideIntervalStayOpen) {
  AbProfile few;
  few.ranking();
  few.abRun(0.3, 10); // 3 pairs: (2, 3), (4, 5), (6, 7)
  const Confirmation &c = only(analyze(few.profile(), AnalysisOptions()));
  EXPECT_EQ(c.pairs, 3u);
  EXPECT_EQ(c.verdict, Verdict::Open) << c.reason;

  AbProfile noisy; // +-60 % noise per experiment: the interval spans 0
  noisy.ranking("other.c:5", 0.1);
  noisy.abRun(0.02, 40, 0.6, 0, "other.c:5");
  const Confirmation &w = only(analyze(noisy.profile(), AnalysisOptions()));
  EXPECT_LT(w.interval.low, 0);
  EXPECT_GT(w.interval.high, 0);
  EXPECT_GT(w.width(), 0.1);
  EXPECT_EQ(w.verdict, Verdict::Open) << w.reason;
}

TEST(Confirmation, DriftHitsBothArmsAlike) {
  // The program gets 1 % slower with every experiment (2.2x over the run),
  // far more than the effect; alternating 0, S, S, 0 keeps the estimate.
  AbProfile p;
  p.ranking();
  p.abRun(0.2, 120, 0.0, 0.01);
  const Confirmation &c = only(analyze(p.profile(), AnalysisOptions()));
  EXPECT_NEAR(c.estimate, 0.2, 0.001); // alternating 0, S, 0, S would give 0.192
  EXPECT_EQ(c.verdict, Verdict::Confirmed) << c.reason;
}

TEST(Confirmation, PairsStarvedOfCpuByOtherProcessesAreLeftOut) {
  AbProfile p;
  p.ranking();
  p.abRun(0.3, 120, 0.02, 0, kLine, 0.5, 7, 8);
  const Confirmation &c = only(analyze(p.profile(), AnalysisOptions()));
  EXPECT_EQ(c.starvedPairs, 15u); // experiments 3, 11, ..., 115: one each, in 15 pairs
  EXPECT_EQ(c.pairs + c.starvedPairs, 58u);
  EXPECT_NEAR(c.estimate, 0.3, 0.01);
  EXPECT_EQ(c.verdict, Verdict::Confirmed) << c.reason;
  // Kept in, they would swing the estimate.
  AbProfile q;
  q.ranking();
  q.abRun(0.3, 120, 0.02, 0, kLine, 0.5, 7, 8);
  std::string text = q.text.str();
  for (size_t at; (at = text.find("running=0.01")) != std::string::npos;)
    text.replace(at, 12, "running=1.00");
  Profile unstarved;
  std::string error;
  ASSERT_TRUE(readProfileText(text, "q.coz", unstarved, ReadOptions(), error)) << error;
  const Confirmation &kept = only(analyze(unstarved, AnalysisOptions()));
  EXPECT_EQ(kept.starvedPairs, 0u);
  EXPECT_GT(std::fabs(kept.estimate - 0.3), 0.05);
}

TEST(Confirmation, WindowsWhoseCpusStoodIdleAreNotStarved) {
  // The same windows, waiting while the CPUs stood idle (idle=): the
  // threads waited to be woken up, not for CPUs others held; that is the
  // program's doing, so the pairs stay in (Saturation::otherLoad's rule).
  AbProfile p;
  p.ranking();
  p.abRun(0.3, 120, 0.02, 0, kLine, 0.5, 7, 8);
  std::string text = p.text.str();
  for (size_t at = 0; (at = text.find("\tab-speedup=", at)) != std::string::npos; at += 12)
    text.insert(at, "\tidle=1.90");
  Profile idle;
  std::string error;
  ASSERT_TRUE(readProfileText(text, "p.coz", idle, ReadOptions(), error)) << error;
  const Confirmation &c = only(analyze(idle, AnalysisOptions()));
  EXPECT_EQ(c.starvedPairs, 0u);
  EXPECT_EQ(c.pairs, 58u);
  // With the CPUs busy (idle near 0) they are starved as before.
  text = p.text.str();
  for (size_t at = 0; (at = text.find("\tab-speedup=", at)) != std::string::npos; at += 12)
    text.insert(at, "\tidle=0.05");
  Profile busy;
  ASSERT_TRUE(readProfileText(text, "b.coz", busy, ReadOptions(), error)) << error;
  EXPECT_EQ(only(analyze(busy, AnalysisOptions())).starvedPairs, 15u);
}

TEST(Confirmation, EachRunsFirstAndLastExperimentAreLeftOut) {
  // The first window of every run (arm A) is twice as slow (the program
  // starting) and the last (arm A: 40 = 4 x 10) is cut by the exit; kept
  // in, they would add about +5 % to a line without effect.
  std::ostringstream text;
  for (int run = 0; run < 4; ++run) {
    text << "startup\ttime=2\tprofiler=causal\n";
    for (int i = 0; i < 40; ++i) {
      bool b = i % 4 == 1 || i % 4 == 2;
      double slow = i == 0 || i == 39 ? 2 : 1;
      text << "experiment\tselected=idle.c:3\tspeedup=" << (b ? 0.5 : 0)
           << "\tduration=" << std::llround(2e8 * slow * (1 + 0.002 * (i % 3)))
           << "\tab-speedup=0.50\nthroughput-point\tname=tp\tdelta=200\n";
    }
  }
  const Confirmation c = confirmationOf(text.str());
  EXPECT_EQ(c.pairs, 4u * 18);
  EXPECT_NEAR(c.estimate, 0, 0.003);
  EXPECT_EQ(c.verdict, Verdict::Refuted) << c.reason;
}

TEST(Confirmation, ArmBWindowsWhoseDelayReachedTheirLengthStillPair) {
  // A line that is nearly all of the run, confirmed at a high speedup: arm
  // B's delay is about each window's length, and its durations scatter
  // around zero (34, 14, -6 and 6 ms in turn, for 200 visits each; arm A:
  // 200 ms). All 18 pairs of the run count: D = 1 - (200 / 18) / 200 =
  // 0.944. Leaving out the five pairs whose B window fell below zero keeps
  // the B windows whose delay fell short: D = 1 - (230 / 13) / 200 = 0.912.
  std::ostringstream text;
  text << "startup\ttime=2\tprofiler=causal\n";
  const double armB[] = {34e6, 14e6, -6e6, 6e6};
  int bWindows = 0;
  for (int i = 0; i < 40; ++i) {
    bool b = i % 4 == 1 || i % 4 == 2;
    double duration = b ? armB[bWindows++ % 4] : 2e8 * (1 + 0.002 * (i % 3));
    text << "experiment\tselected=most.c:5\tspeedup=" << (b ? 0.95 : 0)
         << "\tduration=" << std::llround(duration)
         << "\tab-speedup=0.95\nthroughput-point\tname=tp\tdelta=200\n";
  }
  const Confirmation c = confirmationOf(text.str());
  EXPECT_EQ(c.pairs, 18u);
  EXPECT_NEAR(c.estimate, 1 - (200.0 / 18) / 200.2, 0.002);
}

TEST(Confirmation, ALatencyWindowWithoutLengthBreaksItsPairs) {
  // The same for a latency point: its in-flight count is per unit of the
  // window's duration, so a B window <= 0 pairs with nothing and the pair
  // sequence starts again after it.
  std::ostringstream text;
  text << "startup\ttime=2\tprofiler=causal\n";
  int bWindows = 0;
  for (int i = 0; i < 40; ++i) {
    bool b = i % 4 == 1 || i % 4 == 2;
    bool empty = b && bWindows++ % 4 == 2;
    text << "experiment\tselected=most.c:5\tspeedup=" << (b ? 0.5 : 0)
         << "\tduration=" << (empty ? -6000000 : 1000000000) << "\tab-speedup=0.50\n"
         << "latency-point\tname=req\tarrivals=100\tdepartures=100\tdifference=" << (b ? 7.5 : 10)
         << "\n";
  }
  const Confirmation c = confirmationOf(text.str());
  EXPECT_EQ(c.pairs, 13u);
  EXPECT_NEAR(c.estimate, 0.25, 1e-9);
}

TEST(Confirmation, IntervalsGrowWithExperimentToExperimentVariance) {
  AbProfile quiet, loud;
  quiet.ranking();
  quiet.abRun(0.3, 80, 0.01);
  loud.ranking();
  loud.abRun(0.3, 80, 0.10);
  double quietWidth = only(analyze(quiet.profile(), AnalysisOptions())).width();
  double loudWidth = only(analyze(loud.profile(), AnalysisOptions())).width();
  EXPECT_GT(loudWidth, 4 * quietWidth);
  // The loud interval still holds the truth.
  const Confirmation &c = only(analyze(loud.profile(), AnalysisOptions()));
  EXPECT_LT(c.interval.low, 0.3);
  EXPECT_GT(c.interval.high, 0.3);
}

TEST(Confirmation, ARunAtAnotherSpeedupIsAnotherConfirmationAndUnrankedLinesHaveNoPrediction) {
  AbProfile p;
  p.ranking();
  p.abRun(0.3, 40);
  p.abRun(0.15, 40, 0.02, 0, kLine, 0.25);
  p.abRun(0.0, 40, 0.01, 0, "idle.c:3");
  Analysis analysis = analyze(p.profile(), AnalysisOptions());
  ASSERT_EQ(analysis.confirmations.size(), 3u);
  // Ranked lines first.
  EXPECT_EQ(analysis.confirmations[0].line, kLine);
  EXPECT_EQ(analysis.confirmations[1].line, kLine);
  EXPECT_NE(analysis.confirmations[0].speedup, analysis.confirmations[1].speedup);
  const Confirmation &idle = analysis.confirmations[2];
  EXPECT_EQ(idle.line, "idle.c:3");
  EXPECT_EQ(idle.rank, 0u);
  EXPECT_FALSE(idle.predicted);
  EXPECT_EQ(idle.verdict, Verdict::Refuted) << idle.reason; // narrow about 0
  EXPECT_EQ(analysis.confirmationRuns, 3u);
}

TEST(Confirmation, LatencyPointsUseLittlesLaw) {
  std::ostringstream text;
  text << "startup\ttime=1\tprofiler=causal\n";
  for (int i = 0; i < 40; ++i) {
    bool b = i % 4 == 1 || i % 4 == 2;
    // 100 arrivals; mean in flight 10 (A) or 7.5 (B): latency 25 % shorter.
    text << "experiment\tselected=req.c:4\tspeedup=" << (b ? 0.5 : 0)
         << "\tduration=1000000000\tab-speedup=0.50\n"
         << "latency-point\tname=req\tarrivals=100\tdepartures=100\tdifference="
         << (b ? 7.5 + 0.01 * (i % 3) : 10 - 0.01 * (i % 3)) << "\n";
  }
  const Confirmation c = confirmationOf(text.str());
  EXPECT_EQ(c.kind, PointKind::Latency);
  EXPECT_NEAR(c.estimate, 0.25, 0.005);
  EXPECT_EQ(c.verdict, Verdict::Confirmed) << c.reason;
}

TEST(Confirmation, VerdictRules) {
  // Interval above 0, consistent with the prediction: confirmed.
  EXPECT_EQ(judged(0.3, 0.25, 0.35, 0.33, 0.3, 0.36).verdict, Verdict::Confirmed);
  // Above 0 but wide: still confirmed (the sign is what is asked).
  EXPECT_EQ(judged(0.3, 0.05, 0.6, 0.33, 0.3, 0.36).verdict, Verdict::Confirmed);
  // Below 0: refuted.
  EXPECT_EQ(judged(-0.1, -0.15, -0.05, 0.33, 0.3, 0.36).verdict, Verdict::Refuted);
  // At most 14 % where at least 30 % was predicted: under half, refuted.
  EXPECT_EQ(judged(0.1, 0.06, 0.14, 0.33, 0.3, 0.36).verdict, Verdict::Refuted);
  // 16 % is more than half of 30 %: confirmed.
  EXPECT_EQ(judged(0.1, 0.06, 0.16, 0.33, 0.3, 0.36).verdict, Verdict::Confirmed);
  // The half rule needs a whole-run (phase-corrected) prediction.
  EXPECT_EQ(judged(0.1, 0.06, 0.14, 0.33, 0.3, 0.36, 20, false).verdict, Verdict::Confirmed);
  // Narrow (10 points) about 0, the prediction above it: refuted.
  EXPECT_EQ(judged(0.0, -0.05, 0.05, 0.08, 0.06, 0.1).verdict, Verdict::Refuted);
  // Narrow about 0 but holding the prediction: open.
  Confirmation small = judged(0.0, -0.05, 0.05, 0.03, 0.01, 0.05);
  EXPECT_EQ(small.verdict, Verdict::Open) << small.reason;
  // Wide about 0: open.
  EXPECT_EQ(judged(0.0, -0.1, 0.1, 0.33, 0.3, 0.36).verdict, Verdict::Refuted)
      << "wide, but its top is under half the least prediction";
  EXPECT_EQ(judged(0.0, -0.1, 0.2, 0.33, 0.3, 0.36).verdict, Verdict::Open);
  // Without a prediction: narrow about 0 refutes, wide stays open.
  EXPECT_EQ(judged(0.0, -0.04, 0.04, NAN, 0, 0).verdict, Verdict::Refuted);
  EXPECT_EQ(judged(0.0, -0.1, 0.1, NAN, 0, 0).verdict, Verdict::Open);
  // Too few pairs: open whatever the interval.
  EXPECT_EQ(judged(0.3, 0.25, 0.35, 0.33, 0.3, 0.36, 9).verdict, Verdict::Open);
  // No estimate: open.
  Confirmation none = judged(NAN, 0, 0, 0.33, 0.3, 0.36);
  none.interval.valid = false;
  judgeConfirmation(none, AnalysisOptions());
  EXPECT_EQ(none.verdict, Verdict::Open);
}

TEST(Confirmation, StopRuleLooksAtTheWidthAndTheBudgetOnly) {
  AnalysisOptions options; // 10 pairs, 10 points
  EXPECT_EQ(confirmationStop(nullptr, 0, 60, options), ConfirmStop::Continue);
  EXPECT_EQ(confirmationStop(nullptr, 60, 60, options), ConfirmStop::Budget);
  Confirmation c;
  c.pairs = 20;
  c.interval = {0.2, 0.4, true}; // confirmed already, but 20 points wide
  EXPECT_EQ(confirmationStop(&c, 10, 60, options), ConfirmStop::Continue);
  c.interval = {0.25, 0.34, true};
  EXPECT_EQ(confirmationStop(&c, 10, 60, options), ConfirmStop::Narrow);
  c.interval = {-0.05, 0.05, true}; // exactly the width, about 0
  EXPECT_EQ(confirmationStop(&c, 10, 60, options), ConfirmStop::Narrow);
  c.pairs = 9; // narrow, but too few pairs to trust the interval
  EXPECT_EQ(confirmationStop(&c, 10, 60, options), ConfirmStop::Continue);
  EXPECT_EQ(confirmationStop(&c, 61, 60, options), ConfirmStop::Budget);
  c.pairs = 20;
  c.interval.valid = false;
  EXPECT_EQ(confirmationStop(&c, 10, 60, options), ConfirmStop::Continue);
}

TEST(Confirmation, StudentTQuantilesMatchTheTables) {
  EXPECT_NEAR(studentTQuantile(0.975, 1), 12.7062, 1e-3);
  EXPECT_NEAR(studentTQuantile(0.975, 6), 2.44691, 1e-4);
  EXPECT_NEAR(studentTQuantile(0.975, 30), 2.04227, 1e-4);
  EXPECT_NEAR(studentTQuantile(0.995, 10), 3.16927, 1e-4);
  EXPECT_NEAR(studentTQuantile(0.90, 3), 1.63774, 1e-4);
  EXPECT_NEAR(studentTQuantile(0.025, 6), -2.44691, 1e-4);
  EXPECT_TRUE(std::isnan(studentTQuantile(1.5, 6)));
}

TEST(Confirmation, FewUnitsWidenThePercentileLevel) {
  // 7 units: sqrt(7/6) x t_6 = 2.643, read at P(|Z| <= 2.643) = 0.9918.
  EXPECT_NEAR(expandedPercentileConfidence(0.95, 7), 0.9918, 5e-4);
  EXPECT_NEAR(expandedPercentileConfidence(0.95, 1000), 0.9504, 5e-4);
  EXPECT_GT(expandedPercentileConfidence(0.95, 2), 0.999999);
  EXPECT_EQ(expandedPercentileConfidence(0.95, 1), 0.95);
  EXPECT_EQ(expandedPercentileConfidence(0.95, 0), 0.95);
}

// Runs of a line without effect, 7 pairs each (of 18 experiments less the
// first and last, as bench/accuracy's open loop gets), +-5 % noise per
// experiment: the 95 % interval must hold
// the truth, 0, in about 95 % of them. At the expanded level it holds 0 in
// 280 of these 300 (93 %); read as a plain percentile interval, in 264
// (88 %), below this test's floor.
TEST(Confirmation, IntervalsFromFewPairsHoldTheTruthAsOftenAsTheyClaim) {
  const size_t kProfiles = 300;
  size_t holding = 0, judged = 0;
  for (size_t seed = 1; seed <= kProfiles; ++seed) {
    AbProfile p;
    p.abRun(0.0, 18, 0.05, 0, kLine, 0.5, seed);
    Confirmation c = only(analyze(p.profile(), AnalysisOptions()));
    ASSERT_EQ(c.pairs, 7u);
    if (!c.interval.valid)
      continue;
    ++judged;
    holding += c.interval.low <= 0 && 0 <= c.interval.high;
  }
  EXPECT_EQ(judged, kProfiles);
  EXPECT_GE(double(holding), 0.91 * double(kProfiles)) << holding << " of " << judged;
  EXPECT_LE(double(holding), 0.99 * double(kProfiles)) << holding << " of " << judged;
}
