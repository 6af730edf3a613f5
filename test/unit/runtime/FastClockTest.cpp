//===- FastClockTest.cpp - The waits clock: CLOCK_MONOTONIC from the TSC --===//
//
// Tolerances are meant for a loaded 2-CPU CI machine: no assert depends on
// how fast a thread runs or how soon it gets a CPU. Where a bound is on
// time, the reads of this clock are bracketed by clock_gettime reads, so a
// preemption widens the bracket rather than failing the check.

#include "FastClock.h"

#include "causal/tunables.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

namespace {

using namespace causal::rt;

uint64_t clockGettimeNs() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

// How far the clock may be from clock_gettime: the re-anchoring keeps the
// drift at an anchor under the step threshold (100 us: beyond it the clock
// steps to clock_gettime), and until the next anchor (50 ms; the reader that
// finds the anchor older re-anchors) a rate steered off by at most 0.1 %
// adds at most 50 us more. 200 us leaves 50 us for the bracket of a read
// (its clock_gettime reads) and a slow re-anchoring; on a quiet machine the
// two clocks agree within a microsecond.
constexpr uint64_t kAgreementNs = 200000;

// Anchors this clock makes at least (re-anchoring is due every 50 ms of
// reading) before a test that looks at re-anchoring ends; a test ends
// after kAtMostNs whatever happened, so that it cannot hang.
constexpr uint64_t kAnchorsSeen = 4;
constexpr uint64_t kAtLeastNs = 300000000; // 300 ms: 6 periods
constexpr uint64_t kAtMostNs = 20000000000ull;

class FastClock : public ::testing::Test {
protected:
  void SetUp() override {
    resetFastClockForTesting(false);
    initFastClock();
    if (!fastClockUsesTsc())
      std::printf("note: this machine's TSC is not used (clock_gettime)\n");
  }
  void TearDown() override { resetFastClockForTesting(false); }
  // The re-anchoring checks need the TSC; without it there is nothing to anchor.
  uint64_t anchorsWanted() const { return fastClockUsesTsc() ? kAnchorsSeen : 0; }
};

// Reads this clock between two clock_gettime reads for at least kAtLeastNs
// and kAnchorsSeen more re-anchorings, calling |check(before, fast, after)|.
template <typename Check> void readBracketed(uint64_t anchors_wanted, Check check) {
  uint64_t begin = clockGettimeNs();
  uint64_t anchors = fastClockStats().anchors;
  for (;;) {
    uint64_t before = clockGettimeNs();
    uint64_t fast = fastMonotonicNs();
    uint64_t after = clockGettimeNs();
    if (!check(before, fast, after))
      return;
    uint64_t elapsed = after - begin;
    if (elapsed >= kAtMostNs ||
        (elapsed >= kAtLeastNs && fastClockStats().anchors - anchors >= anchors_wanted))
      return;
  }
}

TEST_F(FastClock, AgreesWithClockGettime) {
  uint64_t anchors = fastClockStats().anchors, reads = 0, worst = 0;
  readBracketed(anchorsWanted(), [&](uint64_t before, uint64_t fast, uint64_t after) {
    ++reads;
    uint64_t off = fast < before ? before - fast : fast > after ? fast - after : 0;
    worst = off > worst ? off : worst;
    EXPECT_LE(off, kAgreementNs) << "read " << reads << ": " << fast << " outside [" << before
                                 << ", " << after << "]";
    return off <= kAgreementNs;
  });
  std::printf("%llu reads, farthest %llu ns outside clock_gettime's bracket\n",
              (unsigned long long)reads, (unsigned long long)worst);
  EXPECT_GE(fastClockStats().anchors - anchors, anchorsWanted()) << "the clock never re-anchored";
  EXPECT_EQ(fastClockStats().steps, 0u) << "the drift exceeded the step threshold";
}

// The offset to clock_gettime of one read lies within [fast - after, fast -
// before]. Between two consecutive reads the true offset moves by the
// steering (at most 0.1 % of the time between them), a nanosecond of
// rounding, or a step; a step is more than CAUSAL_FAST_CLOCK_STEP_NS. So the
// intervals of two consecutive reads are never further apart than the
// threshold plus the steering (a preempted read widens its interval, which
// can only narrow the gap).
TEST_F(FastClock, ReanchoringKeepsItContinuous) {
  uint64_t anchors = fastClockStats().anchors, reads = 0;
  int64_t last_low = 0, last_high = 0;
  uint64_t last_before = 0;
  readBracketed(anchorsWanted(), [&](uint64_t before, uint64_t fast, uint64_t after) {
    int64_t low = int64_t(fast - after), high = int64_t(fast - before);
    if (reads++ > 0) {
      uint64_t steer = (after - last_before) * CAUSAL_FAST_CLOCK_MAX_STEER_PPM / 1000000;
      int64_t allowed = int64_t(CAUSAL_FAST_CLOCK_STEP_NS + steer + 1000);
      int64_t gap = low > last_high ? low - last_high : last_low > high ? last_low - high : 0;
      EXPECT_LE(gap, allowed) << "read " << reads << ": the offset to clock_gettime jumped";
      if (gap > allowed)
        return false;
    }
    last_low = low;
    last_high = high;
    last_before = before;
    return true;
  });
  EXPECT_GE(fastClockStats().anchors - anchors, anchorsWanted());
  EXPECT_EQ(fastClockStats().steps, 0u);
}

// The offset to clock_gettime now, from the narrowest of 100 bracketed
// reads (a preempted read only widens its own bracket).
int64_t offsetNow() {
  uint64_t best_width = ~0ull;
  int64_t offset = 0;
  for (int i = 0; i < 100; ++i) {
    uint64_t before = clockGettimeNs(), fast = fastMonotonicNs(), after = clockGettimeNs();
    if (after - before < best_width) {
      best_width = after - before;
      offset = int64_t(fast - before) - int64_t(after - before) / 2;
    }
  }
  return offset;
}

// A drift below the step threshold (60 us, ahead or behind) is steered away
// (at most 50 us per 50 ms period: gone after two periods, 3 more anchors
// leave room), without a step and without a jump. Steering the wrong way
// would double it each period and step; not steering would keep it.
TEST_F(FastClock, SteersADriftAway) {
  if (!fastClockUsesTsc())
    GTEST_SKIP() << "no TSC: nothing is anchored";
  constexpr int64_t kDrift = 60000, kLeft = 20000; // within 20 us of clock_gettime
  static_assert(kDrift < int64_t(CAUSAL_FAST_CLOCK_STEP_NS), "a drift to steer, not to step");
  for (int64_t drift : {kDrift, -kDrift}) {
    fastMonotonicNs();
    offsetFastClockForTesting(drift);
    int64_t before = offsetNow();
    // The bracket's middle is within a microsecond of the truth unless all
    // 100 reads were preempted; the clock may have re-anchored meanwhile.
    EXPECT_GE(drift > 0 ? before : -before, kDrift / 2) << "the offset was not applied";
    uint64_t steps = fastClockStats().steps;
    readBracketed(kAnchorsSeen + 1, [](uint64_t, uint64_t, uint64_t) { return true; });
    int64_t after = offsetNow();
    EXPECT_LE(after < 0 ? -after : after, kLeft) << "drift " << drift << " was not steered away";
    EXPECT_EQ(fastClockStats().steps, steps) << "drift " << drift << " was stepped, not steered";
  }
}

// The steered rate holds for one period after its anchor: an anchor that
// comes late (nobody read the clock for 300 ms) finds the drift made up (60
// us less 50 us), not turned the other way (300 us of steering would leave
// -240 us, and a step).
TEST_F(FastClock, ALateAnchorDoesNotOversteer) {
  if (!fastClockUsesTsc())
    GTEST_SKIP() << "no TSC: nothing is anchored";
  constexpr int64_t kDrift = 60000;
  fastMonotonicNs();
  offsetFastClockForTesting(kDrift);
  uint64_t steps = fastClockStats().steps, anchors = fastClockStats().anchors;
  // Older than a period: the tick re-anchors, steering 60 us of drift away.
  std::this_thread::sleep_for(std::chrono::nanoseconds(2 * CAUSAL_FAST_CLOCK_ANCHOR_NS));
  tickFastClock();
  EXPECT_EQ(fastClockStats().anchors, anchors + 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  int64_t after = offsetNow(); // its first read re-anchors
  EXPECT_EQ(fastClockStats().steps, steps) << "the late anchor found " << after << " ns";
  EXPECT_LE(after < 0 ? -after : after, 30000) << "10 us are left to steer, 30 allowed";
}

// A drift beyond the step threshold steps the clock back to clock_gettime at
// the next anchor.
TEST_F(FastClock, StepsABigDrift) {
  if (!fastClockUsesTsc())
    GTEST_SKIP() << "no TSC: nothing is anchored";
  constexpr int64_t kDrift = 3 * int64_t(CAUSAL_FAST_CLOCK_STEP_NS);
  fastMonotonicNs();
  uint64_t steps = fastClockStats().steps;
  offsetFastClockForTesting(kDrift);
  readBracketed(2, [](uint64_t, uint64_t, uint64_t) { return true; });
  EXPECT_GE(fastClockStats().steps, steps + 1);
  int64_t after = offsetNow();
  EXPECT_LE(after < 0 ? -after : after, int64_t(kAgreementNs));
}

// Several threads read while they and a ticker (the profiler thread's poll
// step) race to re-anchor: no thread ever sees the clock go back.
TEST_F(FastClock, MonotonicOnEveryThread) {
  constexpr int kThreads = 4;
  std::atomic<bool> done{false};
  std::atomic<uint64_t> backwards{0}, reads{0};
  uint64_t anchors = fastClockStats().anchors;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      uint64_t last = fastMonotonicNs(), count = 0;
      while (!done.load(std::memory_order_relaxed)) {
        uint64_t now = fastMonotonicNs();
        if (now < last)
          backwards.fetch_add(1);
        last = now;
        ++count;
      }
      reads.fetch_add(count);
    });
  std::thread ticker([&] {
    while (!done.load(std::memory_order_relaxed)) {
      tickFastClock();
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
  });
  uint64_t begin = clockGettimeNs();
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    uint64_t elapsed = clockGettimeNs() - begin;
    if (elapsed >= kAtMostNs ||
        (elapsed >= kAtLeastNs && fastClockStats().anchors - anchors >= anchorsWanted()))
      break;
  }
  done = true;
  for (auto &thread : threads)
    thread.join();
  ticker.join();
  std::printf("%llu reads on %d threads, %llu anchors\n", (unsigned long long)reads.load(),
              kThreads, (unsigned long long)(fastClockStats().anchors - anchors));
  EXPECT_EQ(backwards.load(), 0u);
  EXPECT_GE(fastClockStats().anchors - anchors, anchorsWanted());
  EXPECT_GT(reads.load(), 0u);
}

// Forced to the fallback, the clock is clock_gettime itself: every read lies
// within its bracket, and nothing is anchored.
TEST_F(FastClock, FallbackIsClockGettime) {
  resetFastClockForTesting(true);
  initFastClock();
  EXPECT_FALSE(fastClockUsesTsc());
  uint64_t last = 0, reads = 0;
  readBracketed(0, [&](uint64_t before, uint64_t fast, uint64_t after) {
    ++reads;
    EXPECT_GE(fast, before);
    EXPECT_LE(fast, after);
    EXPECT_GE(fast, last);
    last = fast;
    return fast >= before && fast <= after && reads < 100000;
  });
  tickFastClock(); // nothing to re-anchor
  EXPECT_EQ(fastClockStats().anchors, 0u);
  EXPECT_FALSE(fastClockUsesTsc());
}

// A child forked while another thread of the parent held the writer's flag
// (re-anchoring) clears it (runtime/Fork.cpp calls fastClockForkChild) and
// goes on re-anchoring: its clock keeps agreeing with clock_gettime.
TEST_F(FastClock, SurvivesFork) {
  if (!fastClockUsesTsc())
    GTEST_SKIP() << "no TSC: nothing is anchored";
  fastMonotonicNs();
  holdFastClockWriterForTesting(true);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    fastClockForkChild();
    // Exit status: 0 fine, 1 disagreed, 2 never re-anchored.
    int status = 0;
    uint64_t anchors = fastClockStats().anchors;
    readBracketed(kAnchorsSeen, [&](uint64_t before, uint64_t fast, uint64_t after) {
      if (fast + kAgreementNs < before || fast > after + kAgreementNs)
        status = 1;
      return status == 0;
    });
    if (status == 0 && fastClockStats().anchors - anchors < kAnchorsSeen)
      status = 2;
    _exit(status);
  }
  holdFastClockWriterForTesting(false);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_NE(WEXITSTATUS(status), 1) << "the child's clock disagreed with clock_gettime";
  EXPECT_NE(WEXITSTATUS(status), 2) << "the child's clock never re-anchored";
  EXPECT_EQ(WEXITSTATUS(status), 0);
  // The parent's clock goes on too.
  uint64_t before = clockGettimeNs(), fast = fastMonotonicNs(), after = clockGettimeNs();
  EXPECT_LE(before, fast + kAgreementNs);
  EXPECT_LE(fast, after + kAgreementNs);
}

} // namespace
