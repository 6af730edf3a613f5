//===- test/unit/runtime/SamplingTest.cpp - The runtime in real processes -===//
//
// Runs sample_target (linked with libcausal_rt.so the way causal-ld links
// programs) with a controlled environment and checks the profile it appends.
//
// Expected sample counts: both samplers fire once per CAUSAL sample period
// of the thread's CPU time, so a thread that used C ns of CPU yields about
// C / period samples. The target prints C (CLOCK_THREAD_CPUTIME_ID). We
// accept [50 %, 130 % + 2 batches] of that: CPU time (not wall time) makes
// the count independent of machine load; the slack covers samples taken
// before the line table was registered and in the runtime itself (dropped
// as overhead), CPU time spent outside the described function (start-up,
// printf), timer expirations merged under load, and the last partial
// batch. A broken attribution (e.g. callers skipped, samples lost, counts
// doubled) falls far outside this range.
//
//===----------------------------------------------------------------------===//

#include "ProfileParse.h"
#include "RunTarget.h"
#include "Sanitizers.h"

#include "causal/tunables.h"

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>
#include <string>
#include <vector>

using causal::test::parseProfile;
using causal::test::ProfileRecord;
using causal::test::readFile;
using causal::test::samplesAt;

namespace {

constexpr double kPeriodNs = double(CAUSAL_DEFAULT_SAMPLE_PERIOD_NS);
constexpr double kBatch = double(CAUSAL_DEFAULT_SAMPLE_BATCH);
const char kSpinLine[] = "causal_test_spin.cpp:10";
const char kLeafLine[] = "causal_test_leaf.cpp:20";

using causal::test::outputValue;
using RunResult = causal::test::TargetResult;

class TempDir {
public:
  TempDir() : path_(causal::test::makeTempDir(::testing::TempDir(), "causal-rt-test")) {}
  ~TempDir() { causal::test::removeTree(path_); }
  std::string file(const std::string &name) const { return path_ + "/" + name; }
  bool ok() const { return !path_.empty(); }

private:
  std::string path_;
};

// LD_PRELOAD for the malloc guard. A sanitizer's shared runtime must come
// first among the libraries (ASan refuses to start otherwise): it goes
// first, then the guard. A runtime linked into the executable needs nothing.
std::string mallocGuardPreload() {
  if (!causal::test::kSanitized)
    return CAUSAL_MALLOC_GUARD;
  Dl_info sanitizer, self;
  if (dladdr(dlsym(RTLD_DEFAULT, "__sanitizer_print_stack_trace"), &sanitizer) &&
      dladdr(reinterpret_cast<void *>(&mallocGuardPreload), &self) &&
      sanitizer.dli_fbase != self.dli_fbase)
    return std::string(sanitizer.dli_fname) + ":" + CAUSAL_MALLOC_GUARD;
  return CAUSAL_MALLOC_GUARD;
}

// Makes the listed system calls fail with EACCES in this process and its
// exec'd image (what a container's seccomp profile does to perf_event_open).
bool denySystemCalls(const std::vector<int> &calls) {
  std::vector<sock_filter> filter;
  filter.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)));
  for (int call : calls) {
    filter.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, unsigned(call), 0, 1));
    filter.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES));
  }
  filter.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  sock_fprog program = {static_cast<unsigned short>(filter.size()), filter.data()};
  return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
         prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) == 0;
}

// Runs the sample target in |dir| (RunTarget.h), with the listed system
// calls denied. SIGINT and SIGQUIT start at their defaults, as in a program
// run from a terminal: a shell without job control starts a background job
// with both ignored (POSIX), the ignoring survives fork and exec, and then
// a target that raises SIGINT (SignalsThatEndTheProgram...) rightly goes on
// and exits 0, as its native build would.
RunResult runTarget(const TempDir &dir, const std::vector<std::string> &args,
                    const std::map<std::string, std::string> &env,
                    const std::vector<int> &denied_calls = {}) {
  return causal::test::runTarget(CAUSAL_SAMPLE_TARGET, args, env, dir.file(""), [&] {
    signal(SIGINT, SIG_DFL);
    signal(SIGQUIT, SIG_DFL);
    return denied_calls.empty() || denySystemCalls(denied_calls);
  });
}

bool perfUnavailable(const RunResult &r) {
  return r.err.find("perf_event sampling is not used") != std::string::npos;
}

std::vector<ProfileRecord> readProfile(const std::string &path) {
  std::vector<std::string> malformed;
  std::vector<ProfileRecord> records = parseProfile(readFile(path), &malformed);
  EXPECT_TRUE(malformed.empty()) << "malformed line: " << malformed.front();
  return records;
}

void expectPlausibleCount(unsigned long long count, unsigned long long cpu_ns,
                          const std::string &what) {
  double expected = double(cpu_ns) / kPeriodNs;
  // The thread's CPU time includes handling its own samples (about 50 us a
  // sample on these VMs: bench/sample-cost), which no line gets. Under ASan
  // that handling (libunwind and the runtime, instrumented) and ASan's own
  // interceptors take more of it: 172 samples for an expected 363 (0.47) in
  // one CI run of the leaf case, hence its lower floor.
  double floor = causal::test::kAddressSanitizer ? 0.35 : 0.5;
  EXPECT_GE(double(count), floor * expected) << what << ": expected about " << expected;
  EXPECT_LE(double(count), 1.3 * expected + 2 * kBatch) << what << ": expected about " << expected;
}

// The count before |what| in the verbose summary at exit ("samples: N charged
// to lines, M outside instrumented code, K profiler overhead (dropped); ..."),
// or -1 if the summary is not there.
double verboseSampleCount(const std::string &err, const char *what) {
  size_t at = err.find(std::string(" ") + what);
  size_t begin = at == std::string::npos ? at : err.rfind(", ", at);
  return begin == std::string::npos ? -1 : strtod(err.c_str() + begin + 2, nullptr);
}

class SamplerTest : public ::testing::TestWithParam<const char *> {
protected:
  // Every test here counts samples or reads where they landed.
  void SetUp() override {
    if (causal::test::kSamplesHeldBack)
      GTEST_SKIP() << causal::test::kSamplesHeldBackWhy;
  }
  std::map<std::string, std::string> baseEnv() const {
    return {{CAUSAL_ENV_SAMPLER, GetParam()}, {CAUSAL_ENV_OUTPUT, dir.file("profile.coz")}};
  }
  // Skips perf-mode tests where the kernel denies perf_event (containers).
  bool skipIfNoPerf(const RunResult &r) {
    return std::string(GetParam()) == "perf" && perfUnavailable(r);
  }
  // Runs the target (with CAUSAL_VERBOSE) in a mode that spins outside
  // instrumented code: it must end normally, with at least half the samples
  // its CPU time is worth charged outside (so samples were taken and walked).
  void expectRunChargedOutside(const std::vector<std::string> &args,
                               std::map<std::string, std::string> env) {
    env[CAUSAL_ENV_VERBOSE] = "1";
    RunResult r = runTarget(dir, args, env);
    if (skipIfNoPerf(r))
      GTEST_SKIP() << "perf_event unavailable here";
    ASSERT_EQ(r.status, 0) << r.err;
    double expected = double(outputValue(r.out, "cpu_ns")) / kPeriodNs;
    EXPECT_GT(verboseSampleCount(r.err, "outside instrumented code"), 0.5 * expected) << r.err;
  }
  TempDir dir;
};

TEST_P(SamplerTest, SpinningMainThreadIsChargedToItsLine) {
  ASSERT_TRUE(dir.ok());
  RunResult r = runTarget(dir, {"spin", "300"}, baseEnv());
  if (skipIfNoPerf(r))
    GTEST_SKIP() << "perf_event unavailable here: " << r.err;
  ASSERT_TRUE(r.exited) << r.err;
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "") << "nothing on stderr unless asked";
  std::vector<ProfileRecord> records = readProfile(dir.file("profile.coz"));
  ASSERT_GE(records.size(), 3u);
  EXPECT_EQ(records[0].type, "startup");
  EXPECT_EQ(records[1].type, "runtime");
  expectPlausibleCount(samplesAt(records, kSpinLine), outputValue(r.out, "cpu_ns"), kSpinLine);
  EXPECT_EQ(samplesAt(records, kLeafLine), 0u) << "leaf code never ran";
}

TEST_P(SamplerTest, ThreadCreatedAfterStartIsSampled) {
  ASSERT_TRUE(dir.ok());
  RunResult r = runTarget(dir, {"thread", "300"}, baseEnv());
  if (skipIfNoPerf(r))
    GTEST_SKIP() << "perf_event unavailable here";
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<ProfileRecord> records = readProfile(dir.file("profile.coz"));
  expectPlausibleCount(samplesAt(records, kSpinLine), outputValue(r.out, "cpu_ns"),
                       "spinning thread");
}

TEST_P(SamplerTest, SamplesInUninstrumentedLeafAreChargedToInstrumentedCaller) {
  ASSERT_TRUE(dir.ok());
  RunResult r = runTarget(dir, {"leaf", "300"}, baseEnv());
  if (skipIfNoPerf(r))
    GTEST_SKIP() << "perf_event unavailable here";
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<ProfileRecord> records = readProfile(dir.file("profile.coz"));
  // Nearly all of this CPU time is inside memchr, which has no frame
  // pointer: only unwinding with CFI finds callLeafFor (line 20).
  expectPlausibleCount(samplesAt(records, kLeafLine), outputValue(r.out, "cpu_ns"), kLeafLine);
}

// CAUSAL_STACK_COPY_BYTES=0: no libunwind, the frame-pointer chain only.
// memchr keeps the caller's frame pointer, so the chain's first return
// address is callLeafFor's own return into main (not instrumented here):
// the frameless leaf hides its caller, and the samples are charged outside
// instrumented code, not lost.
TEST_P(SamplerTest, WithoutUnwindingAFramelessLeafHidesItsCaller) {
  if (causal::test::kSanitized)
    GTEST_SKIP() << "a sanitizer's memchr interceptor has a frame pointer: the chain finds the "
                    "caller through it";
  ASSERT_TRUE(dir.ok());
  std::map<std::string, std::string> env = baseEnv();
  env[CAUSAL_ENV_STACK_COPY] = "0";
  env[CAUSAL_ENV_VERBOSE] = "1";
  RunResult r = runTarget(dir, {"leaf", "300"}, env);
  if (skipIfNoPerf(r))
    GTEST_SKIP() << "perf_event unavailable here";
  ASSERT_EQ(r.status, 0) << r.err;
  double expected = double(outputValue(r.out, "cpu_ns")) / kPeriodNs;
  std::vector<ProfileRecord> records = readProfile(dir.file("profile.coz"));
  EXPECT_LT(double(samplesAt(records, kLeafLine)), 0.3 * expected) << r.err;
  EXPECT_GT(verboseSampleCount(r.err, "outside instrumented code"), 0.5 * expected) << r.err;
}

// Frame-pointer walk (CAUSAL_STACK_COPY_BYTES=0) from an RBP that points off
// the thread's stack, at a page that is readable for the first half of the
// run and unmapped for the second. Pages found readable once must not be
// trusted in a later sample (dlclose and munmap come between samples): a
// per-thread cache of readable pages made the second half's samples read
// the unmapped page and crash the program.
TEST_P(SamplerTest, AFramePointerIntoAPageUnmappedSinceTheLastSampleIsNotRead) {
  ASSERT_TRUE(dir.ok());
  std::map<std::string, std::string> env = baseEnv();
  env[CAUSAL_ENV_STACK_COPY] = "0";
  expectRunChargedOutside({"stale-frame-page", "150"}, env);
}

// A sample inside dlclose, after the image's munmap and before
// _dl_find_object forgets it, is handed that image's unwind table: the
// target recreates that state (the table's page unreadable, r_debug saying
// RT_DELETE) and spins in the image's uninstrumented code, whose samples
// libunwind unwinds. The lookup must notice the table is gone, not read it.
TEST_P(SamplerTest, UnwindingDuringDlcloseSkipsAnImageAlreadyUnmapped) {
  ASSERT_TRUE(dir.ok());
  expectRunChargedOutside({"unloading", "150", CAUSAL_SAMPLE_PLUGIN}, baseEnv());
}

TEST_P(SamplerTest, SamplesInTheRuntimeAreDroppedAsOverhead) {
  ASSERT_TRUE(dir.ok());
  std::map<std::string, std::string> env = baseEnv();
  env[CAUSAL_ENV_VERBOSE] = "1";
  RunResult r = runTarget(dir, {"overhead", "300"}, env);
  if (skipIfNoPerf(r))
    GTEST_SKIP() << "perf_event unavailable here";
  ASSERT_EQ(r.status, 0) << r.err;
  double expected = double(outputValue(r.out, "cpu_ns")) / kPeriodNs;
  // Line 20 only loops around the calls into the runtime: most samples are
  // inside it (and in libc called from it) and must not be charged here.
  std::vector<ProfileRecord> records = readProfile(dir.file("profile.coz"));
  EXPECT_LT(double(samplesAt(records, kLeafLine)), 0.3 * expected);
  EXPECT_GT(verboseSampleCount(r.err, "profiler overhead (dropped)"), 0.5 * expected) << r.err;
}

TEST_P(SamplerTest, ResumingTheSamplerKeepsItsLimitOfQueuedSignals) {
  // Each queued signal is charged to the user's RLIMIT_SIGPENDING; past it
  // the kernel sends SIGIO instead, which ends the program. Resumed with
  // PERF_EVENT_IOC_ENABLE after it had stopped at its limit, the event
  // signalled every period: about 100 more here, and in a thread exiting
  // with the signal blocked, the whole limit (a test program killed by
  // SIGIO once in about 200 runs).
  ASSERT_TRUE(dir.ok());
  RunResult r = runTarget(dir, {"limit", "100"}, baseEnv());
  if (skipIfNoPerf(r))
    GTEST_SKIP() << "perf_event unavailable here";
  ASSERT_TRUE(r.exited && r.status == 0) << r.out << r.err;
  unsigned long long queued = outputValue(r.out, "queued");
  EXPECT_GE(queued, 1u) << "the sampler ran while the signal was blocked\n" << r.out;
  EXPECT_LE(queued, CAUSAL_PERF_SIGNALS_QUEUED) << r.out;
}

TEST_P(SamplerTest, ForkChildWritesItsOwnRecords) {
  ASSERT_TRUE(dir.ok());
  RunResult r = runTarget(dir, {"fork", "100"}, baseEnv());
  if (skipIfNoPerf(r))
    GTEST_SKIP() << "perf_event unavailable here";
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<ProfileRecord> records = readProfile(dir.file("profile.coz"));
  std::vector<size_t> starts;
  for (size_t i = 0; i < records.size(); ++i)
    if (records[i].type == "startup")
      starts.push_back(i);
  ASSERT_EQ(starts.size(), 2u) << "one block per process";
  // The parent waits for the child: the child's block comes first. The
  // child spun 100 ms itself and must not repeat the parent's 200 ms.
  unsigned long long child = samplesAt(records, kSpinLine, starts[0], starts[1]);
  unsigned long long parent = samplesAt(records, kSpinLine, starts[1]);
  expectPlausibleCount(child, outputValue(r.out, "child_cpu_ns"), "child");
  // The parent's count includes the other thread's spinning (same line).
  EXPECT_GE(double(parent), 0.5 * double(outputValue(r.out, "parent_cpu_ns")) / kPeriodNs);
  // The child closed the counters it inherited (its thread's and the other
  // thread's) and opened its own (perf mode only).
  EXPECT_EQ(outputValue(r.out, "child_perf_fds"), std::string(GetParam()) == "perf" ? 1u : 0u)
      << r.out;
}

TEST_P(SamplerTest, ExitWithoutAtexitHandlersStillWritesTheProfile) {
  // _exit and _Exit with a thread still running, and _exit from the
  // program's own atexit handler: the status is the program's and the
  // profile is written, as with exit.
  for (const char *code : {"3", "5"}) {
    ASSERT_TRUE(dir.ok());
    unlink(dir.file("profile.coz").c_str());
    RunResult r = runTarget(dir, {"exitnow", code}, baseEnv());
    if (skipIfNoPerf(r))
      GTEST_SKIP() << "perf_event unavailable here";
    ASSERT_TRUE(r.exited) << "killed by signal " << -r.status << "; stderr: " << r.err;
    EXPECT_EQ(r.status, atoi(code)) << r.err;
    EXPECT_EQ(r.out,
              std::string("ending with ") + (atoi(code) % 2 ? "_Exit(" : "_exit(") + code + ")\n");
    std::vector<ProfileRecord> records = readProfile(dir.file("profile.coz"));
    EXPECT_GT(samplesAt(records, kSpinLine), 5u) << "20 ms of spinning, sampled every ms";
  }
  unlink(dir.file("profile.coz").c_str());
  RunResult r = runTarget(dir, {"atexitexit", "9"}, baseEnv());
  if (skipIfNoPerf(r))
    GTEST_SKIP() << "perf_event unavailable here";
  ASSERT_TRUE(r.exited) << r.err;
  EXPECT_EQ(r.status, 9) << r.err;
  EXPECT_GT(samplesAt(readProfile(dir.file("profile.coz")), kSpinLine), 5u);
}

TEST_P(SamplerTest, SignalsThatEndTheProgramStillWriteTheProfile) {
  // Signals whose default action ends the process (a server stopped with
  // SIGTERM, Ctrl-C, a closed pipe, a timer), and quick_exit: the program
  // ends exactly as it would (killed by the same signal, same status), and
  // the profile is written first.
  struct Case {
    std::vector<std::string> args;
    int status; // negative: killed by that signal
  };
  for (const Case &c : {Case{{"signal", std::to_string(SIGTERM)}, -SIGTERM},
                        Case{{"signal", std::to_string(SIGINT)}, -SIGINT},
                        Case{{"signal", std::to_string(SIGPIPE)}, -SIGPIPE},
                        Case{{"signal", std::to_string(SIGUSR1)}, -SIGUSR1},
                        Case{{"alarm"}, -SIGALRM}, Case{{"quickexit", "4"}, 4}}) {
    ASSERT_TRUE(dir.ok());
    unlink(dir.file("profile.coz").c_str());
    RunResult r = runTarget(dir, c.args, baseEnv());
    if (skipIfNoPerf(r))
      GTEST_SKIP() << "perf_event unavailable here";
    EXPECT_EQ(r.status, c.status) << c.args[0] << " " << (c.args.size() > 1 ? c.args[1] : "")
                                  << ": " << r.err;
    EXPECT_EQ(r.exited, c.status >= 0);
    EXPECT_GT(samplesAt(readProfile(dir.file("profile.coz")), kSpinLine), 5u)
        << c.args[0] << " " << (c.args.size() > 1 ? c.args[1] : "") << ": 20 ms of spinning";
  }
}

TEST_P(SamplerTest, ThreadChurnCancellationForkAndExitWithRunningThreadsAreSafe) {
  ASSERT_TRUE(dir.ok());
  RunResult r = runTarget(dir, {"churn", "200"}, baseEnv());
  if (skipIfNoPerf(r))
    GTEST_SKIP() << "perf_event unavailable here";
  ASSERT_TRUE(r.exited) << "killed by signal " << -r.status << "; stderr: " << r.err;
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "churn done\n");
  // The CPU-time timer is checked at the scheduler's tick (1-10 ms), so
  // threads of 0.2 ms lose most of their timer samples; the runtime says so
  // (samples expected against arrived). perf loses none of them.
  std::string err = r.err;
  if (std::string(GetParam()) == "timer" && err.rfind("causal: this profile is thin: ", 0) == 0)
    err = err.substr(err.find('\n') + 1);
  EXPECT_EQ(err, "");
  std::vector<ProfileRecord> records = readProfile(dir.file("profile.coz"));
  size_t startups = 0;
  for (const ProfileRecord &record : records)
    startups += record.type == "startup";
  EXPECT_EQ(startups, 5u) << "the parent and its four forked children, which end with _exit: "
                             "written as exit writes them";
  // 200 threads x 0.2 ms + 20 ms in main + the spinner: well over 40 ms.
  // The timer loses the short threads' samples (above), and on a loaded
  // host most of the spinner's: 12-19 in 5 runs of 15 beside a build, where
  // main's 20 ms alone make about 20.
  EXPECT_GT(samplesAt(records, kSpinLine), std::string(GetParam()) == "timer" ? 10u : 20u);
}

TEST_P(SamplerTest, SignalHandlerNeverAllocates) {
  ASSERT_TRUE(dir.ok());
  std::map<std::string, std::string> env = baseEnv();
  env["LD_PRELOAD"] = mallocGuardPreload();
  env[CAUSAL_ENV_SAMPLE_LOG] = dir.file("samples.log");
  // Samples in instrumented code, in a frameless libc leaf (unwinding), in
  // the runtime itself, and in short-lived threads, forks and cancellations.
  for (std::vector<std::string> args :
       {std::vector<std::string>{"leaf", "150"}, {"overhead", "150"}, {"churn", "60"}}) {
    RunResult r = runTarget(dir, args, env);
    if (skipIfNoPerf(r))
      GTEST_SKIP() << "perf_event unavailable here";
    ASSERT_EQ(r.status, 0) << args[0] << ": " << r.err;
    EXPECT_EQ(r.err.find("ALLOCATION IN SIGNAL CONTEXT"), std::string::npos)
        << args[0] << ": " << r.err;
  }
  // The guard is loaded and does see an allocation made with the sample
  // signal blocked.
  RunResult check = runTarget(dir, {"guardcheck"}, env);
  EXPECT_NE(check.err.find("ALLOCATION IN SIGNAL CONTEXT: malloc"), std::string::npos)
      << "malloc_guard is not working: " << check.err;
}

INSTANTIATE_TEST_SUITE_P(Samplers, SamplerTest, ::testing::Values("perf", "timer"),
                         [](const auto &info) { return std::string(info.param); });

TEST(RuntimeTest, DisabledRuntimeDoesNothingAndProgramBehavesTheSame) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  std::string profile = dir.file("profile.coz");
  RunResult off =
      runTarget(dir, {"status", "7"}, {{CAUSAL_ENV_DISABLE, "1"}, {CAUSAL_ENV_OUTPUT, profile}});
  ASSERT_TRUE(off.exited);
  EXPECT_EQ(off.status, 7);
  EXPECT_EQ(off.out,
            "hello from the target\nsigprof=default sigrtmax=default restart=0 libunwind=0\n");
  EXPECT_EQ(off.err, "");
  struct stat st;
  EXPECT_NE(stat(profile.c_str(), &st), 0) << "CAUSAL_DISABLE=1 must not write a profile";

  RunResult on = runTarget(dir, {"status", "7"}, {{CAUSAL_ENV_OUTPUT, profile}});
  ASSERT_TRUE(on.exited);
  EXPECT_EQ(on.status, 7) << "exit status unchanged by profiling";
  EXPECT_EQ(on.out,
            "hello from the target\nsigprof=default sigrtmax=handler restart=1 libunwind=1\n")
      << "same output; SIGPROF left to the program; the sample signal's handler installed "
         "with SA_RESTART; libunwind loaded";
  EXPECT_EQ(on.err, "");
  EXPECT_EQ(stat(profile.c_str(), &st), 0) << "profiling on: a profile is written";
}

TEST(RuntimeTest, BlockingCallsDoNotFailWithEINTRUnderPerfSampling) {
  // perf samples are taken in user mode only (exclude_kernel), so a sample
  // signal never interrupts a system call, and SA_RESTART covers the rest.
  // (The timer fallback can tick inside a system call; nanosleep and poll
  // are never restarted by the kernel, so it is not asserted for it.)
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  RunResult r = runTarget(dir, {"sleepy", "600"},
                          {{CAUSAL_ENV_SAMPLER, "perf"}, {CAUSAL_ENV_OUTPUT, dir.file("p.coz")}});
  if (perfUnavailable(r))
    GTEST_SKIP() << "perf_event unavailable here";
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "eintr=0\n");
  std::vector<ProfileRecord> records = readProfile(dir.file("p.coz"));
  if (!causal::test::kSamplesHeldBack)
    EXPECT_GT(samplesAt(records, kSpinLine), 50u) << "600 x 0.3 ms of spinning was sampled";
}

size_t occurrences(const std::string &text, const std::string &what) {
  size_t count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++count;
  return count;
}

TEST(RuntimeTest, DeniedPerfEventFallsBackToTimerAndSaysWhyOnce) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  RunResult r = runTarget(dir, {"thread", "300"}, {{CAUSAL_ENV_OUTPUT, dir.file("p.coz")}},
                          {SYS_perf_event_open});
  ASSERT_TRUE(r.exited);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(occurrences(r.err, "perf_event sampling is not used: perf_event_open failed: "
                               "Permission denied; kernel.perf_event_paranoid="),
            1u)
      << r.err;
  EXPECT_EQ(occurrences(r.err, "Using the CPU-time timer sampler instead"), 1u) << r.err;
  EXPECT_EQ(occurrences(r.err, "causal: "), 1u) << "one message, also for the new thread";
  std::vector<ProfileRecord> records = readProfile(dir.file("p.coz"));
  if (!causal::test::kSamplesHeldBack) {
    expectPlausibleCount(samplesAt(records, kSpinLine), outputValue(r.out, "cpu_ns"),
                         "timer fallback");
    // Every sample came from the timer (runtime timer-samples=).
    EXPECT_GT(lastRuntimeField(records, "samples-arrived"), 0);
    EXPECT_EQ(lastRuntimeField(records, "timer-samples"),
              lastRuntimeField(records, "samples-arrived"));
  }
}

TEST(RuntimeTest, WithoutAnySamplerTheProgramRunsNormally) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  std::vector<int> denied = {SYS_perf_event_open, SYS_timer_create};
  RunResult status =
      runTarget(dir, {"status", "5"}, {{CAUSAL_ENV_OUTPUT, dir.file("p.coz")}}, denied);
  ASSERT_TRUE(status.exited);
  EXPECT_EQ(status.status, 5);
  EXPECT_EQ(status.out.substr(0, status.out.find('\n')), "hello from the target");
  EXPECT_EQ(occurrences(status.err, "sampling is off: the CPU-time timer failed too"), 1u)
      << status.err;
  RunResult churn =
      runTarget(dir, {"churn", "40"}, {{CAUSAL_ENV_OUTPUT, dir.file("p.coz")}}, denied);
  ASSERT_TRUE(churn.exited);
  EXPECT_EQ(churn.status, 0) << churn.err;
  EXPECT_EQ(churn.out, "churn done\n");
  EXPECT_EQ(occurrences(churn.err, "causal: "), 2u) << "perf reason + timer failure, once each";
  std::vector<ProfileRecord> records = readProfile(dir.file("p.coz"));
  EXPECT_EQ(samplesAt(records, kSpinLine), 0u);
}

TEST(RuntimeTest, UnloadedLibraryKeepsItsSamples) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  RunResult r = runTarget(dir, {"dlopen", "300", CAUSAL_SAMPLE_PLUGIN},
                          {{CAUSAL_ENV_OUTPUT, dir.file("p.coz")}});
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<ProfileRecord> records = readProfile(dir.file("p.coz"));
  // Counted while loaded, written at exit after dlclose unregistered it.
  if (!causal::test::kSamplesHeldBack)
    expectPlausibleCount(samplesAt(records, "causal_test_plugin.cpp:30"),
                         outputValue(r.out, "cpu_ns"), "dlclose'd plugin");
}

// The target's MODE (handoff, handoffspin) with ROUNDS, the verbose summary
// and the switch cost given as |switch_cost_ns| (what this machine's timers
// cost does not matter), its profile in p.coz.
RunResult runSwitching(const TempDir &dir, const char *mode, const char *rounds,
                       const char *switch_cost_ns = "20000") {
  return runTarget(dir, {mode, rounds},
                   {{CAUSAL_ENV_OUTPUT, dir.file("p.coz")},
                    {CAUSAL_ENV_VERBOSE, "1"},
                    {CAUSAL_ENV_PERF_SWITCH_COST, switch_cost_ns}});
}

// A thread's samples across moves between perf and the timer, whose samples
// come at the scheduler's tick: a wider floor than expectPlausibleCount's.
bool plausibleAcrossMoves(unsigned long long count, double expected) {
  return double(count) >= 0.3 * expected && double(count) <= 1.3 * expected + 2 * kBatch;
}

// With the auto sampler, a thread whose context switches would cost it more
// than CAUSAL_PERF_SWITCH_COST_MAX_PERCENT % of its CPU time under perf
// moves to the CPU-time timer, and its samples go on arriving. The cost per
// switch is given, so that the test does not depend on what this machine's
// timers cost: 100 us. The target's spins between switches are nominally
// 50 us, but burnCpu reads the thread's clock only every 200,000 steps, so a
// spin lasts at least that many: about 0.1 ms on the AMD VMs and 0.3-0.4 ms
// on an Intel VM, where the 20 us this test gave before came to 5-7 %, next
// to the limit, and one of the two threads stayed on perf in a CI run
// (2026-12-06). At 100 us a switch: 25-33 % there. 0 (or --sampler perf)
// moves none.
TEST(RuntimeTest, ThreadsThatSwitchOftenMoveToTheTimer) {
  if (causal::test::kSamplesHeldBack)
    GTEST_SKIP() << causal::test::kSamplesHeldBackWhy;
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const char moved[] = "of them moved from perf_event";
  // Sampled before the move by perf and after it by the timer
  // (plausibleAcrossMoves). The kernel checks a CPU-time timer only at a
  // tick that finds the thread on a CPU, and under load it can miss most of
  // a short run (docs/benchmarks.md, "CPU-time timers under contention"):
  // the count is checked in up to three runs, as the lit tests that need
  // CPU-timer signals do (test/lit/Inputs/attempts.py); the moves in every run.
  std::string counts;
  bool plausible = false;
  for (int attempt = 0; attempt < 3 && !plausible; ++attempt) {
    RunResult r = runSwitching(dir, "handoff", "600", "100000");
    if (perfUnavailable(r))
      GTEST_SKIP() << "perf_event unavailable here";
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(verboseSampleCount(r.err, moved), 2) << r.err;
    EXPECT_NE(r.err.find("a context switch costs a perf-sampled thread 100000 ns"),
              std::string::npos)
        << r.err;
    double expected = double(outputValue(r.out, "cpu_ns")) / kPeriodNs;
    std::vector<ProfileRecord> records = readProfile(dir.file("p.coz"));
    unsigned long long count = samplesAt(records, kSpinLine);
    // The samples the timer took after the move, of those that arrived.
    long long timer = lastRuntimeField(records, "timer-samples");
    EXPECT_GT(timer, 0) << "runtime timer-samples=";
    EXPECT_LE(timer, lastRuntimeField(records, "samples-arrived"));
    unlink(dir.file("p.coz").c_str());
    plausible = plausibleAcrossMoves(count, expected);
    counts += " " + std::to_string(count) + " of about " + std::to_string(int(expected)) + ";";
  }
  EXPECT_TRUE(plausible) << "samples of the spin line in three runs:" << counts;

  for (auto env : std::vector<std::map<std::string, std::string>>{
           {{CAUSAL_ENV_PERF_SWITCH_COST, "0"}},
           {{CAUSAL_ENV_PERF_SWITCH_COST, "100000"}, {CAUSAL_ENV_SAMPLER, "perf"}}}) {
    env[CAUSAL_ENV_OUTPUT] = dir.file("q.coz");
    env[CAUSAL_ENV_VERBOSE] = "1";
    RunResult kept = runTarget(dir, {"handoff", "600"}, env);
    ASSERT_EQ(kept.status, 0) << kept.err;
    EXPECT_EQ(verboseSampleCount(kept.err, moved), 0) << kept.err;
    std::vector<ProfileRecord> records = readProfile(dir.file("q.coz"));
    EXPECT_GT(lastRuntimeField(records, "samples-arrived"), 0);
    EXPECT_EQ(lastRuntimeField(records, "timer-samples"), -1) << "left out: none";
    unlink(dir.file("q.coz").c_str());
  }
}

// A thread that moved to the timer goes back to perf once its switches
// would cost perf little: two threads hand a token to each other (about 20
// us of CPU a switch, so the given 20 us a switch costs 100 %, far above the
// 5 % that moves a thread; the target's spins used to read the clock too
// seldom to stop before 0.1-0.4 ms, which came to 5-7 % on an Intel VM),
// then each spins 150 ms alone, where only preemptions switch it (at
// most one per 2 ms of CPU for the move back: a few under light load; a
// machine loaded with other CPU-bound work preempts it more often, so the
// move back, like the sample count, is checked in up to three runs, the
// moves to the timer in every run). Both threads move; one may move twice
// (a slow run under ASan on a loaded CI machine moved one back during the
// hand-offs and again to the timer), so the check is that every move to
// the timer was followed by one back.
TEST(RuntimeTest, ThreadsThatStopSwitchingOftenGoBackToPerf) {
  if (causal::test::kSamplesHeldBack)
    GTEST_SKIP() << causal::test::kSamplesHeldBackWhy;
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  std::string runs;
  bool done = false;
  for (int attempt = 0; attempt < 3 && !done; ++attempt) {
    RunResult r = runSwitching(dir, "handoffspin", "2000");
    if (perfUnavailable(r))
      GTEST_SKIP() << "perf_event unavailable here";
    ASSERT_EQ(r.status, 0) << r.err;
    double moved = verboseSampleCount(r.err, "of them moved from perf_event");
    EXPECT_GE(moved, 2) << r.err;
    double back = verboseSampleCount(r.err, "moves back to perf_event");
    double expected = double(outputValue(r.out, "cpu_ns")) / kPeriodNs;
    unsigned long long count = samplesAt(readProfile(dir.file("p.coz")), kSpinLine);
    unlink(dir.file("p.coz").c_str());
    done = moved >= 2 && back == moved && plausibleAcrossMoves(count, expected);
    runs += " " + std::to_string(int(back)) + " back, " + std::to_string(count) +
            " samples of about " + std::to_string(int(expected)) + ";";
  }
  EXPECT_TRUE(done) << "moves back and samples of the spin line in three runs:" << runs;
}

TEST(RuntimeTest, ImageWithoutTableIsNamedOnce) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  RunResult r = runTarget(dir, {"notable"}, {{CAUSAL_ENV_OUTPUT, dir.file("p.coz")}});
  ASSERT_EQ(r.status, 0);
  std::string expected =
      std::string(CAUSAL_SAMPLE_TARGET) + ": no causal line table (linked without causal-ld?)";
  size_t at = r.err.find(expected);
  EXPECT_NE(at, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(expected, at + 1), std::string::npos) << "said once";
}

TEST(RuntimeTest, SampleLogMatchesProfileCounts) {
  if (causal::test::kSamplesHeldBack)
    GTEST_SKIP() << causal::test::kSamplesHeldBackWhy;
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  RunResult r = runTarget(dir, {"spin", "200"},
                          {{CAUSAL_ENV_OUTPUT, dir.file("p.coz")},
                           {CAUSAL_ENV_SAMPLE_LOG, dir.file("samples.log")},
                           {CAUSAL_ENV_VERBOSE, "1"}});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("sampler: "), std::string::npos) << "verbose names the sampler";
  EXPECT_NE(r.err.find("module "), std::string::npos) << "verbose lists modules";
  std::vector<ProfileRecord> records = readProfile(dir.file("p.coz"));
  unsigned long long profile_count = samplesAt(records, kSpinLine);
  ASSERT_GT(profile_count, 0u);

  // Every log line is "<path> <hex address> <count>"; addresses inside the
  // spin function's range must add up to the profile's count of its line.
  std::string range = r.out.substr(r.out.find("spin_range=") + 11);
  unsigned long long begin = strtoull(range.c_str(), nullptr, 16);
  unsigned long long end = strtoull(range.c_str() + range.find('-') + 1, nullptr, 16);
  ASSERT_LT(begin, end);
  std::string log = readFile(dir.file("samples.log"));
  ASSERT_FALSE(log.empty());
  unsigned long long in_range = 0;
  size_t lines = 0;
  size_t pos = 0;
  while (pos < log.size()) {
    size_t eol = log.find('\n', pos);
    ASSERT_NE(eol, std::string::npos) << "log ends with a newline";
    std::string line = log.substr(pos, eol - pos);
    pos = eol + 1;
    ++lines;
    char path[4096];
    unsigned long long address = 0, count = 0;
    ASSERT_EQ(sscanf(line.c_str(), "%4095s %llx %llu", path, &address, &count), 3) << line;
    EXPECT_EQ(std::string(path), CAUSAL_SAMPLE_TARGET);
    if (address >= begin && address < end)
      in_range += count;
  }
  EXPECT_GT(lines, 0u);
  EXPECT_EQ(in_range, profile_count);
}

} // namespace
