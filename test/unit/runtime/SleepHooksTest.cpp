//===- test/unit/runtime/SleepHooksTest.cpp - Sleeps, timed waits, progress -===//
//
// Runs sleep_target. The sleeps and timed waits must return exactly what the
// C library returns (values, errno, remaining time, EINTR) through both entry
// points, with delays being paid and credited meanwhile; a wait ended by its
// own timer pays the delays inserted while it slept, a wait ended by another
// thread is credited with them; and a thread pays what it owes before it is
// counted at a progress point (docs/runtime.md, "Sleeps and timeouts" and
// "Settling at progress points").
//
//===----------------------------------------------------------------------===//

#include "ExperimentPolicy.h"
#include "ProfileParse.h"
#include "RunTarget.h"
#include "Sanitizers.h"

#include "causal/tunables.h"

#include <gtest/gtest.h>

#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

using causal::test::outputValue;
using causal::test::TargetResult;

class SleepHooksTest : public ::testing::Test {
protected:
  void SetUp() override {
    // Every test here checks delays that samples of the busy thread insert.
    if (causal::test::kSamplesHeldBack)
      GTEST_SKIP() << causal::test::kSamplesHeldBackWhy;
    dir_ = causal::test::makeTempDir(::testing::TempDir(), "causal-sleep-test");
    ASSERT_FALSE(dir_.empty());
  }
  void TearDown() override { causal::test::removeTree(dir_); }

  // Experiments on the busy thread's line at 100 %: delays are inserted all
  // the time. Each thread is meant to have a CPU of its own (on a loaded
  // machine the busy thread would otherwise be accounted from shared CPUs
  // and insert no delay that others pay).
  std::map<std::string, std::string> delaysEnv(const char *speedup = "100") const {
    return {{CAUSAL_ENV_OUTPUT, dir_ + "/profile.coz"},
            {CAUSAL_ENV_FIXED_LINE, "sleep_busy.cpp:5"},
            {CAUSAL_ENV_FIXED_SPEEDUP, speedup},
            {CAUSAL_ENV_EXPERIMENT_NS, "200000000"},
            {CAUSAL_ENV_COOLOFF_NS, "2000000"},
            {CAUSAL_ENV_SHARED_CPUS, "0"},
            // Set, so that no cost probe (45 ms of the profiler thread's CPU
            // time after the first experiment, twice that beside a busy CPU)
            // leaves a wait of the target without an experiment.
            {CAUSAL_ENV_SAMPLE_COST, "0"}};
  }

  TargetResult run(const std::vector<std::string> &args,
                   const std::map<std::string, std::string> &env) {
    return causal::test::runTarget(CAUSAL_SLEEP_TARGET, args, env, dir_);
  }

  std::string dir_;
};

// "NAME inserted=N paused=N owed_after=N calls=N" lines of the timer and
// woken modes.
struct WaitTotals {
  unsigned long long inserted = 0, paused = 0, owed_after = 0, calls = 0;
};
std::map<std::string, WaitTotals> waitTotals(const std::string &out) {
  std::map<std::string, WaitTotals> result;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    size_t space = line.find(' ');
    if (space == std::string::npos || line.find("inserted=") == std::string::npos)
      continue;
    result[line.substr(0, space)] = {outputValue(line, "inserted"), outputValue(line, "paused"),
                                     outputValue(line, "owed_after"), outputValue(line, "calls")};
  }
  return result;
}

// How the target ended, for a failure's message.
std::string exitDescription(const TargetResult &r) {
  return r.exited ? "exit status " + std::to_string(r.status) + "\n"
                  : "killed by signal " + std::to_string(-r.status) + "\n";
}

void expectAllChecksPass(const TargetResult &r, const char *how) {
  ASSERT_TRUE(r.exited) << how << ": killed by signal " << -r.status;
  ASSERT_EQ(r.status, 0) << how << ": " << r.out << r.err;
  EXPECT_EQ(r.out.find("FAIL"), std::string::npos) << how << ":\n" << r.out;
  EXPECT_GE(outputValue(r.out, "checks"), 45u) << how << ":\n" << r.out;
  EXPECT_NE(r.out.find("failures=0"), std::string::npos) << how << ":\n" << r.out;
}

} // namespace

TEST_F(SleepHooksTest, InterposedSleepsBehaveAsTheCLibrarySays) {
  expectAllChecksPass(run({"semantics", "0"}, delaysEnv()), "interposed, delays on");
}

TEST_F(SleepHooksTest, HookedSleepsBehaveAsTheCLibrarySays) {
  expectAllChecksPass(run({"semantics", "1"}, delaysEnv()), "hooks, delays on");
}

TEST_F(SleepHooksTest, SleepsPassThroughWhenTheRuntimeIsDisabled) {
  std::map<std::string, std::string> env = delaysEnv();
  env[CAUSAL_ENV_DISABLE] = "1";
  TargetResult r = run({"semantics", "0"}, env);
  ASSERT_TRUE(r.exited && r.status == 0) << exitDescription(r) << r.out << r.err;
  EXPECT_EQ(r.out.find("FAIL"), std::string::npos) << r.out;
}

TEST_F(SleepHooksTest, AWaitEndedByItsTimerPaysTheDelaysInsertedWhileItSlept) {
  // In the sped-up program everything else runs faster, so relative to it
  // the timer fires later: the thread pays what was inserted before it
  // returns. At 25 % the delays inserted while it pays are a quarter of the
  // payment, so it returns owing about a fifth of all that the call saw
  // inserted; without the rule it would owe all of it (a sleeping thread
  // has no samples after which to pay).
  TargetResult r = run({"timer"}, delaysEnv("25"));
  ASSERT_TRUE(r.exited && r.status == 0) << exitDescription(r) << r.out << r.err;
  std::map<std::string, WaitTotals> totals = waitTotals(r.out);
  for (const char *name :
       {"nanosleep", "clock_nanosleep", "usleep", "select", "pselect", "poll", "ppoll",
        "epoll_wait", "epoll_pwait", "futex", "sem_timedwait", "pthread_cond_timedwait"}) {
    ASSERT_TRUE(totals.count(name)) << name << "\n" << r.out;
    const WaitTotals &t = totals.at(name);
    EXPECT_GT(t.inserted, 0u) << name << ": the busy thread inserted delays\n" << r.out;
    EXPECT_LE(double(t.owed_after), 0.6 * double(t.inserted)) << name << "\n" << r.out;
  }
}

TEST_F(SleepHooksTest, AWaitEndedByAnotherThreadIsCredited) {
  TargetResult r = run({"woken"}, delaysEnv());
  ASSERT_TRUE(r.exited && r.status == 0) << exitDescription(r) << r.out << r.err;
  std::map<std::string, WaitTotals> totals = waitTotals(r.out);
  for (const char *name : {"poll", "select", "epoll_wait", "futex", "sem_timedwait", "nanosleep"}) {
    ASSERT_TRUE(totals.count(name)) << name << "\n" << r.out;
    const WaitTotals &t = totals.at(name);
    EXPECT_GT(t.inserted, 0u) << name << "\n" << r.out;
    // Credited: it neither pauses for the delays inserted while it waited
    // (as a timer wake-up would) nor returns owing them (as without the
    // hook): either would be about all of them. Half, not less: on a
    // machine with more runnable threads than CPUs the thread is held up
    // for milliseconds between the wait and the target's marks around it,
    // while the busy thread inserts delays at 100 % (a quarter failed one
    // run in 60 with three CPU hogs on two CPUs).
    EXPECT_LE(double(t.paused), 0.5 * double(t.inserted)) << name << "\n" << r.out;
    EXPECT_LE(double(t.owed_after), 0.5 * double(t.inserted)) << name << "\n" << r.out;
  }
}

TEST_F(SleepHooksTest, AThreadPaysWhatItOwesBeforeItIsCountedAtAProgressPoint) {
  TargetResult r = run({"progress", "600"}, delaysEnv());
  ASSERT_TRUE(r.exited && r.status == 0) << exitDescription(r) << r.out << r.err;
  EXPECT_GT(outputValue(r.out, "owing"), 10u) << "the check ran while delays were owed\n" << r.out;
  EXPECT_EQ(outputValue(r.out, "unpaid"), 0u) << r.out;
}

TEST_F(SleepHooksTest, LatencyWindowsAreTimedByTheirVisitsWhenVisitsRaceTheirEdges) {
  // A visit every 30 us, so that visits land between a window's flag and
  // the reading of its counters. The window's area must still come from the
  // visits' virtual times. The runtime before read the counters a few
  // hundred microseconds after the flag fell, and any visit in between sent
  // the window to the in-flight count sampled every poll (1 ms apart, real
  // time): in this mode 47 of 62 windows came out more than 0.05 requests
  // off the thread's own in-flight share, and on bench/accuracy's open loop
  // at 100 % one window in five counted its latency about 2.3 times. A
  // window may still fall back when the profiler thread is held up between
  // the flag and the counters (more visits race than can be told apart): a
  // tenth of them is allowed.
  std::map<std::string, std::string> env = delaysEnv("0");
  env[CAUSAL_ENV_EXPERIMENT_NS] = "20000000";
  env["CAUSAL_VERBOSE"] = "1";
  TargetResult r = run({"latency-edges", "1500"}, env);
  ASSERT_TRUE(r.exited && r.status == 0) << exitDescription(r) << r.out << r.err;
  size_t at = r.err.find("latency windows: ");
  ASSERT_NE(at, std::string::npos) << r.err;
  unsigned long long windows = 0, timed = 0, sampled = 0;
  ASSERT_EQ(sscanf(r.err.c_str() + at,
                   "latency windows: %llu, %llu of them timed by their visits, %llu from", &windows,
                   &timed, &sampled),
            3)
      << r.err;
  EXPECT_GE(windows, 10u) << r.err;
  EXPECT_EQ(timed + sampled, windows);
  EXPECT_LE(sampled * 10, windows) << r.err;
}

TEST_F(SleepHooksTest, AVisitMadeOwingIsTimedByTheThreadsOwnClock) {
  // Each request is 100 us of the thread's own spinning: its latency in
  // virtual time, whatever the busy thread's line inserts. The thread comes
  // to each visit from a pause (on waking from 4 ms of sleep, then at the
  // visit itself) during which more was inserted, and pays that after the
  // visit: the begin's debt inside the request, the end's after it. Timed
  // by the global count, the request read 290-370 us at 75 % (180-260 us
  // beside two CPU hogs); by the thread's own count, 105-110 us (115-125).
  // Up to 160 us passes: the thread is preempted at times, and a delay is
  // inserted 0.75 ms at a time.
  std::map<std::string, std::string> env = delaysEnv("75");
  env[CAUSAL_ENV_EXPERIMENT_NS] = "50000000";
  TargetResult r = run({"late-debt", "1500"}, env);
  ASSERT_TRUE(r.exited && r.status == 0) << exitDescription(r) << r.out << r.err;
  EXPECT_GT(outputValue(r.out, "owing"), 5u) << "visits made owing\n" << r.out;
  std::string text = causal::test::readFile(dir_ + "/profile.coz");
  std::vector<std::string> malformed;
  double area_ns = 0, arrivals = 0, duration_ns = 0;
  bool in_experiment = false;
  for (const causal::test::ProfileRecord &record : causal::test::parseProfile(text, &malformed)) {
    if (record.type == "experiment") {
      in_experiment = std::stod(record.fields.at("speedup")) > 0;
      duration_ns = std::stod(record.fields.at("duration"));
    } else if (record.type == "latency-point" && in_experiment &&
               record.fields.at("name") == "req" && record.fields.count("in-flight")) {
      area_ns += std::stod(record.fields.at("in-flight")) * duration_ns;
      arrivals += std::stod(record.fields.at("arrivals"));
    }
  }
  ASSERT_GT(arrivals, 100) << text;
  double latency_us = area_ns / arrivals / 1000;
  EXPECT_GT(latency_us, 70) << r.out;
  EXPECT_LT(latency_us, 160) << r.out;
}

TEST_F(SleepHooksTest, APauseCountsAllOfItsTime) {
  // What a pause counts as paused is its overshoot carried to the next one;
  // time it takes beyond that is delay that no count knows of. The resume
  // of the sampler at the end of a spin took 5-12 us on the 2-vCPU VMs
  // (an ioctl of the perf event) and was left out of every pause. A cost
  // left out of every pause shows in the low tail; the median does not tell
  // it from the host: on these VMs the same code ran at 0.3-0.5 us a call in
  // some runs and at 2-3.5 us in others, whole runs at a time, the plain call
  // 3x slower with it (medians of 60, 4 runs in 10 on an idle host). The
  // 10th percentile was 0.25-0.47 us in the fast runs and 0.7-1.3 us in the
  // slow ones; with the resume left out (the clock read before it), 4.7-8.1
  // us in 13 runs of 14 and 1.2 us in one. 3 us of slack over the plain
  // call's.
  TargetResult r = run({"pause-span"}, delaysEnv("10"));
  ASSERT_TRUE(r.exited && r.status == 0) << exitDescription(r) << r.out << r.err;
  EXPECT_GE(outputValue(r.out, "pauses"), 20u) << r.out;
  ASSERT_NE(r.out.find("uncounted_p10_ns="), std::string::npos) << r.out;
  ASSERT_NE(r.out.find("plain_p10_ns="), std::string::npos) << r.out;
  EXPECT_LE(outputValue(r.out, "uncounted_p10_ns"), outputValue(r.out, "plain_p10_ns") + 3000u)
      << r.out;
}

// Processes that spin until the object goes away, one on each CPU the test
// may use: other processes' load. Pinned: left to the scheduler, two of them
// at times shared one CPU and left the other to the program's busy thread,
// which then waited for no one (running=1.00, waiting=0.03-0.06 in some
// experiments of 4 runs in 10).
class CpuHogs {
public:
  explicit CpuHogs(const cpu_set_t &allowed) {
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (!CPU_ISSET(cpu, &allowed))
        continue;
      pid_t pid = fork();
      if (pid == 0) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        sched_setaffinity(0, sizeof one, &one);
        for (volatile unsigned long x = 0;; x = x + 1)
          ;
      }
      if (pid > 0)
        pids_.push_back(pid);
    }
  }
  ~CpuHogs() {
    for (pid_t pid : pids_)
      kill(pid, SIGKILL);
    for (pid_t pid : pids_)
      waitpid(pid, nullptr, 0);
  }

private:
  std::vector<pid_t> pids_;
};

// Experiments of the profile at |path| whose threads waited for CPUs that
// other processes held (the runtime's rule, processWaitsForOthers).
int experimentsThatWaitedForOthers(const std::string &path) {
  int count = 0;
  for (const causal::test::ProfileRecord &record :
       causal::test::parseProfile(causal::test::readFile(path), nullptr))
    if (record.type == "experiment" &&
        causal::rt::processWaitsForOthers(std::stod(record.fields.at("cpus")),
                                          std::stod(record.fields.at("running")),
                                          std::stod(record.fields.at("waiting"))))
      ++count;
  return count;
}

// The runtime's counts of its pauses (CAUSAL_VERBOSE's "pauses:" line):
// all, those that spun while competing for a CPU, those that spun on a CPU
// that would idle, and those that slept because the last experiment's
// threads, or the start-up probe's, waited for CPUs other processes held.
struct PauseCounts {
  bool found = false;
  unsigned long long all = 0, competing = 0, on_idle_cpu = 0, beside_other_processes = 0;
};

PauseCounts pauseCounts(const std::string &err) {
  PauseCounts counts;
  size_t at = err.find("pauses: ");
  counts.found =
      at != std::string::npos &&
      sscanf(err.c_str() + at,
             "pauses: %llu, %llu of them spinning while competing for a CPU, %llu spinning on a "
             "CPU that would idle, %llu sleeping",
             &counts.all, &counts.competing, &counts.on_idle_cpu,
             &counts.beside_other_processes) == 4;
  return counts;
}

TEST_F(SleepHooksTest, APauseSpinsWhileNoOtherThreadCouldUseTheCpu) {
  // A pause that sleeps leaves its CPU idle when no other thread of the
  // program could run there, and waking an idle vCPU makes the thread's next
  // timer late, which the sped-up program would not be (docs/runtime.md,
  // "pauses on CPUs that would idle"). Two CPUs: the busy thread on one, the
  // payer on the other, main in a join: a pause that may spin at all spins
  // through, never blocking (40 of 40 here; before, every one slept and spun
  // its last 0.3 ms). With one more thread spinning beside them the CPU is
  // wanted, and none spins through. Beside other processes' load the pauses
  // sleep (the rule of the last experiment's spare CPU, and the next test's):
  // a run where the runtime counted any such pause, or where fewer than 10
  // could spin, has nothing to check.
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0 || CPU_COUNT(&allowed) < 2)
    GTEST_SKIP() << "needs two CPUs";
  std::map<std::string, std::string> env = delaysEnv("75");
  env["CAUSAL_VERBOSE"] = "1";
  TargetResult idle = run({"idle-pause", "idle"}, env);
  ASSERT_TRUE(idle.exited && idle.status == 0) << exitDescription(idle) << idle.out << idle.err;
  uint64_t through = outputValue(idle.out, "through"), tail = outputValue(idle.out, "tail");
  // Pauses that sleep all through found no spare CPU (the last experiment's
  // spare-CPU rule): other processes loaded the host (ctest -j2 ran another
  // test beside this one: through=28 tail=12 slept=81). On a quiet host
  // none does (slept=0 in 4 runs of 4).
  if (through + tail < 10 || outputValue(idle.out, "slept") > through + tail)
    GTEST_SKIP() << "the pauses slept: other processes kept the CPUs busy\n" << idle.out;
  PauseCounts counts = pauseCounts(idle.err);
  ASSERT_TRUE(counts.found) << idle.err;
  // The runtime counted every pause the payer made (one call or more each),
  // and those that spun through as spinning (main and the busy thread make
  // none: main is in a join, the busy thread runs the selected line).
  EXPECT_GE(counts.all, uint64_t(through + tail + outputValue(idle.out, "slept"))) << idle.err;
  EXPECT_GE(counts.on_idle_cpu + counts.competing, through) << idle.err;
  if (counts.beside_other_processes > 0)
    GTEST_SKIP() << counts.beside_other_processes
                 << " pauses slept where other processes wanted the CPUs\n"
                 << idle.out;
  EXPECT_GE(through, 3 * tail) << idle.out;
  TargetResult wanted = run({"idle-pause", "wanted"}, delaysEnv("75"));
  ASSERT_TRUE(wanted.exited && wanted.status == 0)
      << exitDescription(wanted) << wanted.out << wanted.err;
  EXPECT_LE(outputValue(wanted.out, "through"), 2u) << wanted.out;
}

TEST_F(SleepHooksTest, APauseDoesNotSpinThroughWhereOtherProcessesWouldUseTheCpu) {
  // The same program beside as many spinning processes as it has CPUs: a
  // CPU its pause leaves would run one of them, so no pause spins through
  // (the runtime knows from the last experiment, whose threads waited for
  // CPUs the other processes held). Before, the rule looked at the
  // program's threads only and 40 of 40 pauses spun through here, taking
  // the CPU from the other processes, which the sped-up program would not
  // have done (bench/oversub's pool beside busy processes read 10-20 points
  // high). Experiments of 30 ms: the payer starts 100 ms in, so its pauses
  // go by what an experiment measured, not by the start-up probe's 20 ms,
  // which may pass before the program's threads run (then it sees no wait,
  // and under ASan 40 of 40 pauses of a 200 ms first experiment spun through
  // in 1 run of 8).
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0 || CPU_COUNT(&allowed) < 2)
    GTEST_SKIP() << "needs two CPUs";
  std::map<std::string, std::string> env = delaysEnv("75");
  env[CAUSAL_ENV_EXPERIMENT_NS] = "30000000";
  TargetResult loaded;
  {
    CpuHogs hogs(allowed);
    loaded = run({"idle-pause", "idle"}, env);
  }
  ASSERT_TRUE(loaded.exited && loaded.status == 0)
      << exitDescription(loaded) << loaded.out << loaded.err;
  int experiments = 0;
  for (const causal::test::ProfileRecord &record :
       causal::test::parseProfile(causal::test::readFile(dir_ + "/profile.coz"), nullptr))
    experiments += record.type == "experiment";
  int waited = experimentsThatWaitedForOthers(dir_ + "/profile.coz");
  // Every experiment after the first (whose pauses go by the start-up probe)
  // saw the other processes.
  EXPECT_GE(waited + 1, experiments) << loaded.out;
  EXPECT_LE(outputValue(loaded.out, "through"), 2u) << loaded.out;
}

TEST_F(SleepHooksTest, ASignalDuringThePaymentBeforeASleepInterruptsTheSleep) {
  // Without the profiler the thread would have been in the sleep when the
  // signal came: the sleep must return EINTR, not wait its full 2 s for a
  // signal that has come and gone.
  TargetResult r = run({"signal-in-payment"}, delaysEnv());
  ASSERT_TRUE(r.exited && r.status == 0) << exitDescription(r) << r.out << r.err;
  std::istringstream lines(r.out);
  std::string line;
  int calls = 0, in_payment = 0;
  while (std::getline(lines, line)) {
    ++calls;
    EXPECT_NE(line.find("result=-1 eintr=1"), std::string::npos) << line;
    EXPECT_LT(outputValue(line, "took"), 1500000000ull) << line;
    // The signal came while the thread paid: the sleep itself had not begun.
    if (line.find("in_payment=1") != std::string::npos) {
      ++in_payment;
      EXPECT_EQ(line.find("rem_full=0"), std::string::npos) << "all of it is left: " << line;
      EXPECT_EQ(line.find("sets_kept=0"), std::string::npos) << "EINTR keeps the sets: " << line;
    }
  }
  EXPECT_EQ(calls, 3) << r.out;
  // The helper signals within 100 µs of seeing the thread pay, in a
  // payment of tens of ms: it would have to be held back that long on all
  // three calls to miss every payment.
  EXPECT_GE(in_payment, 1) << r.out;
}
