//===- test/unit/runtime/ExperimentTest.cpp - Experiments in real processes -===//
//
// Runs experiment_target with experiments on and checks the records the
// runtime appends. Experiments are made short (CAUSAL_EXPERIMENT_NS) so a
// run of a few hundred ms holds several. Nothing here asserts a duration:
// only that things happened, and relations that hold whatever the machine
// load (e.g. the delay an experiment inserted is at most its selected
// samples times the per-sample delay).
//
//===----------------------------------------------------------------------===//

#include "ProfileParse.h"
#include "RunTarget.h"
#include "Sanitizers.h"

#include "causal/tunables.h"

#include <gtest/gtest.h>

#include <cmath>

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>
#include <string>
#include <vector>

using causal::test::parseProfile;
using causal::test::ProfileRecord;
using causal::test::readFile;

namespace {

using causal::test::outputValue;
using ProcessResult = causal::test::TargetResult;

struct OneCpuTotals;

bool signalsAndSamples(const std::string &err, unsigned long long *signals,
                       unsigned long long *expected, unsigned long long *arrived);

class ExperimentTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = causal::test::makeTempDir(::testing::TempDir(), "causal-exp-test");
    ASSERT_FALSE(dir_.empty());
    profile_ = dir_ + "/profile.coz";
  }
  void TearDown() override { causal::test::removeTree(dir_); }

  // Short experiments, the profile in the temporary directory.
  std::map<std::string, std::string> baseEnv() const {
    return {{CAUSAL_ENV_OUTPUT, profile_},
            {CAUSAL_ENV_EXPERIMENT_NS, "20000000"},
            {CAUSAL_ENV_COOLOFF_NS, "2000000"}};
  }

  // Experiments on workUnit's line at |speedup| %, the runtime's summary at
  // exit (what was paused and spun), and the pauses alone, not the
  // shared-CPU model.
  // One thread that runs the selected line most of its time, 400 ms under
  // perf_event at |speedup| %, CAUSAL_SAMPLE_COST_NS=|cost| and
  // CAUSAL_LINE_SAMPLE_PERIOD_NS=|finer|, into a fresh profile; with its
  // summary's signals and samples (|perf| false: perf_event not used here).
  struct OneLineRun {
    ProcessResult result;
    unsigned long long signals = 0, expected = 0, arrived = 0;
    bool perf = false;
  };
  OneLineRun runOneLineThread(const char *speedup, const char *cost, const char *finer) {
    unlink(profile_.c_str());
    std::map<std::string, std::string> env = pausesEnv(speedup);
    env[CAUSAL_ENV_SAMPLE_COST] = cost;
    env[CAUSAL_ENV_LINE_SAMPLE_PERIOD] = finer;
    env[CAUSAL_ENV_SAMPLER] = "perf";
    OneLineRun one;
    one.result = run({"delays", "400", "1"}, env);
    one.perf = signalsAndSamples(one.result.err, &one.signals, &one.expected, &one.arrived);
    return one;
  }

  std::map<std::string, std::string> pausesEnv(const char *speedup) const {
    std::map<std::string, std::string> env = baseEnv();
    env[CAUSAL_ENV_FIXED_LINE] = "exp_work.cpp:10";
    env[CAUSAL_ENV_FIXED_SPEEDUP] = speedup;
    env[CAUSAL_ENV_VERBOSE] = "1";
    env[CAUSAL_ENV_SHARED_CPUS] = "0";
    return env;
  }

  ProcessResult run(const std::vector<std::string> &args,
                    const std::map<std::string, std::string> &env) {
    return causal::test::runTarget(CAUSAL_EXPERIMENT_TARGET, args, env, dir_);
  }

  // Runs |args| with workUnit's line sped up by 50 % in every experiment;
  // the totals of its experiments but the first and last, which must count
  // one CPU (elapsed 0 if it did not run or ran fewer than 3 experiments).
  OneCpuTotals oneCpuRunAt50(const std::vector<std::string> &args, ProcessResult *r);

  std::vector<ProfileRecord> profile() {
    std::vector<std::string> malformed;
    std::vector<ProfileRecord> records = parseProfile(readFile(profile_), &malformed);
    EXPECT_TRUE(malformed.empty()) << "malformed line: " << malformed.front();
    return records;
  }

  std::string dir_, profile_;
};

unsigned long long number(const ProfileRecord &record, const char *field) {
  return strtoull(record.fields.at(field).c_str(), nullptr, 10);
}

// The number the runtime's summary prints just before |words| ("123 ns
// paused by all threads"), or false if the summary has no such words.
bool numberBefore(const std::string &text, const std::string &words, unsigned long long *value) {
  size_t at = text.find(" " + words);
  if (at == std::string::npos || at == 0)
    return false;
  size_t space = text.rfind(' ', at - 1);
  *value = strtoull(text.c_str() + (space == std::string::npos ? 0 : space + 1), nullptr, 10);
  return true;
}

// Experiments with the point records that follow each.
struct Experiment {
  ProfileRecord record;
  std::map<std::string, ProfileRecord> points;
};

std::vector<Experiment> experiments(const std::vector<ProfileRecord> &records) {
  std::vector<Experiment> result;
  for (const ProfileRecord &r : records) {
    if (r.type == "experiment")
      result.push_back({r, {}});
    else if ((r.type == "throughput-point" || r.type == "latency-point") && !result.empty())
      result.back().points[r.fields.at("name")] = r;
  }
  return result;
}

// Sums over the experiments of a one-CPU run but its first and last (the
// first starts while threads are created and the load settles, the last
// ends with the run); every experiment between must count one CPU.
struct OneCpuTotals {
  double delay = 0, elapsed = 0, shared = 0, waiting = 0; // waiting: on average
  double idle = 0;     // the CPU idle, on average (-1: an experiment without idle=)
  std::string figures; // "delay/waiting/idle" by experiment
};

OneCpuTotals middleExperimentsOnOneCpu(const std::vector<Experiment> &exps) {
  OneCpuTotals totals;
  for (size_t i = 1; i + 1 < exps.size(); ++i) {
    const ProfileRecord &e = exps[i].record;
    EXPECT_EQ(e.fields.at("cpus"), "1.00");
    double delay = double(number(e, "delay"));
    totals.delay += delay;
    totals.shared += double(number(e, "shared-cpu-delay"));
    totals.waiting += strtod(e.fields.at("waiting").c_str(), nullptr);
    totals.elapsed += double(number(e, "duration")) + delay;
    auto idle = e.fields.find("idle");
    if (idle == e.fields.end() || totals.idle < 0)
      totals.idle = -1;
    else
      totals.idle += strtod(idle->second.c_str(), nullptr);
    totals.figures += " " + e.fields.at("delay") + "/" + e.fields.at("waiting") + "/" +
                      (idle == e.fields.end() ? "-" : idle->second);
  }
  if (exps.size() > 2) {
    totals.waiting /= double(exps.size() - 2);
    if (totals.idle > 0)
      totals.idle /= double(exps.size() - 2);
  }
  return totals;
}

OneCpuTotals ExperimentTest::oneCpuRunAt50(const std::vector<std::string> &args, ProcessResult *r) {
  std::map<std::string, std::string> env = baseEnv();
  env[CAUSAL_ENV_FIXED_LINE] = "exp_work.cpp:10";
  env[CAUSAL_ENV_FIXED_SPEEDUP] = "50";
  env[CAUSAL_ENV_VERBOSE] = "1";
  unlink(profile_.c_str()); // a run appends: only this run's experiments
  *r = run(args, env);
  EXPECT_TRUE(r->exited && r->status == 0) << r->err;
  std::vector<Experiment> exps = experiments(profile());
  EXPECT_GE(exps.size(), 3u);
  return middleExperimentsOnOneCpu(exps);
}

} // namespace

TEST_F(ExperimentTest, ProgressPointsAreCountedMergedAndLoggedPerExperiment) {
  if (causal::test::kSamplesHeldBack)
    GTEST_SKIP() << causal::test::kSamplesHeldBackWhy;
  std::map<std::string, std::string> env = baseEnv();
  env[CAUSAL_ENV_SEED] = "1";
  ProcessResult r = run({"progress", "600"}, env);
  ASSERT_TRUE(r.exited && r.status == 0) << r.err;
  std::vector<ProfileRecord> records = profile();
  ASSERT_FALSE(records.empty());
  EXPECT_EQ(records.front().type, "startup");
  std::vector<Experiment> exps = experiments(records);
  ASSERT_GE(exps.size(), 2u) << readFile(profile_);
  unsigned long long work_total = outputValue(r.out, "work"), delta_sum = 0;
  bool coz_req_registered = false, coz_work_registered = false;
  for (const Experiment &e : exps) {
    // Only workUnit runs in scope: the system header line is never chosen.
    EXPECT_EQ(e.record.fields.at("selected"), "exp_work.cpp:10");
    double speedup = atof(e.record.fields.at("speedup").c_str());
    EXPECT_GE(speedup, 0.0);
    EXPECT_LE(speedup, 1.0);
    ASSERT_TRUE(e.points.count("work")) << "throughput point of both images, merged";
    delta_sum += number(e.points.at("work"), "delta");
    ASSERT_TRUE(e.points.count("req"));
    EXPECT_EQ(e.points.at("req").type, "latency-point");
    const auto &req = e.points.at("req").fields;
    double in_flight = req.count("in-flight") ? atof(req.at("in-flight").c_str()) : 0.0;
    // One thread: at most one request in flight, give or take the estimator's
    // scatter: the area is taken in virtual time and a delay is inserted a
    // whole sample period (times the speedup) at a time, so an experiment's
    // windows may sum a little below 0 or above 1 (docs/report.md, "Latency";
    // one CI run read 1.055).
    EXPECT_GE(in_flight, -0.1);
    EXPECT_LE(in_flight, 1.1) << "one thread: at most one request in flight";
    // Coz's viewer reads `difference` with parseInt: the count rounded, a
    // whole number within half of `in-flight`. Both are written with four
    // decimals, so a count of 0.50003 reads "0.5000" and rounds to 1 (a CI
    // run on a loaded machine, where some experiments' counts fall to 1/2,
    // 2/3, 3/4 ...): half plus the printed precision.
    double difference = atof(req.at("difference").c_str());
    EXPECT_EQ(difference, std::nearbyint(difference));
    EXPECT_LE(std::fabs(difference - in_flight), 0.5 + 1e-4)
        << "difference " << difference << ", in-flight " << in_flight;
    if (CAUSAL_HAVE_COZ_H) {
      // coz.h registers a point at its first visit: an experiment that
      // began before it (a loaded machine may hold the thread back that
      // long) cannot count it; every later one does.
      // ("coz-req" is visited first, at COZ_BEGIN.)
      coz_req_registered = coz_req_registered || e.points.count("coz-req");
      coz_work_registered = coz_work_registered || e.points.count("coz-work");
      EXPECT_EQ(e.points.count("coz-req"), coz_req_registered ? 1u : 0u);
      EXPECT_EQ(e.points.count("coz-work"), coz_work_registered ? 1u : 0u);
      EXPECT_TRUE(coz_req_registered || !coz_work_registered);
    }
  }
  if (CAUSAL_HAVE_COZ_H)
    EXPECT_TRUE(coz_work_registered) << "the coz.h points were counted by experiments";
  EXPECT_GT(delta_sum, 0u);
  EXPECT_LE(delta_sum, work_total) << "experiments cover part of the run, never more";
  // The run's last block ends with its samples (with shutdown after them
  // when the run outlasted the flush period and was written in parts).
  EXPECT_TRUE(records.back().type == "samples" || records.back().type == "shutdown")
      << records.back().type;
}

TEST_F(ExperimentTest, CozHeaderProgramsFindTheRuntime) {
  if (!CAUSAL_HAVE_COZ_H)
    GTEST_SKIP() << "coz.h not installed (apt-get install coz-profiler)";
  if (causal::test::kSamplesHeldBack)
    GTEST_SKIP() << causal::test::kSamplesHeldBackWhy;
  ProcessResult r = run({"progress", "300"}, baseEnv());
  ASSERT_TRUE(r.exited && r.status == 0) << r.err;
  EXPECT_EQ(outputValue(r.out, "coz_api"), 1u) << r.out;
  unsigned long long coz_total = outputValue(r.out, "coz"), delta_sum = 0;
  for (const Experiment &e : experiments(profile()))
    if (e.points.count("coz-work")) {
      delta_sum += number(e.points.at("coz-work"), "delta");
      EXPECT_EQ(e.points.at("coz-req").type, "latency-point");
    }
  EXPECT_GT(delta_sum, 0u);
  EXPECT_LE(delta_sum, coz_total);
}

TEST_F(ExperimentTest, SameSeedSameSpeedups) {
  std::map<std::string, std::string> env = baseEnv();
  env[CAUSAL_ENV_SEED] = "12345";
  env[CAUSAL_ENV_FIXED_LINE] = "exp_work.cpp:10";
  std::vector<std::vector<std::string>> sequences;
  for (int i = 0; i < 2; ++i) {
    unlink(profile_.c_str());
    ProcessResult r = run({"progress", "300"}, env);
    ASSERT_TRUE(r.exited && r.status == 0) << r.err;
    std::vector<std::string> speedups;
    for (const Experiment &e : experiments(profile()))
      speedups.push_back(e.record.fields.at("speedup"));
    ASSERT_GE(speedups.size(), 3u);
    sequences.push_back(speedups);
  }
  size_t common = std::min(sequences[0].size(), sequences[1].size());
  for (size_t i = 0; i < common; ++i)
    EXPECT_EQ(sequences[0][i], sequences[1][i]) << "experiment " << i;
}

// A pause that sleeps or yields switches its thread out, and those switches
// are the profiler's: a thread whose pauses made it switch often moved to the
// CPU-time timer as if the program did (the workers of bench/accuracy's
// heartbeat case at a period of 0.5 ms, whose delays then came a tick at a
// time: +22.6 % predicted for +39.4 %). The pauses count their switches apart
// from the thread's own (the summary's "context switches in pauses"), which
// the switch windows leave out; only where a switch window may look at them
// (a cost per switch known), so no getrusage is added to pauses otherwise.
TEST_F(ExperimentTest, SwitchesInPausesAreCountedApartFromTheThreads) {
  if (causal::test::kSamplesHeldBack)
    GTEST_SKIP() << causal::test::kSamplesHeldBackWhy;
  for (const char *cost : {"20000", "0"}) {
    std::map<std::string, std::string> env = pausesEnv("100");
    env[CAUSAL_ENV_PERF_SWITCH_COST] = cost;
    unlink(profile_.c_str());
    // The line's thread and the paying thread on CPUs of their own: the
    // payer pauses at nearly every sample, and sleeps or yields in them.
    ProcessResult r = run({"pausing", "400"}, env);
    if (r.exited && r.status == 3)
      GTEST_SKIP() << "fewer than 2 CPUs";
    ASSERT_TRUE(r.exited && r.status == 0) << r.err;
    size_t at = r.err.find("pauses: ");
    ASSERT_NE(at, std::string::npos) << r.err;
    unsigned long long pauses = strtoull(r.err.c_str() + at + 8, nullptr, 10), switches = 0;
    ASSERT_TRUE(numberBefore(r.err, "context switches in pauses", &switches)) << r.err;
    if (strcmp(cost, "0") == 0) {
      EXPECT_EQ(switches, 0u) << "not counted where no thread moves: " << r.err;
    } else {
      EXPECT_GT(pauses, 10u) << r.err;
      EXPECT_GT(switches, 0u) << r.err;
    }
  }
}

TEST_F(ExperimentTest, FixedSpeedupInsertsDelaysBoundedBySelectedSamples) {
  std::map<std::string, std::string> env = baseEnv();
  env[CAUSAL_ENV_FIXED_LINE] = "exp_work.cpp:10";
  env[CAUSAL_ENV_FIXED_SPEEDUP] = "50";
  env[CAUSAL_ENV_VERBOSE] = "1";
  // Each thread is meant to have a CPU of its own; on a busy machine they
  // would compete with other processes and be accounted from shared CPUs.
  env[CAUSAL_ENV_SHARED_CPUS] = "0";
  // The line's own bound: no sample's cost in the delay (tested below).
  env[CAUSAL_ENV_SAMPLE_COST] = "0";
  ProcessResult r = run({"delays", "500", "2"}, env);
  ASSERT_TRUE(r.exited && r.status == 0) << r.err;
  // The run above is still checked for races; how many samples of the
  // selected line arrive (and so how much delay is inserted) is not: one CI
  // run under TSan got 279 samples and none of them during an experiment.
  if (causal::test::kSamplesHeldBack)
    GTEST_SKIP() << causal::test::kSamplesHeldBackWhy;
  unsigned long long delay_sum = 0, bound_sum = 0;
  std::vector<Experiment> exps = experiments(profile());
  ASSERT_GE(exps.size(), 2u);
  for (const Experiment &e : exps) {
    EXPECT_EQ(e.record.fields.at("speedup"), "0.50");
    EXPECT_EQ(number(e.record, "shared-cpu-delay"), 0u) << "--no-shared-cpus";
    unsigned long long delay = number(e.record, "delay");
    unsigned long long bound = number(e.record, "selected-samples") *
                               CAUSAL_DEFAULT_SAMPLE_PERIOD_NS / 2 * CAUSAL_LOSS_SCALE_MAX_PERCENT /
                               100;
    // Each sample of the selected line adds half a period, scaled by at
    // most CAUSAL_LOSS_SCALE_MAX_PERCENT % for samples the kernel did not
    // deliver; samples counted just before an experiment ends may not be
    // published.
    EXPECT_LE(delay, bound);
    delay_sum += delay;
    bound_sum += bound;
    EXPECT_LT(number(e.record, "duration"), 1ull << 62) << "duration = elapsed - delay >= 0";
  }
  EXPECT_GT(delay_sum, 0u) << "the selected line ran: delays were inserted";
  EXPECT_GE(delay_sum, bound_sum * 100 / CAUSAL_LOSS_SCALE_MAX_PERCENT / 2);
  // The other thread (systemWork) paused for them.
  size_t at = r.err.find("ns paused by all threads");
  ASSERT_NE(at, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(" 0 ns paused"), std::string::npos) << r.err;
}

namespace {
// The runtime's summary: sample signals handled, samples expected and
// arrived ("samples expected from the sampled threads' CPU time: E (give or
// take S), arrived: N"); false if it has none (no summary, or no perf
// sampling).
bool signalsAndSamples(const std::string &err, unsigned long long *signals,
                       unsigned long long *expected, unsigned long long *arrived) {
  const char *const expected_words = "samples expected from the sampled threads' CPU time: ";
  size_t at = err.find("arrived: "), expected_at = err.find(expected_words);
  if (err.find("perf_event sampling is not used") != std::string::npos || at == std::string::npos ||
      expected_at == std::string::npos || !numberBefore(err, "sample signals handled", signals))
    return false;
  *expected = strtoull(err.c_str() + expected_at + strlen(expected_words), nullptr, 10);
  *arrived = strtoull(err.c_str() + at + strlen("arrived: "), nullptr, 10);
  return true;
}
} // namespace

TEST_F(ExperimentTest, TheSelectedLinesThreadSamplesFinerWithoutCountingMoreSamples) {
  if (causal::test::kSamplesHeldBack)
    GTEST_SKIP() << causal::test::kSamplesHeldBackWhy;
  // One thread that runs the selected line most of its time: during the
  // experiments (most of the run) it samples at a quarter of the period.
  for (const char *finer : {"250000", "0"}) {
    // The cost known at once (no probe) and not taken out.
    OneLineRun one = runOneLineThread("50", "0", finer);
    const ProcessResult &r = one.result;
    ASSERT_TRUE(r.exited && r.status == 0) << r.err;
    if (!one.perf)
      GTEST_SKIP() << "no perf_event sampling here: " << r.err;
    unsigned long long signals = one.signals, expected = one.expected, arrived = one.arrived;
    ASSERT_GT(arrived, 100u) << r.err;
    // The ordinary samples keep the full period: only every fourth signal
    // counts, so the samples expected from the CPU time still arrive.
    EXPECT_GT(double(arrived), 0.6 * double(expected)) << finer << "\n" << r.err;
    EXPECT_LT(double(arrived), 1.4 * double(expected)) << finer << "\n" << r.err;
    if (!strcmp(finer, "0")) {
      EXPECT_LE(double(signals), 1.1 * double(arrived)) << "one signal per sample\n" << r.err;
      continue;
    }
    EXPECT_GT(double(signals), 1.5 * double(arrived)) << "finer signals\n" << r.err;
    // Four finer signals in the line make one selected sample, and add half
    // a period in all: the delay per selected sample is that of the full
    // period (the bound of FixedSpeedupInsertsDelaysBoundedBySelectedSamples).
    unsigned long long delay = 0, bound = 0;
    for (const Experiment &e : experiments(profile())) {
      delay += number(e.record, "delay");
      bound += number(e.record, "selected-samples") * CAUSAL_DEFAULT_SAMPLE_PERIOD_NS / 2;
    }
    EXPECT_GT(bound, 0u) << r.err;
    EXPECT_LE(delay, bound * CAUSAL_LOSS_SCALE_MAX_PERCENT / 100) << r.err;
    EXPECT_GE(delay, bound / 2) << r.err;
  }
}

TEST_F(ExperimentTest, TheSamplesCostIsTakenOutInVirtualTime) {
  if (causal::test::kSamplesHeldBack)
    GTEST_SKIP() << causal::test::kSamplesHeldBackWhy;
  // At 0 % no line adds a delay; what is inserted is the samples' cost: a
  // set 100 us per signal (and the handler's time) against a period of 1 ms
  // of CPU time is about a tenth of the one thread's time in experiments.
  // Generous bounds: the thread may wait for its CPU (a busy machine), and
  // experiments' drains and edges are not sampled alike.
  for (const char *cost : {"100000", "0"}) {
    OneLineRun one = runOneLineThread("0", cost, "0");
    const ProcessResult &r = one.result;
    ASSERT_TRUE(r.exited && r.status == 0) << r.err;
    if (!one.perf)
      GTEST_SKIP() << "no perf_event sampling here: " << r.err;
    double delay = 0, elapsed = 0;
    std::vector<Experiment> exps = experiments(profile());
    ASSERT_GE(exps.size(), 3u) << r.err;
    for (const Experiment &e : exps) {
      delay += double(number(e.record, "delay"));
      elapsed += double(number(e.record, "duration")) + double(number(e.record, "delay"));
    }
    if (!strcmp(cost, "0")) {
      EXPECT_EQ(delay, 0) << "no cost, no line sped up: nothing inserted\n" << r.err;
      continue;
    }
    EXPECT_GT(delay, 0.02 * elapsed) << r.err;
    EXPECT_LT(delay, 0.6 * elapsed) << r.err;
  }
}

TEST_F(ExperimentTest, TheSamplesCostIsMeasuredWhenNotSet) {
  if (causal::test::kSamplesHeldBack)
    GTEST_SKIP() << causal::test::kSamplesHeldBackWhy;
  // Unset, the cost is measured once after the first experiment (a probe on
  // the profiler thread) and said with --verbose. A perf signal's delivery
  // and handler take microseconds (6-25 us on the development VMs); a
  // reading of 1 ms, the period, would take out every sample. The probe
  // compares CPU times of a few ms, so beside a busy CPU one run may read
  // nothing (0: nothing taken out); of three runs one must read a cost.
  const char *const said = "a perf sample's delivery costs a thread ";
  unsigned long long cost = 0;
  for (int attempt = 0; attempt < 3 && cost == 0; ++attempt) {
    unlink(profile_.c_str());
    std::map<std::string, std::string> env = pausesEnv("0");
    env[CAUSAL_ENV_SAMPLER] = "perf";
    ProcessResult r = run({"delays", "400", "1"}, env);
    ASSERT_TRUE(r.exited && r.status == 0) << r.err;
    unsigned long long signals, expected, arrived;
    if (!signalsAndSamples(r.err, &signals, &expected, &arrived))
      GTEST_SKIP() << "no perf_event sampling here: " << r.err;
    ASSERT_GE(experiments(profile()).size(), 2u) << r.err;
    size_t at = r.err.find(said);
    ASSERT_NE(at, std::string::npos) << "the probe ran after the first experiment\n" << r.err;
    EXPECT_NE(r.err.find("ns (measured;", at), std::string::npos) << r.err;
    cost = strtoull(r.err.c_str() + at + strlen(said), nullptr, 10);
    EXPECT_LT(cost, 1000000u) << r.err;
  }
  EXPECT_GT(cost, 0u) << "three runs measured no cost";
}

TEST_F(ExperimentTest, AbSpeedupAlternatesZeroAndSAndMarksEveryExperiment) {
  std::map<std::string, std::string> env = baseEnv();
  env[CAUSAL_ENV_FIXED_LINE] = "exp_work.cpp:10";
  env[CAUSAL_ENV_AB_SPEEDUP] = "40";
  env[CAUSAL_ENV_FIXED_SPEEDUP] = "100"; // the A/B setting wins
  ProcessResult r = run({"delays", "500", "2"}, env);
  ASSERT_TRUE(r.exited && r.status == 0) << r.err;
  std::vector<Experiment> exps = experiments(profile());
  ASSERT_GE(exps.size(), 4u);
  const char *expected[] = {"0.00", "0.40", "0.40", "0.00"};
  for (size_t i = 0; i < exps.size(); ++i) {
    EXPECT_EQ(exps[i].record.fields.at("speedup"), expected[i % 4]) << "experiment " << i;
    EXPECT_EQ(exps[i].record.fields.at("ab-speedup"), "0.40") << "experiment " << i;
  }
}

TEST_F(ExperimentTest, SharedCpusTurnSpeedupsIntoDelayWhenThreadsOutnumberCpus) {
  if (causal::test::kSamplesHeldBack)
    GTEST_SKIP() << causal::test::kSamplesHeldBackWhy;
  // Four threads on one CPU, all in the selected line: pausing some of them
  // would only hand the CPU to the others, so the runtime accounts the
  // speedup as CPU time removed from the shared CPU (docs/runtime.md). A
  // line that is all of the work, sped up by 50 %, makes the run 50 %
  // shorter: the delay is about half the elapsed time (0.5 x the selected
  // samples' CPU time / the competing threads' CPU time, nearly all of it the
  // line's). Experiments record the CPUs and how many threads waited.
  ProcessResult r;
  OneCpuTotals totals = oneCpuRunAt50({"oversub", "900", "4"}, &r);
  ASSERT_GT(totals.elapsed, 0);
  // On average over the experiments: under ASan, one experiment once read
  // 0 threads waiting where the others read about 3 (a window whose
  // scheduler figures were missed; not explained yet).
  EXPECT_GT(totals.waiting, 1.5)
      << "four runnable threads on one CPU: about three wait; by experiment:" << totals.figures;
  EXPECT_GT(totals.shared, 0.8 * totals.delay) << "the delay comes from the shared CPU";
  // The idle time counted is that of the process's CPUs (the machine's
  // others may stand idle); its one CPU was busy. Ticks of 10 ms make one
  // experiment's figure coarse; the average is near 0.
  EXPECT_GE(totals.idle, 0) << "every experiment records idle=:" << totals.figures;
  EXPECT_LT(totals.idle, 0.2) << "the one CPU was busy:" << totals.figures;
  // Half the elapsed time if the line were all of the CPU time; the rest
  // (visits, the loop around workUnit, the runtime) lowers it a little.
  EXPECT_GT(totals.delay / totals.elapsed, 0.3) << r.err;
  EXPECT_LT(totals.delay / totals.elapsed, 0.6) << r.err;
}

TEST_F(ExperimentTest, SharedCpusCountTheThreadsKernelTime) {
  if (causal::test::kSamplesHeldBack)
    GTEST_SKIP() << causal::test::kSamplesHeldBackWhy;
  // Four threads on one CPU, each alternating 200 us of the selected line
  // (user mode) with 200 us of kernel time outside it (reads of /dev/zero),
  // which perf does not sample. The line is half of the CPU time: sped up by
  // 50 %, it makes the run 25 % shorter, so the delay is a quarter of the
  // elapsed time. Counted in samples (user time only), the CPUs the threads
  // kept busy left the kernel time out and the delay came out near half
  // (0.47-0.49 of the elapsed time in the runs before the change; 0.25-0.30
  // after). Beside another test on the same CPU a run read 0.41 in CI (and
  // 0.44 beside a busy process besides): up to three runs, the last of which
  // is checked; the old count read 0.47-0.49 in every run.
  ProcessResult r;
  OneCpuTotals totals;
  std::string runs;
  for (int attempt = 0; attempt < 3; ++attempt) {
    totals = oneCpuRunAt50({"oversubkernel", "900", "4"}, &r);
    ASSERT_GT(totals.elapsed, 0);
    runs += "\n " + totals.figures;
    if (totals.delay / totals.elapsed < 0.37)
      break;
  }
  EXPECT_GT(totals.shared, 0.8 * totals.delay) << "the delay comes from the shared CPU";
  EXPECT_GT(totals.delay / totals.elapsed, 0.15) << r.err;
  EXPECT_LT(totals.delay / totals.elapsed, 0.37)
      << "the kernel time is half of the CPU time the line shares, by run:" << runs;
}

TEST_F(ExperimentTest, TheFirstExperimentAlreadyKnowsThatThreadsOutnumberCpus) {
  if (causal::test::kSamplesHeldBack)
    GTEST_SKIP() << causal::test::kSamplesHeldBackWhy;
  // The first experiment has no last experiment to tell whether the process
  // outnumbers its CPUs: the profiler thread watches it for 20 ms first
  // (CAUSAL_SATURATION_PROBE_NS). Without that, the first experiment used
  // Coz's model whatever the load: no shared-CPU delay, and pauses that
  // slowed a 128-thread pool instead of emulating its speedup.
  std::map<std::string, std::string> env = baseEnv();
  env[CAUSAL_ENV_FIXED_LINE] = "exp_work.cpp:10";
  env[CAUSAL_ENV_FIXED_SPEEDUP] = "50";
  ProcessResult r = run({"oversub", "600", "4"}, env);
  ASSERT_TRUE(r.exited && r.status == 0) << r.err;
  std::vector<Experiment> exps = experiments(profile());
  ASSERT_GE(exps.size(), 1u);
  const ProfileRecord &first = exps[0].record;
  EXPECT_EQ(first.fields.at("cpus"), "1.00");
  uint64_t delay = number(first, "delay");
  ASSERT_GT(delay, 0u) << "a line that is all of the work, at 50 %";
  EXPECT_GT(double(number(first, "shared-cpu-delay")), 0.8 * double(delay))
      << "the first experiment's delay comes from the shared CPU";
}

TEST_F(ExperimentTest, ALineSharingItsCpuWithOtherProcessesIsSpedUpInWallTime) {
  if (causal::test::kSamplesHeldBack)
    GTEST_SKIP() << causal::test::kSamplesHeldBackWhy;
  // One thread in the selected line, on one CPU with two busy processes
  // that are not the program's: the thread gets about a third of the CPU,
  // so the line takes three times its CPU time in wall time, and that is
  // what a speedup of it saves (docs/runtime.md, "Threads that share their
  // CPUs with other processes"). At 50 %, the delay is about half the
  // elapsed time; counted from CPU time alone (Coz's model, and this
  // runtime before) it was about a sixth. The process does not outnumber
  // its one CPU, so the shared-CPU accounting stays out of it.
  ProcessResult r;
  OneCpuTotals totals = oneCpuRunAt50({"foreign", "900", "2"}, &r);
  ASSERT_GT(totals.elapsed, 0);
  EXPECT_GT(totals.waiting, 0.3) << "the thread waits for the CPU the other processes hold:"
                                 << totals.figures;
  // Running + waiting is about one thread on one CPU: the experiments keep
  // Coz's model (an experiment that read just over 110 % would account
  // the line from the shared CPU instead, with about the same delay).
  EXPECT_LT(totals.shared, 0.5 * totals.delay) << totals.figures;
  // The CPU was busy, with the other processes' work: not left idle, so the
  // report says that they took it (Saturation::otherLoad).
  EXPECT_GE(totals.idle, 0) << "every experiment records idle=:" << totals.figures;
  EXPECT_LT(totals.idle, 0.2) << "the one CPU was busy:" << totals.figures;
  // Half the elapsed time if the line were all of the thread's work; the
  // loop around it, the visits and the runtime lower it a little (0.476-0.489
  // in 8 of 8 runs). The old runtime, which counted CPU time only, read about
  // a third of that. (With workUnit's clock read every ~2 us, a quarter of
  // the line in system calls that perf does not sample, runs read 0.27 to
  // 0.48 depending on how the kernel's ticks split user from system time:
  // foreign mode now runs the line in user mode.)
  EXPECT_GT(totals.delay / totals.elapsed, 0.36) << totals.figures << "\n" << r.err;
  EXPECT_LT(totals.delay / totals.elapsed, 0.65) << totals.figures << "\n" << r.err;
}

TEST_F(ExperimentTest, APauseDoesNotSpinOnACpuAnotherThreadWants) {
  if (causal::test::kSamplesHeldBack)
    GTEST_SKIP() << causal::test::kSamplesHeldBackWhy;
  // One CPU, busy with the selected line; a second thread sleeps 1 ms at a
  // time and pays on waking what was inserted meanwhile (half of it, at
  // 50 %). A pause spins its last CAUSAL_PAUSE_SPIN_NS only while a CPU is
  // to spare: here that spin would take the CPU from the thread in the line
  // (bench/accuracy's heartbeat case lost the whole effect at 25 % to it),
  // so the pauses sleep. Before, about a quarter of the paused time was spun.
  // The bound leaves room for a first experiment that misjudged the load.
  ProcessResult r = run({"heartbeat", "600"}, pausesEnv("50"));
  ASSERT_TRUE(r.exited && r.status == 0) << r.err;
  unsigned long long paused = 0, spun = 0;
  ASSERT_TRUE(numberBefore(r.err, "ns paused by all threads", &paused)) << r.err;
  ASSERT_TRUE(numberBefore(r.err, "ns of CPU time spinning", &spun)) << r.err;
  ASSERT_GT(paused, 50000000ull) << "the sleeping thread paid on waking\n" << r.err;
  EXPECT_LT(double(spun), 0.1 * double(paused)) << r.err;
}

TEST_F(ExperimentTest, DelaysOwedWhenAnExperimentEndsArePaidInsideIt) {
  if (causal::test::kSamplesHeldBack)
    GTEST_SKIP() << causal::test::kSamplesHeldBackWhy;
  // A long sample period makes each selected sample a 10 ms delay, so the
  // other thread, which pays after its own samples (every 10 ms of its CPU
  // time), owes up to one or two of them whenever an experiment's time is
  // up. The experiment's duration subtracts every inserted delay, so the
  // drain must let that thread pay them before the experiment is measured;
  // without it a fifth to a third of the delays went unpaid (forgiven when
  // the next experiment started) and each experiment looked shorter than
  // it was.
  std::map<std::string, std::string> env = pausesEnv("100");
  env[CAUSAL_ENV_SAMPLE_PERIOD] = "10000000";
  env[CAUSAL_ENV_EXPERIMENT_NS] = "40000000";
  ProcessResult r = run({"delays", "1500", "2"}, env);
  ASSERT_TRUE(r.exited && r.status == 0) << r.err;
  std::vector<Experiment> exps = experiments(profile());
  ASSERT_GE(exps.size(), 3u);
  unsigned long long delay_sum = 0;
  for (const Experiment &e : exps)
    delay_sum += number(e.record, "delay");
  ASSERT_GT(delay_sum, 0u);
  unsigned long long paused = 0;
  ASSERT_TRUE(numberBefore(r.err, "ns paused by all threads", &paused)) << r.err;
  // The last experiment ends at exit, without a drain: up to two delays
  // (20 ms) of it may go unpaid. Pauses overshoot, never undershoot.
  EXPECT_GE(paused + 20000000ull, delay_sum) << r.err;
}

TEST_F(ExperimentTest, EndToEndRunsOneExperimentEndingAtExit) {
  if (causal::test::kSamplesHeldBack)
    GTEST_SKIP() << causal::test::kSamplesHeldBackWhy;
  std::map<std::string, std::string> env = baseEnv();
  env[CAUSAL_ENV_END_TO_END] = "1";
  ProcessResult r = run({"spin", "200"}, env);
  ASSERT_TRUE(r.exited && r.status == 0) << r.err;
  std::vector<Experiment> exps = experiments(profile());
  ASSERT_EQ(exps.size(), 1u);
  ASSERT_TRUE(exps[0].points.count(CAUSAL_END_TO_END_POINT));
  EXPECT_EQ(number(exps[0].points.at(CAUSAL_END_TO_END_POINT), "delta"), 1u);
}

TEST_F(ExperimentTest, ExperimentsCanBeTurnedOff) {
  std::map<std::string, std::string> env = baseEnv();
  env[CAUSAL_ENV_EXPERIMENTS] = "0";
  ProcessResult r = run({"progress", "200"}, env);
  ASSERT_TRUE(r.exited && r.status == 0) << r.err;
  EXPECT_TRUE(experiments(profile()).empty());
}

TEST_F(ExperimentTest, EverySyncFunctionHasAHookAndIsInterposed) {
  ProcessResult r = run({"symbols"}, baseEnv());
  ASSERT_TRUE(r.exited && r.status == 0) << r.err;
  EXPECT_NE(r.out.find("missing=0"), std::string::npos) << r.out;
}

TEST_F(ExperimentTest, SpinLocksAreHookedThroughBothEntryPoints) {
  ProcessResult r = run({"spinlocks", "1000"}, baseEnv());
  ASSERT_TRUE(r.exited && r.status == 0) << r.err;
  ASSERT_EQ(outputValue(r.out, "hooks"), 1u) << "a __causal_hook_pthread_spin_* is missing";
  EXPECT_EQ(outputValue(r.out, "calls"), 6000u) << r.out;
  EXPECT_EQ(outputValue(r.out, "failed"), 0u) << r.out;
  EXPECT_EQ(outputValue(r.out, "busy"), 1u) << "the hook locked the real spin lock";
}

TEST_F(ExperimentTest, HookAndInterposedEntryPointsCountEachCallOnce) {
  ProcessResult r = run({"hookcount", "1000"}, baseEnv());
  ASSERT_TRUE(r.exited && r.status == 0) << r.err;
  EXPECT_EQ(outputValue(r.out, "calls"), 4000u) << r.out;
  EXPECT_EQ(outputValue(r.out, "busy"), 1u) << "the hook locked the real mutex";
}

// The runtime's own waits (the profiler thread's sleeps, the pauses that pay
// delays, the profile written at exit) make the system call or call the real
// function: none enters a hook. The target defines every hooked function
// itself, ahead of the runtime, and notes the calls from the runtime's code
// and from threads it did not create.
TEST_F(ExperimentTest, TheRuntimesOwnWaitsNeverEnterAHook) {
  if (causal::test::kSamplesHeldBack)
    GTEST_SKIP() << causal::test::kSamplesHeldBackWhy;
  std::map<std::string, std::string> env = baseEnv();
  env[CAUSAL_ENV_FIXED_LINE] = "own_work.cpp:10";
  env[CAUSAL_ENV_FIXED_SPEEDUP] = "50";
  env[CAUSAL_ENV_EXPERIMENT_NS] = "10000000";
  env[CAUSAL_ENV_COOLOFF_NS] = "1000000";
  ProcessResult r = causal::test::runTarget(CAUSAL_OWN_WAITS_TARGET, {"400"}, env, dir_);
  ASSERT_TRUE(r.exited && r.status == 0) << r.err << r.out;
  // Each round of the loops makes 3 calls; how many rounds fit in 400 ms
  // depends on the machine's load.
  EXPECT_GT(outputValue(r.out, "program"), 30u) << "the target sees the program's calls";
  EXPECT_EQ(outputValue(r.out, "runtime"), 0u) << r.out;
  std::vector<Experiment> exps = experiments(profile());
  ASSERT_FALSE(exps.empty());
  uint64_t delays = 0;
  for (const Experiment &e : exps)
    delays += number(e.record, "delay");
  EXPECT_GT(delays, 0u) << "delays were inserted (the helper thread paid them)";
}

TEST_F(ExperimentTest, NoLostWakeUpsWithDelaysForcedOn) {
  std::map<std::string, std::string> env = baseEnv();
  env[CAUSAL_ENV_FIXED_LINE] = "exp_work.cpp:10";
  env[CAUSAL_ENV_FIXED_SPEEDUP] = "100";
  env[CAUSAL_ENV_EXPERIMENT_NS] = "5000000";
  env[CAUSAL_ENV_COOLOFF_NS] = "1000000";
  ProcessResult r = run({"sync", "10000"}, env);
  ASSERT_TRUE(r.exited) << "killed by signal " << -r.status << " (alarm: a lost wake-up?)";
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(outputValue(r.out, "sum"), outputValue(r.out, "expected")) << r.out;
  EXPECT_EQ(outputValue(r.out, "pings"), 10000u) << r.out;
  EXPECT_EQ(outputValue(r.out, "turns"), 3u * (10000 / 10 + 1)) << r.out;
  EXPECT_NE(r.out.find("joined=0"), std::string::npos) << r.out;
  EXPECT_FALSE(experiments(profile()).empty());
}

TEST_F(ExperimentTest, FatalSignalWritesTheProfileAndKeepsTheSignal) {
  for (const char *kind : {"abort", "segv"}) {
    unlink(profile_.c_str());
    ProcessResult r = run({"crash", kind}, baseEnv());
    EXPECT_FALSE(r.exited) << kind;
    EXPECT_EQ(r.status, std::string(kind) == "abort" ? -SIGABRT : -SIGSEGV) << kind;
    std::vector<ProfileRecord> records = profile();
    ASSERT_FALSE(records.empty()) << kind;
    EXPECT_EQ(records.front().type, "startup");
    bool runtime = false, samples = false;
    for (const ProfileRecord &record : records) {
      runtime |= record.type == "runtime";
      samples |= record.type == "samples" && record.fields.at("location") == "exp_work.cpp:10";
    }
    EXPECT_TRUE(runtime) << kind << ": " << readFile(profile_);
    if (causal::test::kSamplesHeldBack)
      continue;
    EXPECT_TRUE(samples) << kind << ": " << readFile(profile_);
    EXPECT_FALSE(experiments(records).empty()) << kind << ": pending experiments written";
  }
}

TEST_F(ExperimentTest, ExecWritesThePendingRecordsFirst) {
  ProcessResult r = run({"exec"}, baseEnv());
  ASSERT_TRUE(r.exited && r.status == 0) << r.err;
  std::vector<ProfileRecord> records = profile();
  ASSERT_FALSE(records.empty()) << "nothing written before exec";
  EXPECT_EQ(records.front().type, "startup");
  if (causal::test::kSamplesHeldBack)
    return;
  bool samples = false;
  for (const ProfileRecord &record : records)
    samples |= record.type == "samples";
  EXPECT_TRUE(samples);
  EXPECT_FALSE(experiments(records).empty()) << "pending experiments written before exec";
}

TEST_F(ExperimentTest, MainThreadExitDoesNotKeepTheProcessAlive) {
  // TSan's own background thread (it sleeps 100 ms at a time until the
  // process exits) never ends: a program whose main thread calls
  // pthread_exit stays alive under TSan, profiled or not.
  if (causal::test::kThreadSanitizer)
    GTEST_SKIP() << "TSan's background thread keeps a process alive after main's pthread_exit";
  ProcessResult r = run({"mainexit"}, baseEnv());
  ASSERT_TRUE(r.exited) << r.status;
  EXPECT_EQ(r.status, 0);
  std::vector<ProfileRecord> records = profile();
  ASSERT_FALSE(records.empty());
  EXPECT_EQ(records.front().type, "startup");
}

TEST_F(ExperimentTest, ForkedChildRunsItsOwnExperimentsInItsOwnBlock) {
  if (causal::test::kSamplesHeldBack)
    GTEST_SKIP() << causal::test::kSamplesHeldBackWhy;
  ProcessResult r = run({"forkexp", "250"}, baseEnv());
  ASSERT_TRUE(r.exited && r.status == 0) << r.err;
  EXPECT_EQ(outputValue(r.out, "child_status"), 0u);
  std::vector<ProfileRecord> records = profile();
  // Two blocks; each starts with startup and holds experiments, then
  // runtime and samples.
  std::vector<size_t> starts;
  for (size_t i = 0; i < records.size(); ++i)
    if (records[i].type == "startup")
      starts.push_back(i);
  ASSERT_EQ(starts.size(), 2u);
  starts.push_back(records.size());
  for (size_t b = 0; b < 2; ++b) {
    size_t exps = 0;
    bool seen_runtime = false;
    for (size_t i = starts[b] + 1; i < starts[b + 1]; ++i) {
      if (records[i].type == "runtime")
        seen_runtime = true;
      if (records[i].type == "experiment") {
        ++exps;
        EXPECT_FALSE(seen_runtime) << "experiments come before runtime in a block";
      }
    }
    EXPECT_GE(exps, 1u) << "block " << b;
    EXPECT_TRUE(seen_runtime) << "block " << b;
  }
}

TEST_F(ExperimentTest, ScopeDecidesWhichLinesExperimentsSelect) {
  if (causal::test::kSamplesHeldBack)
    GTEST_SKIP() << causal::test::kSamplesHeldBackWhy;
  // Default scope: the busy system-header line (/usr/include/...) is never
  // selected, though it gets about half of the samples.
  ProcessResult r = run({"delays", "400", "2"}, baseEnv());
  ASSERT_TRUE(r.exited && r.status == 0) << r.err;
  std::vector<Experiment> exps = experiments(profile());
  ASSERT_FALSE(exps.empty());
  for (const Experiment &e : exps)
    EXPECT_EQ(e.record.fields.at("selected"), "exp_work.cpp:10");

  // --scope naming only the system header selects it instead.
  unlink(profile_.c_str());
  std::map<std::string, std::string> env = baseEnv();
  env[CAUSAL_ENV_SCOPE] = "/usr/include/exp_*";
  r = run({"delays", "400", "2"}, env);
  ASSERT_TRUE(r.exited && r.status == 0) << r.err;
  exps = experiments(profile());
  ASSERT_FALSE(exps.empty());
  for (const Experiment &e : exps)
    EXPECT_EQ(e.record.fields.at("selected"), "/usr/include/exp_system.h:20");

  // A binary scope that matches no image: no experiment at all.
  unlink(profile_.c_str());
  env = baseEnv();
  env[CAUSAL_ENV_BINARY_SCOPE] = "*/no-such-image";
  r = run({"delays", "300", "2"}, env);
  ASSERT_TRUE(r.exited && r.status == 0) << r.err;
  EXPECT_TRUE(experiments(profile()).empty());
}

TEST_F(ExperimentTest, TimerSamplerRunsExperimentsToo) {
  if (causal::test::kSamplesHeldBack)
    GTEST_SKIP() << causal::test::kSamplesHeldBackWhy;
  std::map<std::string, std::string> env = baseEnv();
  env[CAUSAL_ENV_SAMPLER] = "timer";
  env[CAUSAL_ENV_FIXED_SPEEDUP] = "50";
  ProcessResult r = run({"delays", "400", "2"}, env);
  ASSERT_TRUE(r.exited && r.status == 0) << r.err;
  unsigned long long delay = 0;
  std::vector<Experiment> exps = experiments(profile());
  ASSERT_FALSE(exps.empty()) << r.err << readFile(profile_);
  for (const Experiment &e : exps)
    delay += number(e.record, "delay");
  EXPECT_GT(delay, 0u);
}
