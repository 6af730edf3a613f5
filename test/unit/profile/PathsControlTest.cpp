//===- PathsControlTest.cpp - The client of live control -------------------===//
//
// tools/profile/PathsControl: what it reads of /proc, the names it sends, and
// the command protocol of causal/paths_control.h against a fake runtime (a
// thread that serves the block as runtime/PathsControl.cpp does).
//
//===----------------------------------------------------------------------===//
#include "PathsControl.h"

#include "causal/paths_control.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <string>
#include <sys/mman.h>
#include <thread>
#include <unistd.h>

using namespace causal::profile;
namespace pc = causal::paths_control;

TEST(PathsControlParse, ProcStat) {
  std::string comm;
  uint64_t start = 0;
  // A comm with blanks and parentheses: field 22 is counted after its last ')'.
  std::string text = "4242 (my (odd) prog) S 1 4242 4242 0 -1 4194560 100 0 0 0 5 6 0 0 20 0 1 "
                     "0 987654 123456 789 18446744073709551615\n";
  ASSERT_TRUE(parseProcStat(text, comm, start));
  EXPECT_EQ(comm, "my (odd) prog");
  EXPECT_EQ(start, 987654u);
  EXPECT_FALSE(parseProcStat("4242 (short) S 1 2 3", comm, start));
  EXPECT_FALSE(parseProcStat("no parentheses", comm, start));
}

TEST(PathsControlParse, StatusUid) {
  uint32_t uid = 0;
  ASSERT_TRUE(parseStatusUid("Name:\tx\nUmask:\t0022\nUid:\t1000\t1001\t1000\t1000\n", uid));
  EXPECT_EQ(uid, 1000u);
  EXPECT_FALSE(parseStatusUid("Name:\tx\n", uid));
}

TEST(PathsControlParse, Names) {
  std::string patterns, error;
  ASSERT_TRUE(joinControlNames({"f(int, int)", "parse_*"}, patterns, error));
  EXPECT_EQ(patterns, "f(int, int),parse_*");
  EXPECT_FALSE(joinControlNames({"a", ""}, patterns, error));
  EXPECT_NE(error.find("empty"), std::string::npos);
  EXPECT_FALSE(joinControlNames({std::string(pc::kPatternBytes, 'x')}, patterns, error));
  EXPECT_EQ(controlFileName("/dev/shm", 1000, 42), "/dev/shm/causal-1000-42.paths");
}

namespace {

// A block in a temporary file, as the runtime makes it.
struct FakeBlock {
  std::string file;
  pc::Block *block = nullptr;
  explicit FakeBlock(int pid, uint64_t start) {
    char name[] = "/tmp/causal-control-test-XXXXXX";
    int fd = mkstemp(name);
    file = name;
    EXPECT_GE(fd, 0);
    EXPECT_EQ(ftruncate(fd, sizeof(pc::Block)), 0);
    block = static_cast<pc::Block *>(
        mmap(nullptr, sizeof(pc::Block), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    close(fd);
    std::memcpy(block->magic, pc::kMagic, sizeof(pc::kMagic));
    block->version = pc::kVersion;
    block->size = sizeof(pc::Block);
    block->pid = uint32_t(pid);
    block->start_time = start;
    block->state = pc::kServing;
    std::strcpy(block->sidecar, "/somewhere/profile.coz.paths");
  }
  ~FakeBlock() {
    munmap(block, sizeof(pc::Block));
    unlink(file.c_str());
  }
};

// Serves commands as the runtime's profiler thread does, until told to stop.
struct FakeRuntime {
  pc::Block *block;
  std::atomic<bool> stop{false};
  // The last command's patterns, read by the test under |seen_lock| (the
  // client's own synchronization with the block is not what is tested here,
  // and a sanitizer need not see through it).
  std::mutex seen_lock;
  std::string seen;
  uint32_t seen_op = 0;
  std::string lastSeen() {
    std::lock_guard<std::mutex> lock(seen_lock);
    return seen;
  }
  std::thread thread;
  explicit FakeRuntime(pc::Block *b) : block(b), thread([this] { serve(); }) {}
  ~FakeRuntime() {
    stop = true;
    thread.join();
  }
  void serve() {
    uint64_t done = 0, generation = 0;
    while (!stop) {
      uint64_t sequence = __atomic_load_n(&block->command.sequence, __ATOMIC_ACQUIRE);
      if (sequence == done) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        continue;
      }
      std::unique_lock<std::mutex> lock(seen_lock);
      seen_op = block->command.op;
      seen = block->command.patterns;
      lock.unlock();
      pc::Ack &ack = block->ack;
      ack.status = pc::kOk;
      ack.matched = ack.changed = 0;
      ack.unmatched[0] = ack.error[0] = '\0';
      if (seen_op == pc::kFlush) {
        ack.flush_generation = ++generation;
      } else if (seen == "bad") {
        ack.status = pc::kFailed;
        std::strcpy(ack.error, "it went wrong");
      } else {
        ack.matched = 1;
        ack.changed = 1;
        std::strcpy(ack.unmatched, "nosuch\nother*\n");
      }
      ack.functions = 3;
      ack.enabled = seen_op == pc::kEnable ? 1 : 0;
      __atomic_store_n(&ack.sequence, sequence, __ATOMIC_RELEASE);
      done = sequence;
    }
  }
};

} // namespace

TEST(PathsControl, CommandsAndAnswers) {
  FakeBlock fake(4242, 777);
  PathsControl control;
  std::string error;
  ASSERT_TRUE(control.openFile(fake.file, 4242, 777, error)) << error;
  EXPECT_EQ(control.sidecar(), "/somewhere/profile.coz.paths");
  FakeRuntime runtime(fake.block);
  ControlAnswer answer;
  ASSERT_TRUE(control.command(pc::kEnable, "work_a,nosuch,other*", 10, answer, error)) << error;
  EXPECT_EQ(runtime.lastSeen(), "work_a,nosuch,other*");
  EXPECT_EQ(answer.matched, 1u);
  EXPECT_EQ(answer.enabled, 1u);
  EXPECT_EQ(answer.functions, 3u);
  EXPECT_EQ(answer.unmatched, (std::vector<std::string>{"nosuch", "other*"}));
  ASSERT_TRUE(control.command(pc::kFlush, "", 10, answer, error)) << error;
  EXPECT_EQ(answer.flushGeneration, 1u);
  EXPECT_TRUE(answer.unmatched.empty());
  ASSERT_TRUE(control.command(pc::kFlush, "", 10, answer, error)) << error;
  EXPECT_EQ(answer.flushGeneration, 2u);
  EXPECT_FALSE(control.command(pc::kDisable, "bad", 10, answer, error));
  EXPECT_NE(error.find("it went wrong"), std::string::npos) << error;
  EXPECT_EQ(__atomic_load_n(&fake.block->command.sequence, __ATOMIC_ACQUIRE), 4u);
  EXPECT_EQ(__atomic_load_n(&fake.block->ack.sequence, __ATOMIC_ACQUIRE), 4u);
}

TEST(PathsControl, NoAnswerTimesOut) {
  FakeBlock fake(4242, 777);
  fake.block->state = pc::kIdle;
  PathsControl control;
  std::string error;
  ASSERT_TRUE(control.openFile(fake.file, 4242, 777, error)) << error;
  ControlAnswer answer;
  EXPECT_FALSE(control.command(pc::kFlush, "", 0.2, answer, error));
  EXPECT_NE(error.find("did not answer within 0.2 s (no profiler thread serves it"),
            std::string::npos)
      << error;
  // The command is still outstanding: the next one waits for it, then says so.
  EXPECT_FALSE(control.command(pc::kFlush, "", 0.2, answer, error));
  EXPECT_NE(error.find("an earlier command is still outstanding"), std::string::npos) << error;
  // Once it is answered, the next goes through.
  {
    FakeRuntime runtime(fake.block);
    ASSERT_TRUE(control.command(pc::kFlush, "", 10, answer, error)) << error;
  }
}

TEST(PathsControl, StaleOrEndedOrForeign) {
  FakeBlock fake(4242, 777);
  PathsControl control;
  std::string error;
  EXPECT_FALSE(control.openFile(fake.file, 4242, 778, error)); // the pid reused
  EXPECT_NE(error.find("is stale"), std::string::npos) << error;
  EXPECT_FALSE(control.openFile(fake.file, 4243, 777, error));
  EXPECT_NE(error.find("is stale"), std::string::npos) << error;
  fake.block->version = pc::kVersion + 1;
  EXPECT_FALSE(control.openFile(fake.file, 4242, 777, error));
  EXPECT_NE(error.find("another version"), std::string::npos) << error;
  fake.block->version = pc::kVersion;
  fake.block->state = pc::kEnded;
  EXPECT_FALSE(control.openFile(fake.file, 4242, 777, error));
  EXPECT_NE(error.find("has ended; its paths are in /somewhere/profile.coz.paths"),
            std::string::npos)
      << error;
  EXPECT_FALSE(control.openFile("/nonexistent/causal-0-1.paths", 1, 1, error));
  EXPECT_NE(error.find("cannot open"), std::string::npos) << error;
}

TEST(PathsControl, ProcessChecks) {
  PathsControl control;
  std::string error;
  // A pid that no process has (beyond pid_max).
  EXPECT_FALSE(control.open(0x7ffffff0, error));
  EXPECT_NE(error.find("no process 2147483632 (it has exited, or never ran)"), std::string::npos)
      << error;
  // This process: no runtime, no control file.
  EXPECT_FALSE(control.open(int(getpid()), error));
  EXPECT_NE(error.find("serves no call paths control"), std::string::npos) << error;
}
