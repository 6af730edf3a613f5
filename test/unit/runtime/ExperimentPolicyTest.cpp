//===- test/unit/runtime/ExperimentPolicyTest.cpp - Controller choices ----===//

#include "ExperimentPolicy.h"
#include "Support.h"

#include "causal/tunables.h"

#include <gtest/gtest.h>

#include <string>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <unistd.h>
#include <vector>

using namespace causal::rt;

TEST(ExperimentPolicyTest, SameSeedGivesSameSpeedupsAndOtherSeedsDiffer) {
  Rng a(42), b(42), c(43);
  std::vector<uint32_t> first, second, third;
  for (int i = 0; i < 64; ++i) {
    first.push_back(drawSpeedupPercent(a));
    second.push_back(drawSpeedupPercent(b));
    third.push_back(drawSpeedupPercent(c));
  }
  EXPECT_EQ(first, second);
  EXPECT_NE(first, third);
}

TEST(ExperimentPolicyTest, SpeedupsFollowCozRule) {
  // r uniform in [0, 7 + 20]: 0 % for r <= 7 (8 of 28 values), else 5 % steps.
  Rng rng(7);
  std::map<uint32_t, int> seen;
  const int draws = 28000;
  for (int i = 0; i < draws; ++i)
    ++seen[drawSpeedupPercent(rng)];
  EXPECT_EQ(seen.size(), 21u) << "0, 5, ..., 100 all drawn";
  for (const auto &[percent, count] : seen) {
    EXPECT_EQ(percent % 5, 0u);
    EXPECT_LE(percent, 100u);
    // Expected counts: 8000 for 0 %, 1000 for each other step. Binomial
    // standard deviations are ~76 and ~31; allow more than 6 of them.
    if (percent == 0)
      EXPECT_NEAR(count, 8000, 500);
    else
      EXPECT_NEAR(count, 1000, 200) << percent;
  }
}

TEST(ExperimentPolicyTest, AbSpeedupsAlternateInBalancedPairs) {
  // 0, S, S, 0, 0, S, S, 0: each adjacent pair holds one of each arm, and
  // the pairs (0, S) and (S, 0) take turns.
  const uint32_t expected[] = {0, 30, 30, 0, 0, 30, 30, 0, 0, 30};
  for (uint64_t i = 0; i < 10; ++i)
    EXPECT_EQ(abSpeedupPercent(i, 30), expected[i]) << "experiment " << i;
  for (uint64_t pair = 0; pair < 100; ++pair)
    EXPECT_EQ(abSpeedupPercent(2 * pair, 50) + abSpeedupPercent(2 * pair + 1, 50), 50u);
}

TEST(ExperimentPolicyTest, UniformInclusiveStaysInRange) {
  Rng rng(1);
  bool saw_bound = false, saw_zero = false;
  for (int i = 0; i < 10000; ++i) {
    uint32_t value = rng.uniformInclusive(3);
    ASSERT_LE(value, 3u);
    saw_bound |= value == 3;
    saw_zero |= value == 0;
  }
  EXPECT_TRUE(saw_bound && saw_zero);
}

TEST(ExperimentPolicyTest, ExperimentLengthDoublesOnFewVisitsAndShrinksBack) {
  const uint64_t min = CAUSAL_DEFAULT_EXPERIMENT_NS;
  EXPECT_EQ(nextExperimentLength(min, 0, min), 2 * min);
  EXPECT_EQ(nextExperimentLength(min, CAUSAL_MIN_VISITS - 1, min), 2 * min);
  EXPECT_EQ(nextExperimentLength(min, CAUSAL_MIN_VISITS, min), min);
  EXPECT_EQ(nextExperimentLength(4 * min, 2 * CAUSAL_MIN_VISITS + 1, min), 2 * min);
  EXPECT_EQ(nextExperimentLength(min, 1000, min), min) << "never below the minimum";
  EXPECT_LE(nextExperimentLength(CAUSAL_MAX_EXPERIMENT_NS, 0, min), CAUSAL_MAX_EXPERIMENT_NS);
  EXPECT_EQ(delayPerSample(50, 1000000), 500000u);
  EXPECT_EQ(delayPerSample(0, 1000000), 0u);
  EXPECT_EQ(delayPerSample(100, 1000000), 1000000u);
}

TEST(ExperimentPolicyTest, TheLinesFinerPeriodKeepsClearOfTheSamplesCost) {
  const uint64_t ms = 1000000;
  // Unset: a quarter of the period while that is 6 samples' costs or more.
  EXPECT_EQ(linePeriodDivisor(ms, -1, 0), 4u);
  EXPECT_EQ(linePeriodDivisor(ms, -1, 30000), 4u) << "250 us >= 180 us";
  EXPECT_EQ(linePeriodDivisor(ms, -1, 50000), 3u) << "250 us < 300 us, 333 us is not";
  EXPECT_EQ(linePeriodDivisor(ms, -1, 90000), 1u) << "even 500 us < 540 us: never finer";
  // 0: never; set: the period over it, whatever the cost.
  EXPECT_EQ(linePeriodDivisor(ms, 0, 0), 1u);
  EXPECT_EQ(linePeriodDivisor(ms, 250000, 999999), 4u);
  EXPECT_EQ(linePeriodDivisor(ms, 400000, 0), 2u) << "period / k, a whole k";
  EXPECT_EQ(linePeriodDivisor(ms, 2 * ms, 0), 1u) << "coarser than the period: never";
  // Never finer than the shortest sample period, nor k above its cap.
  EXPECT_EQ(linePeriodDivisor(ms, 1000, 0), CAUSAL_LINE_PERIOD_DIVISOR_MAX);
  EXPECT_EQ(linePeriodDivisor(20000, -1, 0), 2u) << "10 us, not 6.7 or 5";
  EXPECT_EQ(linePeriodDivisor(CAUSAL_MIN_SAMPLE_PERIOD_NS, 1000, 0), 1u);
}

TEST(ExperimentPolicyTest, ASamplesCostIsTakenOutButNotAsTheLinesTime) {
  const uint64_t ms = 1000000, cost = 30000;
  // A signal in the line stands for its period of the program's CPU time
  // less what the sample cost; that cost is added on its own (chargeSignal),
  // so at 100 % a signal adds exactly its period, and at 0 % only its cost.
  EXPECT_EQ(lineDelayPerSignal(100, ms, cost) + cost, ms);
  EXPECT_EQ(lineDelayPerSignal(0, ms, cost), 0u);
  EXPECT_EQ(lineDelayPerSignal(50, ms, cost), (ms - cost) / 2);
  EXPECT_EQ(lineDelayPerSignal(50, ms / 4, cost), (ms / 4 - cost) / 2) << "the finer period";
  // Without a cost: the paper's speedup x period.
  EXPECT_EQ(lineDelayPerSignal(50, ms, 0), delayPerSample(50, ms));
  EXPECT_EQ(lineDelayPerSignal(100, cost, 2 * cost), 0u) << "a cost above the period";
  // A serial program of W of work, a fraction f of it in the line, sampled
  // every P at a cost c: W / (P - c) signals, W P / (P - c) of CPU time.
  // Less the costs and the line's delays, the time left is the program's
  // with the line sped up: W (1 - s f).
  const double W = 1e9, f = 0.25, P = double(ms), c = double(cost);
  for (uint32_t s : {25u, 50u, 100u}) {
    double signals = W / (P - c);
    double inserted = signals * c + f * signals * double(lineDelayPerSignal(s, ms, cost));
    EXPECT_NEAR(W * P / (P - c) - inserted, W * (1 - s / 100.0 * f), W * 1e-6) << s;
  }
}

TEST(ExperimentPolicyTest, DelayArithmeticFollowsThePaper) {
  // No experiment: skip to the global count, never pause.
  DelaySettlement idle = settleDelayCounts(10, 500, 0, false);
  EXPECT_EQ(idle.local, 500u);
  EXPECT_EQ(idle.pause_ns, 0u);
  EXPECT_EQ(idle.raise_global_to, 0u);
  // Behind: pause for the difference, then equal.
  DelaySettlement behind = settleDelayCounts(1000, 1500, 900, true);
  EXPECT_EQ(behind.pause_ns, 500u);
  EXPECT_EQ(behind.local, 1500u);
  EXPECT_EQ(behind.raise_global_to, 0u);
  // Ahead (samples in the selected line): raise the global count, no pause.
  DelaySettlement ahead = settleDelayCounts(2000, 1500, 900, true);
  EXPECT_EQ(ahead.pause_ns, 0u);
  EXPECT_EQ(ahead.raise_global_to, 2000u);
  EXPECT_EQ(ahead.local, 2000u);
  // Debts from before the experiment began are forgiven.
  DelaySettlement old_debt = settleDelayCounts(100, 1500, 1200, true);
  EXPECT_EQ(old_debt.pause_ns, 300u);
  // Equal: nothing.
  DelaySettlement even = settleDelayCounts(1500, 1500, 0, true);
  EXPECT_EQ(even.pause_ns + even.raise_global_to, 0u);
}

TEST(ExperimentPolicyTest, AWakeUpCreditNeverLiftsALocalCountAboveTheGlobalOne) {
  // Blocked at global 1000 with nothing owed; others inserted 500 meanwhile.
  EXPECT_EQ(creditedLocal(1000, 1000, 1500), 1500u);
  // Owing 200 when it blocked: the debt stays, the blocked time is skipped.
  EXPECT_EQ(creditedLocal(800, 1000, 1500), 1300u);
  // Its own sample raised the global count from 1000 to 1300 after the hook
  // read it (local 1300); others then added 200: caught up, not 300 ahead.
  EXPECT_EQ(creditedLocal(1300, 1000, 1500), 1500u);
  // Already at or past the global count: unchanged, never lowered.
  EXPECT_EQ(creditedLocal(1700, 1000, 1500), 1700u);
  EXPECT_EQ(creditedLocal(1500, 1000, 1500), 1500u);
  // Nothing inserted while blocked: unchanged.
  EXPECT_EQ(creditedLocal(900, 1500, 1500), 900u);
}

TEST(ExperimentPolicyTest, PauseOvershootIsCarriedIntoTheNextPause) {
  PausePlan covered = planPause(300, 1000);
  EXPECT_EQ(covered.sleep_ns, 0u);
  EXPECT_EQ(covered.excess_left_ns, 700u);
  PausePlan partly = planPause(1000, 300);
  EXPECT_EQ(partly.sleep_ns, 700u);
  EXPECT_EQ(partly.excess_left_ns, 0u);
}

TEST(ExperimentPolicyTest, DelaysAreScaledForSamplesTheKernelDidNotDeliver) {
  const uint64_t period = 1000000, ms = 1000000;
  // 32 samples for 32 ms of user time: none lost.
  EXPECT_EQ(lostSampleScaleX1024(32, 32 * ms, 32 * ms, 32 * ms, period), 1024u);
  // 32 samples for 48 ms: a third of them lost, delays x 1.5.
  EXPECT_EQ(lostSampleScaleX1024(32, 48 * ms, 48 * ms, 48 * ms, period), 1536u);
  // Below CAUSAL_LOSS_SCALE_FROM_PERCENT (110 %): left as it is.
  EXPECT_EQ(lostSampleScaleX1024(32, 34 * ms, 34 * ms, 34 * ms, period), 1024u);
  EXPECT_GT(lostSampleScaleX1024(32, 36 * ms, 36 * ms, 36 * ms, period), 1024u);
  // More samples than the CPU time gives (a random first period): no scale
  // below one.
  EXPECT_EQ(lostSampleScaleX1024(32, 20 * ms, 20 * ms, 20 * ms, period), 1024u);
  // Capped at CAUSAL_LOSS_SCALE_MAX_PERCENT (200 %).
  EXPECT_EQ(lostSampleScaleX1024(32, 320 * ms, 320 * ms, 320 * ms, period), 2048u);
  // The time the sampler was suspended is not in |covered|: only the
  // covered user time counts.
  EXPECT_EQ(lostSampleScaleX1024(32, 32 * ms, 64 * ms, 64 * ms, period), 1024u);
  // System time above CAUSAL_LOSS_MAX_SYSTEM_PERCENT (20 %) of the window:
  // the tick-based split cannot tell lost samples from kernel time.
  EXPECT_EQ(lostSampleScaleX1024(32, 48 * ms, 48 * ms, 64 * ms, period), 1024u);
  EXPECT_EQ(lostSampleScaleX1024(32, 48 * ms, 48 * ms, 56 * ms, period), 1536u);
  // Nothing to judge from.
  EXPECT_EQ(lostSampleScaleX1024(0, 48 * ms, 48 * ms, 48 * ms, period), 1024u);
  EXPECT_EQ(lostSampleScaleX1024(32, 48 * ms, 48 * ms, 48 * ms, 0), 1024u);
}

TEST(ExperimentPolicyTest, ScopeGlobs) {
  EXPECT_TRUE(matchesAnyGlob("*/src/*", "/home/me/src/a.c"));
  EXPECT_FALSE(matchesAnyGlob("*/src/*", "/home/me/lib/a.c"));
  EXPECT_TRUE(matchesAnyGlob("*.h:*/src/*", "/x/y.h")) << "':' separates globs";
  EXPECT_FALSE(matchesAnyGlob("", "/x/y.h"));
  EXPECT_FALSE(matchesAnyGlob(nullptr, "/x"));
  EXPECT_TRUE(inDefaultSourceScope("/home/me/prog/main.c"));
  EXPECT_TRUE(inDefaultSourceScope("main.c"));
  EXPECT_FALSE(inDefaultSourceScope("/usr/include/c++/12/bits/stl_vector.h"));
  EXPECT_FALSE(inDefaultSourceScope("/usr/lib/llvm-19/lib/clang/19/include/x.h"));
}

TEST(ExperimentPolicyTest, FixedWaitParsing) {
  char file[64];
  uint32_t line = 0;
  WaitTarget kind = WaitTarget::Timer;
  ASSERT_TRUE(parseFixedWait("src/a.c:42", file, sizeof(file), &line, &kind));
  EXPECT_STREQ(file, "src/a.c");
  EXPECT_EQ(line, 42u);
  EXPECT_EQ(kind, WaitTarget::None) << "no kind: the first seen";
  ASSERT_TRUE(parseFixedWait("src/a.c:42@disk", file, sizeof(file), &line, &kind));
  EXPECT_STREQ(file, "src/a.c");
  EXPECT_EQ(line, 42u);
  EXPECT_EQ(kind, WaitTarget::Disk);
  ASSERT_TRUE(parseFixedWait("dir@x/b.c:7@network", file, sizeof(file), &line, &kind))
      << "an '@' in the file name is the file's";
  EXPECT_STREQ(file, "dir@x/b.c");
  EXPECT_EQ(kind, WaitTarget::Network);
  EXPECT_TRUE(parseFixedWait("b.c:7@timer", file, sizeof(file), &line, &kind));
  EXPECT_EQ(kind, WaitTarget::Timer);
  EXPECT_TRUE(parseFixedWait("b.c:7@other", file, sizeof(file), &line, &kind));
  EXPECT_EQ(kind, WaitTarget::Other);
  EXPECT_FALSE(parseFixedWait("b.c:7@bogus", file, sizeof(file), &line, &kind));
  EXPECT_FALSE(parseFixedWait("b.c:7@", file, sizeof(file), &line, &kind));
  EXPECT_FALSE(parseFixedWait("b.c@timer", file, sizeof(file), &line, &kind));
  EXPECT_FALSE(parseFixedWait("b.c:x@timer", file, sizeof(file), &line, &kind));
  EXPECT_FALSE(parseFixedWait(nullptr, file, sizeof(file), &line, &kind));
  std::string huge(5000, 'a');
  EXPECT_FALSE(parseFixedWait((huge + ".c:1@timer").c_str(), file, sizeof(file), &line, &kind));
}

TEST(ExperimentPolicyTest, WaitTargetsNeverEqualALineAndKeepIt) {
  uint64_t line = packLine(3, 1234);
  for (WaitTarget kind :
       {WaitTarget::Timer, WaitTarget::Disk, WaitTarget::Network, WaitTarget::Other}) {
    uint64_t target = packWaitTarget(line, kind);
    EXPECT_NE(target, line);
    EXPECT_EQ(waitTargetOf(target), kind);
    EXPECT_EQ(lineOfTarget(target), line);
    EXPECT_NE(waitTargetName(kind), nullptr);
  }
  EXPECT_EQ(waitTargetOf(line), WaitTarget::None);
  EXPECT_EQ(lineOfTarget(line), line);
  EXPECT_EQ(waitTargetOf(kNoLine), WaitTarget::None);
  EXPECT_EQ(lineOfTarget(kNoLine), kNoLine);
  EXPECT_EQ(waitTargetName(WaitTarget::None), nullptr);
  EXPECT_STREQ(waitTargetName(WaitTarget::Disk), "disk");
  // The largest line index a target can carry keeps its kind apart.
  uint64_t last = packLine(0, kLineIndexMask);
  EXPECT_EQ(lineOfTarget(packWaitTarget(last, WaitTarget::Other)), last);
}

TEST(ExperimentPolicyTest, ALineInAContextEqualsOnlyItsSamplesInThatContext) {
  uint64_t line = packLine(CAUSAL_MAX_MODULES - 1, kLineIndexMask);
  for (uint32_t context : {1u, 2u, 0xfffeu, 0xffffu}) {
    uint64_t target = packContext(line, context);
    EXPECT_NE(target, line);
    EXPECT_NE(target, kNoLine);
    EXPECT_EQ(contextOf(target), context);
    EXPECT_EQ(withoutContext(target), line);
    EXPECT_EQ(lineOfTarget(target), line);
    EXPECT_EQ(waitTargetOf(target), WaitTarget::None);
    EXPECT_NE(target, packContext(line, context == 1 ? 2 : 1)); // another caller
    EXPECT_NE(target, packContext(packLine(CAUSAL_MAX_MODULES - 2, kLineIndexMask), context));
  }
  EXPECT_EQ(contextOf(line), 0u);
  EXPECT_EQ(packContext(line, 0), line);
  EXPECT_EQ(contextOf(kNoLine), 0u);
  EXPECT_EQ(withoutContext(kNoLine), kNoLine);
}

TEST(ExperimentPolicyTest, FixedLineParsingAndMatching) {
  char file[64];
  uint32_t line = 0;
  ASSERT_TRUE(parseFixedLine("src/a.c:42", file, sizeof(file), &line));
  EXPECT_STREQ(file, "src/a.c");
  EXPECT_EQ(line, 42u);
  ASSERT_TRUE(parseFixedLine("C:/w/a.c:7", file, sizeof(file), &line)) << "last ':' splits";
  EXPECT_STREQ(file, "C:/w/a.c");
  EXPECT_FALSE(parseFixedLine("a.c", file, sizeof(file), &line));
  EXPECT_FALSE(parseFixedLine("a.c:", file, sizeof(file), &line));
  EXPECT_FALSE(parseFixedLine(":3", file, sizeof(file), &line));
  EXPECT_FALSE(parseFixedLine("a.c:0", file, sizeof(file), &line));
  EXPECT_FALSE(parseFixedLine("a.c:12x", file, sizeof(file), &line));
  EXPECT_FALSE(parseFixedLine("a.c:99999999999", file, sizeof(file), &line));
  EXPECT_TRUE(pathMatchesFixedFile("/home/me/src/a.c", "src/a.c"));
  EXPECT_TRUE(pathMatchesFixedFile("src/a.c", "src/a.c"));
  EXPECT_FALSE(pathMatchesFixedFile("/home/me/xsrc/a.c", "src/a.c"));
  EXPECT_FALSE(pathMatchesFixedFile("a.c", "/x/src/b.c"));
  EXPECT_TRUE(pathMatchesFixedFile("src/a.c", "/home/me/src/a.c")) << "relative table path";
  EXPECT_FALSE(pathMatchesFixedFile("/other/src/a.c", "/home/me/src/a.c"));
}

TEST(ExperimentPolicyTest, SharedCpuDelayDividesByTheCpusTheCompetitorsKeptBusy) {
  // 10 ms of speedup at 0.5 ms per 1 ms sample (s = 50 %) in a 500 ms
  // experiment, taken from threads that kept 2 CPUs busy (1 s of CPU time)
  // shortens the run by 5 ms; from threads that got half a CPU (250 ms), by
  // 20 ms.
  EXPECT_EQ(sharedCpuDelay(10000000, 1000000000, 500000, 1000000, 500000000), 5000000u);
  EXPECT_EQ(sharedCpuDelay(10000000, 250000000, 500000, 1000000, 500000000), 20000000u);
  EXPECT_EQ(sharedCpuDelay(0, 1000000000, 500000, 1000000, 500000000), 0u);
  EXPECT_EQ(sharedCpuDelay(10000000, 1000000000, 0, 1000000, 500000000), 0u) << "s = 0: no delay";
}

TEST(ExperimentPolicyTest, SharedCpuDelayCountsTheCompetitorsKernelTime) {
  // Threads that spend half their CPU time in system calls (a pipeline of
  // futex hand-offs) keep 2 CPUs busy with 1 s of CPU time in 500 ms, of
  // which perf sampled 500 ms (user mode only): the 10 ms of speedup
  // shortens the run by 5 ms, not the 10 ms that B counted in samples
  // (1 CPU) gave.
  EXPECT_EQ(sharedCpuDelay(10000000, 1000000000, 500000, 1000000, 500000000), 5000000u);
  EXPECT_LT(sharedCpuDelay(10000000, 1000000000, 500000, 1000000, 500000000),
            sharedCpuDelay(10000000, 500000000, 500000, 1000000, 500000000));
}

TEST(ExperimentPolicyTest, SharedCpuDelayNeverExceedsTheSpeedupOfTheWholeExperiment) {
  // 20 samples added shared delay but the end-of-experiment count saw only
  // 5 ms of competing CPU time: B is at least the 20 samples' (20 ms of CPU,
  // 0.2 CPU over 100 ms), so the delay is at most s x elapsed = 50 ms, not
  // 200 ms.
  EXPECT_EQ(sharedCpuDelay(10000000, 5000000, 500000, 1000000, 100000000), 50000000u);
  EXPECT_EQ(sharedCpuDelay(10000000, 0, 500000, 1000000, 100000000), 50000000u);
  // Whatever the counts, delay <= s x elapsed.
  for (uint64_t competing_ms : {0, 1, 7, 19, 20, 21, 400})
    for (uint64_t shared_samples : {1, 3, 20, 77})
      EXPECT_LE(sharedCpuDelay(shared_samples * 250000, competing_ms * 1000000, 250000, 1000000,
                               100000000),
                25000000u)
          << competing_ms << " ms competing, " << shared_samples << " shared";
}

TEST(ExperimentPolicyTest, ThreadsCompeteWhenTheyWaitForACpuMoreThanATwentiethOfTheirRun) {
  uint64_t cpu = 0, wait = 0;
  // A thread with a CPU of its own: a little scheduling noise only.
  for (int i = 0; i < 20; ++i)
    EXPECT_FALSE(updateCompetition(&cpu, &wait, 1000000, 20000));
  // It starts sharing its CPU with three others: it waits three times as
  // long as it runs; the decayed sums notice at once.
  EXPECT_TRUE(updateCompetition(&cpu, &wait, 1000000, 3000000));
  // Alone again: the past fades within a few readings.
  bool competing = true;
  int readings = 0;
  while (competing && readings < 100) {
    competing = updateCompetition(&cpu, &wait, 1000000, 0);
    ++readings;
  }
  EXPECT_FALSE(competing);
  EXPECT_LE(readings, 20);
}

TEST(ExperimentPolicyTest, OversubscribedOnlyWhenTheProcessThreadsOutnumberItsCpus) {
  EXPECT_TRUE(processOversubscribed(2, 2.0, 14.0)); // a pool of 16 on 2 CPUs
  EXPECT_TRUE(processOversubscribed(1, 1.0, 0.5));  // taskset / quota of one CPU
  // Waiting while CPUs go to other processes is not the process's own doing.
  EXPECT_FALSE(processOversubscribed(2, 1.06, 0.9));
  EXPECT_FALSE(processOversubscribed(2, 2.0, 0.0)); // one thread per CPU
  EXPECT_FALSE(processOversubscribed(0, 3.0, 3.0)); // no CPU count: never
}

TEST(ExperimentPolicyTest, WaitsForOtherProcessesOnlyWhenNotOversubscribed) {
  // Two threads on two CPUs, each waiting about as long as it runs: other
  // processes hold the CPUs.
  EXPECT_TRUE(processWaitsForOthers(2, 1.06, 0.9));
  EXPECT_TRUE(processWaitsForOthers(1, 0.33, 0.67)); // one thread, two busy processes
  EXPECT_FALSE(processWaitsForOthers(2, 2.0, 0.05)); // waits below 1/20 of the running time
  EXPECT_FALSE(processWaitsForOthers(2, 2.0, 0.0));
  EXPECT_FALSE(processWaitsForOthers(2, 2.0, 14.0)); // its own threads outnumber the CPUs
  EXPECT_FALSE(processWaitsForOthers(2, 0.0, 0.0));  // idle
}

TEST(ExperimentPolicyTest, OnePreemptionInTheProbeIsNotOtherProcessesHoldingTheCpus) {
  const uint64_t ms = 1000000;
  // One thread preempted once for 2 ms in the 20 ms probe: 0.1 waiting for
  // 1.0 running would count as waiting for other processes; the probe does
  // not count it.
  EXPECT_TRUE(processWaitsForOthers(2, 1.0, 2.0 * ms / (20.0 * ms)));
  EXPECT_EQ(probeWaitingForOthers(2 * ms, 20 * ms), 0.0);
  EXPECT_FALSE(processWaitsForOthers(2, 1.0, probeWaitingForOthers(2 * ms, 20 * ms)));
  // A thread beside a busy process waits about half the probe.
  EXPECT_DOUBLE_EQ(probeWaitingForOthers(10 * ms, 20 * ms), 0.5);
  EXPECT_TRUE(processWaitsForOthers(2, 1.0, probeWaitingForOthers(10 * ms, 20 * ms)));
  EXPECT_EQ(probeWaitingForOthers(10 * ms, 0), 0.0);
}

TEST(ExperimentPolicyTest, CpuShareScaleIsTheInverseOfTheThreadsCpuShare) {
  const uint64_t ms = 1000000;
  EXPECT_EQ(cpuShareScaleX1024(10 * ms, 0), 1024u);       // a CPU of its own
  EXPECT_EQ(cpuShareScaleX1024(20 * ms, 1 * ms), 1024u);  // waits 1/20 of its CPU time: noise
  EXPECT_EQ(cpuShareScaleX1024(10 * ms, 10 * ms), 2048u); // half a CPU
  EXPECT_EQ(cpuShareScaleX1024(10 * ms, 20 * ms), 3072u); // a third
  EXPECT_EQ(cpuShareScaleX1024(4 * ms, 1 * ms), 1280u);
  // Capped at CAUSAL_CPU_SHARE_SCALE_MAX_PERCENT %; no CPU time: unscaled.
  EXPECT_EQ(cpuShareScaleX1024(1 * ms, 100 * ms), 1024u * CAUSAL_CPU_SHARE_SCALE_MAX_PERCENT / 100);
  EXPECT_EQ(cpuShareScaleX1024(0, 5 * ms), 1024u);
  // Large figures do not overflow.
  EXPECT_EQ(cpuShareScaleX1024(UINT64_MAX / 2, UINT64_MAX / 2), 2048u);
}

TEST(ExperimentPolicyTest, APauseSpinsOnlyOnACpuTheOtherThreadsLeaveFree) {
  const uint64_t ms = 1000000;
  const int64_t ims = int64_t(ms);
  // Two CPUs for 100 ms. Two workers, each with a CPU of its own, nobody
  // waiting: none spare, but each worker's own CPU is its own.
  EXPECT_TRUE(spinIsHarmless(0, 100 * ms, 100 * ms));
  // The same two beside a heartbeat thread that runs 2 ms and waits 6 ms
  // for a CPU: the heartbeat's spin would take a worker's CPU...
  EXPECT_FALSE(spinIsHarmless(-8 * ims, 8 * ms, 100 * ms));
  // ... a worker's still finds most of its own CPU.
  EXPECT_TRUE(spinIsHarmless(-8 * ims, 95 * ms, 100 * ms));
  // A server busy 85 % of the time, clients that hardly run.
  EXPECT_TRUE(spinIsHarmless(113 * ims, 1 * ms, 100 * ms));
  // One CPU, one busy thread, a sleeper that pays on waking.
  EXPECT_FALSE(spinIsHarmless(-2 * ims, 1 * ms, 100 * ms));
  EXPECT_TRUE(spinIsHarmless(0, 0, 0)); // no window yet: as before
}

TEST(ExperimentPolicyTest, APauseSpinsThroughWhileNoOtherThreadCouldUseTheCpu) {
  // Two CPUs: the pausing thread holds one, so one other runnable thread
  // still has a CPU; two would leave one of them waiting.
  EXPECT_TRUE(spinLeavesCpuIdle(0, 2));
  EXPECT_TRUE(spinLeavesCpuIdle(1, 2));
  EXPECT_FALSE(spinLeavesCpuIdle(2, 2));
  // One CPU: any other runnable thread would wait for it.
  EXPECT_TRUE(spinLeavesCpuIdle(0, 1));
  EXPECT_FALSE(spinLeavesCpuIdle(1, 1));
  EXPECT_TRUE(spinLeavesCpuIdle(7, 8));
  EXPECT_FALSE(spinLeavesCpuIdle(8, 8));
}

// /proc/stat: the idle and iowait fields (4th and 5th numbers) of the CPUs
// asked for, in ticks; the sum line ("cpu ") and the other lines skipped.
TEST(ExperimentPolicyTest, IdleTimeOfTheProcessCpusIsReadFromProcStat) {
  const char *text = "cpu  10 0 5 300 20 0 1 7 0 0\n"
                     "cpu0 4 0 2 100 10 0 1 3 0 0\n"
                     "cpu1 6 0 3 200 10 0 0 4 0 0\n"
                     "intr 12345 0 0\nctxt 99\n";
  EXPECT_DOUBLE_EQ(parseIdleCpuNs(text, nullptr, 1e7), 320 * 1e7) << "every CPU";
  cpu_set_t mask;
  CPU_ZERO(&mask);
  EXPECT_DOUBLE_EQ(parseIdleCpuNs(text, &mask, 1e7), 320 * 1e7) << "an empty mask: every CPU";
  CPU_SET(1, &mask);
  EXPECT_DOUBLE_EQ(parseIdleCpuNs(text, &mask, 1e7), 210 * 1e7) << "CPU 1 alone";
  CPU_SET(5, &mask);
  EXPECT_DOUBLE_EQ(parseIdleCpuNs(text, &mask, 1e7), -1) << "CPU 5 has no line: unknown";
  // A buffer that cut a CPU's line: its numbers are not whole, so not read.
  CPU_ZERO(&mask);
  CPU_SET(0, &mask);
  CPU_SET(1, &mask);
  EXPECT_DOUBLE_EQ(parseIdleCpuNs("cpu0 4 0 2 100 10 0\ncpu1 6 0 3 20", &mask, 1e7), -1);
  EXPECT_DOUBLE_EQ(parseIdleCpuNs("cpu0 4 0 2 100 10 0\ncpu1 6 0 3 20", nullptr, 1e7), 110 * 1e7);
  EXPECT_DOUBLE_EQ(parseIdleCpuNs("cpu0 4 0 2\n", nullptr, 1e7), -1) << "too few fields";
  EXPECT_DOUBLE_EQ(parseIdleCpuNs("", nullptr, 1e7), -1);
  // This machine's: readable, and it does not go back.
  double before = idleCpuNs(nullptr);
  ASSERT_GE(before, 0) << "/proc/stat readable";
  usleep(30000);
  EXPECT_GE(idleCpuNs(nullptr), before);
}

TEST(ExperimentPolicyTest, SchedstatAndCgroupQuotasAreParsed) {
  SchedStat stat;
  ASSERT_TRUE(parseSchedStat("123456 7890 42\n", &stat));
  EXPECT_EQ(stat.cpu_ns, 123456u);
  EXPECT_EQ(stat.wait_ns, 7890u);
  EXPECT_FALSE(parseSchedStat("", &stat));
  EXPECT_FALSE(parseSchedStat("12 x", &stat));
  EXPECT_DOUBLE_EQ(parseCgroupCpuMax("max 100000\n"), 0.0) << "no quota";
  EXPECT_DOUBLE_EQ(parseCgroupCpuMax("150000 100000\n"), 1.5);
  EXPECT_DOUBLE_EQ(parseCgroupCpuMax("50000 100000"), 0.5);
  EXPECT_DOUBLE_EQ(parseCgroupCpuMax("garbage"), 0.0);
  // The calling thread's own schedstat: CPU time grows while it works.
  SchedStat before, after;
  ASSERT_TRUE(readSchedStat(0, &before)) << "this kernel provides /proc/thread-self/schedstat";
  volatile uint64_t sink = 0;
  for (uint64_t i = 0; i < 20000000; ++i)
    sink = sink + i;
  ASSERT_TRUE(readSchedStat(0, &after));
  EXPECT_GT(after.cpu_ns, before.cpu_ns);
  // CPUs: at least one, at most the machine's.
  double cpus = availableCpus();
  EXPECT_GT(cpus, 0.0);
  EXPECT_LE(cpus, double(sysconf(_SC_NPROCESSORS_ONLN)));
  // The union of the threads' masks counts, not one thread's: a program that
  // pins each thread (main too) to a CPU of its own still has them all.
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(0, &one);
  EXPECT_LE(availableCpus(&one), 1.0);
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
  EXPECT_EQ(availableCpus(&allowed), cpus);
}

TEST(ExperimentPolicyTest, TheLineChoiceFollowsSamplesWhateverTheRhythmOfTheThreads) {
  // Two threads signal batches of 10 samples: one on a CPU every 10 ms, one
  // that sleeps most of the time every 74 ms (each +-0.5 ms); the second has
  // 10/84 = 11.9 % of the samples. A choice ends each window of 100-120 ms
  // (an experiment and its pause). The reservoir over a window's batches
  // picks the sleeper's line in proportion to its samples; the old rule, the
  // first batch after the window, picks it about 10 / (2 x 74) = 6.8 % of
  // the time.
  std::mt19937_64 timing(3);
  std::uniform_real_distribution<double> jitter(-0.5, 0.5), length(100, 120);
  const double busyPeriod = 10, sleeperPeriod = 74;
  const int choices = 20000;
  std::vector<std::pair<double, int>> batches; // (time, thread: 0 busy, 1 sleeper)
  double horizon = choices * 121.0;
  for (double t = 3; t < horizon; t += busyPeriod)
    batches.push_back({t + jitter(timing), 0});
  for (double t = 41; t < horizon; t += sleeperPeriod)
    batches.push_back({t + jitter(timing), 1});
  std::sort(batches.begin(), batches.end());
  uint64_t random = 12345;
  int reservoirSleeper = 0, firstSleeper = 0;
  size_t next = 0;
  double windowEnd = 0;
  for (int c = 0; c < choices; ++c) {
    windowEnd += length(timing);
    uint64_t total = 0;
    int candidate = -1;
    for (; next < batches.size() && batches[next].first < windowEnd; ++next) {
      total += 10;
      if (reservoirTakes(random, 10, total))
        candidate = batches[next].second;
    }
    ASSERT_LT(next, batches.size());
    reservoirSleeper += candidate == 1;
    firstSleeper += batches[next].second == 1;
  }
  double share = busyPeriod / (busyPeriod + sleeperPeriod);
  EXPECT_NEAR(double(reservoirSleeper) / choices, share, 0.01);
  EXPECT_NEAR(double(firstSleeper) / choices, busyPeriod / (2 * sleeperPeriod), 0.01);
}

TEST(ExperimentPolicyTest, NextRandomBelowStaysBelowItsBound) {
  uint64_t random = 1;
  std::map<uint64_t, int> seen;
  for (int i = 0; i < 7000; ++i) {
    uint64_t v = nextRandomBelow(random, 7);
    ASSERT_LT(v, 7u);
    ++seen[v];
  }
  EXPECT_EQ(seen.size(), 7u);
  for (const auto &[value, count] : seen)
    EXPECT_NEAR(count, 1000, 150) << value;
}

// A latency point over a window [0, E] of virtual time, as the runtime sees
// it: the counters at the start and at the end, and the sums of the visits'
// calls while the flag was up. Requests are (begin, end) in virtual time.
struct LatencyTimeline {
  LatencyCounts start{7, 7}, end{7, 7}; // seven earlier requests, all done
  LatencySums sums;
  // A request seen whole: each of its visits counted and summed where it
  // falls.
  void request(int64_t begin, int64_t finish, int64_t window_end) {
    visit(begin, window_end, &start.begins, &sums.begins, &sums.begin_ns, &end.begins);
    visit(finish, window_end, &start.ends, &sums.ends, &sums.end_ns, &end.ends);
  }
  // A visit at |at|: before the window, it is in the start's counters; in
  // it, in the sums; up to its end, in the end's counters.
  static void visit(int64_t at, int64_t window_end, uint64_t *start_count, uint64_t *sum_count,
                    int64_t *sum_ns, uint64_t *end_count) {
    if (at < 0)
      ++*start_count;
    if (at >= 0 && at <= window_end)
      *sum_ns += at, ++*sum_count;
    if (at <= window_end)
      ++*end_count;
  }
};

TEST(ExperimentPolicyTest, AVisitIsTimedByTheVisitingThreadsOwnClock) {
  // The experiment started with the global count at 1000; 10 ms later the
  // others have been delayed 3 ms (global 4000), and this thread, woken by
  // its timer owing 2 ms, paid them while the line inserted 1 ms more: its
  // local count is 3000. Its visit is at 10 - 2 = 8 ms of virtual time, not
  // at 10 - 3 = 7: the 1 ms it still owes is paid after the visit, inside
  // the request the visit begins, and the window subtracts it there.
  EXPECT_EQ(visitVirtualNs(10000, 3000, 1000, 0), 8000);
  // Its last pause overshot by 0.2 ms: behind by that much.
  EXPECT_EQ(visitVirtualNs(10000, 3000, 1000, 200), 7800);
  // A local count from before the experiment: nothing taken in it yet.
  EXPECT_EQ(visitVirtualNs(10000, 400, 1000, 0), 10000);
  // Ahead of the global count (its own samples in the line): all of it.
  EXPECT_EQ(visitVirtualNs(10000, 6000, 1000, 0), 5000);
}

TEST(ExperimentPolicyTest, LatencyWindowIsTheInFlightAreaOverTheWindow) {
  LatencyTimeline t;
  t.request(-5, 10, 100);  // in flight at the start: 10 of it inside
  t.request(20, 30, 100);  // 10
  t.request(90, 120, 100); // in flight at the end: 10 of it inside
  LatencyWindow w = latencyWindow(t.start, t.end, t.sums, 100);
  EXPECT_DOUBLE_EQ(w.in_flight, 0.3);
  EXPECT_EQ(w.arrivals, 2u);
  EXPECT_EQ(w.departures, 2u);
}

TEST(ExperimentPolicyTest, LatencyWindowCountsAVisitThatRacedTheStartOnce) {
  // A request begun as the flag rose: its visit's call saw the flag (its
  // time is in the sums) and its count landed before the start's counters
  // were read. Before, the window fell back to the in-flight count sampled
  // every poll, which is not in virtual time.
  LatencyTimeline t;
  t.request(20, 30, 100);
  t.sums.begin_ns += 0, ++t.sums.begins;            // the racing request: begins at 0...
  ++t.start.begins, ++t.end.begins;                 // ...counted in the start's counters
  t.sums.end_ns += 40, ++t.sums.ends, ++t.end.ends; // and ends at 40
  LatencyWindow w = latencyWindow(t.start, t.end, t.sums, 100);
  EXPECT_DOUBLE_EQ(w.in_flight, (10.0 + 40.0) / 100);
  EXPECT_EQ(w.arrivals, 2u);
  EXPECT_EQ(w.departures, 2u);

  // The same with an end: a request from before the window, ended at 0.
  LatencyTimeline u;
  u.request(20, 30, 100);
  ++u.start.begins, ++u.end.begins;            // begun before the window
  ++u.sums.ends, ++u.start.ends, ++u.end.ends; // ended at 0, counted at the start too
  LatencyWindow v = latencyWindow(u.start, u.end, u.sums, 100);
  EXPECT_DOUBLE_EQ(v.in_flight, 0.1);
}

TEST(ExperimentPolicyTest, LatencyWindowLeavesOutVisitsCountedAfterTheFlagFell) {
  LatencyTimeline t;
  t.request(20, 30, 100);
  t.request(95, 130, 100); // in flight at the end: 5 inside
  ++t.end.begins;          // a request begun after the flag fell, counted before the read
  ++t.end.ends;            // the one begun at 95 ended after the flag fell, counted too
  LatencyWindow w = latencyWindow(t.start, t.end, t.sums, 100);
  EXPECT_DOUBLE_EQ(w.in_flight, (10.0 + 5.0) / 100);
  EXPECT_EQ(w.arrivals, 2u);
  EXPECT_EQ(w.departures, 1u);
}

TEST(ExperimentPolicyTest, LatencyWindowIsNotFromVisitsThatWentPastTheRuntime) {
  // Visits from code built without the pass are counted, never summed: the
  // sums say nothing of those requests, and the caller samples instead.
  LatencyTimeline t;
  t.request(20, 30, 100);
  t.end.begins += 10, t.end.ends += 10;
  LatencyWindow w = latencyWindow(t.start, t.end, t.sums, 100);
  EXPECT_TRUE(std::isnan(w.in_flight));
  EXPECT_EQ(w.arrivals, 11u) << "the counters' figures";
  EXPECT_EQ(w.departures, 11u);
  // Up to kRacingVisits apart, the sums are used.
  LatencyTimeline u;
  u.request(20, 30, 100);
  u.end.begins += kRacingVisits;
  EXPECT_FALSE(std::isnan(latencyWindow(u.start, u.end, u.sums, 100).in_flight));
  // A window of no virtual length has no mean.
  EXPECT_TRUE(std::isnan(latencyWindow(u.start, u.end, u.sums, 0).in_flight));
}
