//===- WaitsTest.cpp - The waits sidecar reader and the wait-for graph ----===//
//
// Synthetic sidecars (WaitsTestWriter.h) with known answers: the W1-W5
// scenarios, cascaded re-distribution against hand-computed weights, and the
// reader's errors. Times are whole milliseconds so the expected weights can
// be worked out on paper; each test says how.
//
//===----------------------------------------------------------------------===//
#include "WaitGraph.h"
#include "WaitsReader.h"
#include "WaitsTestWriter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <stdlib.h>
#include <unistd.h>

using namespace causal::profile;
using causal::test::ms;
using causal::test::WaitsWriter;
namespace wf = causal::waits_format;

namespace {

constexpr uint64_t kRun = 0x1234;
constexpr uint32_t kDisk = wf::kPseudoDiskBase + 1;
constexpr uint32_t kTimer = wf::kPseudoTimer;

WaitsFile readOk(const std::string &bytes) {
  WaitsFile file;
  std::string error;
  EXPECT_TRUE(readWaitsData(bytes, "p.coz.waits", file, error)) << error;
  return file;
}

std::string readError(const std::string &bytes) {
  WaitsFile file;
  std::string error;
  EXPECT_FALSE(readWaitsData(bytes, "p.coz.waits", file, error));
  return error;
}

WaitAnalysis analyze(const std::string &bytes, WaitAnalysisOptions options = {}) {
  return analyzeWaits(readOk(bytes), options);
}

size_t vertex(const WaitAnalysis &a, const std::string &label) {
  size_t v = a.vertexNamed(label);
  EXPECT_NE(v, size_t(-1)) << "no vertex " << label;
  return v;
}

double weightMs(const WaitAnalysis &a, const std::string &from, const std::string &to) {
  const WaitEdge *e = a.edge(vertex(a, from), vertex(a, to));
  return e ? e->weightNs() / 1e6 : 0;
}

std::vector<std::string> labels(const WaitAnalysis &a, const std::vector<size_t> &vertices) {
  std::vector<std::string> names;
  for (size_t v : vertices)
    names.push_back(a.vertices[v].label);
  std::sort(names.begin(), names.end());
  return names;
}

// ---- W1: a pipeline. A waits ~80 % for B; B fsyncs in a loop -------------
//
// 100 cycles of 10 ms over a 1000 ms run. Cycle k starts at t = 10k:
//   B: fsync [t, t+6) woken by the disk, then 4 ms of CPU; hands A an item at t+8;
//   A: waits [t, t+8) for B, then 2 ms of CPU.
// Direct: A->B 800 ms, B->disk 600 ms. Cascade: A's waits overlap B's fsyncs
// for 6 ms a cycle, so B->disk gets 600 ms more: 1200 ms. The disk is busy
// 600 ms, idle 400 ms, all of it waiting for B: disk->B 400 ms.
std::string pipeline() {
  WaitsWriter w;
  w.begin(kRun, 0);
  std::vector<wf::Episode> a, b;
  for (int k = 0; k < 100; ++k) {
    double t = 10.0 * k;
    b.push_back(w.episode(kRun, ms(t), ms(t + 6), kDisk, wf::WaitKind::FileIo, "log.c:20", "", 3));
    a.push_back(w.episode(kRun, ms(t), ms(t + 8), 12, wf::WaitKind::CondVar, "stage.c:10",
                          "stage.c:31", 0xA0));
  }
  w.episodes(kRun, 11, a);
  w.episodes(kRun, 12, b);
  w.thread(kRun, 11, "stageA", "stage.c:5", 0, ms(1000), ms(200), ms(800));
  // B's CPU time: 300 ms of its 400 ms off the disk; 100 ms unexplained.
  w.thread(kRun, 12, "stageB", "stage.c:25", 0, ms(1000), ms(300), ms(600));
  w.end(kRun, ms(1000), 200);
  return w.bytes;
}

TEST(WaitGraph, W1PipelineKnotIsStageBAndDisk) {
  WaitAnalysis a = analyze(pipeline());
  EXPECT_DOUBLE_EQ(a.runNs, 1e9);
  EXPECT_NEAR(weightMs(a, "stageA [11]", "stageB [12]"), 800, 1e-6);
  EXPECT_NEAR(weightMs(a, "stageB [12]", "disk 1"), 1200, 1e-6);
  EXPECT_NEAR(weightMs(a, "disk 1", "stageB [12]"), 400, 1e-6);
  EXPECT_EQ(weightMs(a, "stageB [12]", "stageA [11]"), 0);
  const WaitEdge *ab = a.edge(vertex(a, "stageA [11]"), vertex(a, "stageB [12]"));
  ASSERT_TRUE(ab);
  EXPECT_NEAR(a.share(ab->weightNs()), 0.8, 1e-9);
  ASSERT_FALSE(ab->waitLines.empty());
  EXPECT_EQ(ab->waitLines[0].line, "stage.c:10");
  EXPECT_EQ(ab->wakeLines[0].line, "stage.c:31");
  const WaitEdge *bd = a.edge(vertex(a, "stageB [12]"), vertex(a, "disk 1"));
  ASSERT_TRUE(bd);
  EXPECT_NEAR(bd->directNs / 1e6, 600, 1e-6);
  EXPECT_NEAR(bd->cascadedNs / 1e6, 600, 1e-6);
  EXPECT_NEAR(a.vertices[vertex(a, "disk 1")].idleNs / 1e6, 400, 1e-6);

  ASSERT_EQ(a.knots.size(), 1u);
  const WaitKnot &knot = a.knots[0];
  EXPECT_FALSE(knot.background);
  EXPECT_TRUE(knot.hasIo);
  EXPECT_EQ(labels(a, knot.vertices), (std::vector<std::string>{"disk 1", "stageB [12]"}));
  EXPECT_NEAR(knot.weightNs / 1e6, 1600, 1e-6);
  ASSERT_EQ(knot.cores.size(), 1u); // a simple cycle: nothing to refine
  EXPECT_EQ(labels(a, knot.cores[0]), labels(a, knot.vertices));

  // Unexplained off-CPU time: A none, B 100 of its 700 ms off the CPU.
  EXPECT_NEAR(a.vertices[vertex(a, "stageA [11]")].unexplainedShare(), 0, 1e-9);
  EXPECT_NEAR(a.vertices[vertex(a, "stageB [12]")].unexplainedShare(), 100.0 / 700, 1e-9);
}

// ---- W2: a lock convoy -----------------------------------------------------
//
// H holds the lock 8 ms of every 10 ms; in cycle k worker W(k mod 3) waits
// [t+1, t+8) for H's unlock (7 ms), holds the lock [t+8, t+9); H waits to
// take it again [t+8.2, t+9) (0.8 ms). Workers wait 700 ms for H in all,
// H waits 80 ms for them.
std::string convoy() {
  WaitsWriter w;
  w.begin(kRun, 0);
  std::vector<wf::Episode> h, workers[3];
  for (int k = 0; k < 100; ++k) {
    double t = 10.0 * k;
    uint32_t worker = 22 + uint32_t(k % 3);
    workers[k % 3].push_back(w.episode(kRun, ms(t + 1), ms(t + 8), 21, wf::WaitKind::Mutex,
                                       "work.c:40", "hold.c:18", 0x10));
    h.push_back(w.episode(kRun, ms(t + 8.2), ms(t + 9), worker, wf::WaitKind::Mutex, "hold.c:12",
                          "work.c:44", 0x10));
  }
  w.episodes(kRun, 21, h);
  for (int i = 0; i < 3; ++i)
    w.episodes(kRun, 22 + uint32_t(i), workers[i]);
  w.thread(kRun, 21, "holder", "hold.c:5", 0, ms(1000), ms(900), ms(80));
  for (uint32_t tid = 22; tid < 25; ++tid)
    w.thread(kRun, tid, "worker", "work.c:30", 0, ms(1000), ms(30), ms(233));
  w.end(kRun, ms(1000));
  return w.bytes;
}

TEST(WaitGraph, W2LockConvoyKnotCentresOnTheHolder) {
  WaitAnalysis a = analyze(convoy());
  ASSERT_EQ(a.knots.size(), 1u);
  const WaitKnot &knot = a.knots[0];
  EXPECT_EQ(knot.vertices.size(), 4u);
  EXPECT_EQ(a.vertices[knot.mostWaitedFor].label, "holder [21]");
  // 34 cycles for worker 22, 33 for the others: 7 ms each.
  EXPECT_NEAR(weightMs(a, "worker [22]", "holder [21]"), 34 * 7, 1e-6);
  EXPECT_NEAR(weightMs(a, "worker [23]", "holder [21]"), 33 * 7, 1e-6);
  EXPECT_NEAR(weightMs(a, "holder [21]", "worker [23]"), 33 * 0.8, 1e-6);
  // The workers are woken where the holder's critical section ends.
  const WaitEdge *e = a.edge(vertex(a, "worker [22]"), vertex(a, "holder [21]"));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->wakeLines.at(0).line, "hold.c:18");
  EXPECT_EQ(e->waitLines.at(0).line, "work.c:40");
  // Refinement drops the light holder->worker edges until a simple cycle
  // remains: the holder and the worker it waited for most.
  ASSERT_EQ(knot.cores.size(), 1u);
  EXPECT_EQ(labels(a, knot.cores[0]), (std::vector<std::string>{"holder [21]", "worker [22]"}));

  // Merged by role, the workers are one vertex and the knot a two-vertex cycle.
  WaitAnalysisOptions merged;
  merged.mergeRoles = true;
  WaitAnalysis m = analyze(convoy(), merged);
  EXPECT_EQ(m.vertices.size(), 2u);
  EXPECT_NEAR(weightMs(m, "worker (x3)", "holder [21]"), 700, 1e-6);
  ASSERT_EQ(m.knots.size(), 1u);
  EXPECT_EQ(m.knots[0].vertices.size(), 2u);
  EXPECT_EQ(m.vertices[m.knots[0].mostWaitedFor].label, "holder [21]");
}

// A thread preempted in the lock it had just released finds its own unlock
// as the last wake: a sidecar that names the thread as its own waker makes
// no self-edge (which would make it a knot of one waiting for itself).
TEST(WaitGraph, AThreadIsNeverItsOwnWaker) {
  WaitsWriter w;
  w.begin(kRun, 0);
  std::vector<wf::Episode> holder, waiter;
  for (int k = 0; k < 10; ++k) {
    double t = 10.0 * k;
    waiter.push_back(w.episode(kRun, ms(t + 1), ms(t + 8), 21, wf::WaitKind::Mutex, "work.c:40",
                               "hold.c:18", 0x10));
    holder.push_back(w.episode(kRun, ms(t + 8.1), ms(t + 8.3), 21, wf::WaitKind::Mutex, "hold.c:12",
                               "hold.c:18", 0x10));
  }
  w.episodes(kRun, 21, holder);
  w.episodes(kRun, 22, waiter);
  w.thread(kRun, 21, "holder", "hold.c:5", 0, ms(100), ms(90), ms(2));
  w.thread(kRun, 22, "waiter", "work.c:30", 0, ms(100), ms(10), ms(70));
  w.end(kRun, ms(100));
  WaitAnalysis a = analyze(w.bytes);
  EXPECT_EQ(a.edge(vertex(a, "holder [21]"), vertex(a, "holder [21]")), nullptr);
  EXPECT_NEAR(weightMs(a, "waiter [22]", "holder [21]"), 70, 1e-6);
  EXPECT_TRUE(a.knots.empty());
  ASSERT_EQ(a.sinks.size(), 1u);
  EXPECT_EQ(a.vertices[a.sinks[0]].label, "holder [21]");
}

// ---- W3: a barrier after sleeps of 2, 4 and 8 ms ---------------------------
//
// 100 cycles of 10 ms. T1, T2, T3 sleep 2, 4, 8 ms, then meet at a barrier
// that T3, arriving last, opens at t+8: T1 waits 6 ms, T2 4 ms for T3. The
// cascade gives T3's sleeps the overlap: 6 + 4 ms a cycle more. So
// T3->timer = 800 + 1000 ms, T1->T3 600, T2->T3 400. No knot: every chain
// ends in the timer, and T3 waits for no thread (a sink).
std::string barrier() {
  WaitsWriter w;
  w.begin(kRun, 0);
  std::vector<wf::Episode> list[3];
  const double sleeps[3] = {2, 4, 8};
  for (int k = 0; k < 100; ++k) {
    double t = 10.0 * k;
    for (int i = 0; i < 3; ++i) {
      list[i].push_back(
          w.episode(kRun, ms(t), ms(t + sleeps[i]), kTimer, wf::WaitKind::Sleep, "bar.c:9"));
      if (i < 2)
        list[i].push_back(w.episode(kRun, ms(t + sleeps[i]), ms(t + 8), 33, wf::WaitKind::Barrier,
                                    "bar.c:10", "bar.c:10", 0xB0));
    }
  }
  for (int i = 0; i < 3; ++i) {
    w.episodes(kRun, 31 + uint32_t(i), list[i]);
    w.thread(kRun, 31 + uint32_t(i), "t" + std::to_string(i + 1), "bar.c:5", 0, ms(1000), ms(200),
             ms(800));
  }
  w.end(kRun, ms(1000));
  return w.bytes;
}

TEST(WaitGraph, W3BarrierChargesTheLongestSleeper) {
  WaitAnalysis a = analyze(barrier());
  EXPECT_NEAR(weightMs(a, "t1 [31]", "t3 [33]"), 600, 1e-6);
  EXPECT_NEAR(weightMs(a, "t2 [32]", "t3 [33]"), 400, 1e-6);
  EXPECT_NEAR(weightMs(a, "t3 [33]", "timer"), 1800, 1e-6);
  EXPECT_NEAR(weightMs(a, "t1 [31]", "timer"), 200, 1e-6);
  EXPECT_NEAR(weightMs(a, "t2 [32]", "timer"), 400, 1e-6);
  EXPECT_TRUE(a.knots.empty());
  ASSERT_EQ(a.sinks.size(), 1u);
  EXPECT_EQ(a.vertices[a.sinks[0]].label, "t3 [33]");
}

// ---- W4: a broadcast to waiters that wait again at once --------------------
//
// Ten windows of 100 ms. In each, X1 and X2 wait on condition 0xC0; the
// broadcaster wakes them every 1 ms for nothing (they wait again |gapMs|
// later, 5 us unless preempted), 98 times; the producer really wakes them at
// +99 ms; they work 1 ms. Fused: one 99 ms wait per window on the producer:
// X->producer 990 ms, X->broadcaster 0 (with 980 false wake-ups on it).
// Format 2 sidecars mark the re-waits (kEpisodeRewait) when |marked|;
// format 1 ones cannot.
std::string broadcast(uint32_t version = wf::kVersion, double gapMs = 0.005, bool marked = true) {
  WaitsWriter w(version);
  w.begin(kRun, 0);
  for (uint32_t tid : {41u, 42u}) {
    std::vector<wf::Episode> list;
    for (int window = 0; window < 10; ++window) {
      double t = 100.0 * window;
      for (int j = 0; j < 99; ++j) {
        double start = t + j + (j ? gapMs : 0);
        uint32_t waker = j < 98 ? 43 : 44;
        list.push_back(w.episode(kRun, ms(start), ms(t + j + 1), waker, wf::WaitKind::CondVar,
                                 "wait.c:7", j < 98 ? "bcast.c:3" : "produce.c:9", 0xC0));
        if (j && marked && version >= 2)
          list.back().flags = wf::kEpisodeRewait;
      }
    }
    w.episodes(kRun, tid, list);
    w.thread(kRun, tid, "waiter", "wait.c:2", 0, ms(1000), ms(10), ms(989));
  }
  w.thread(kRun, 43, "broadcaster", "bcast.c:1", 0, ms(1000), ms(900), 0);
  w.thread(kRun, 44, "producer", "produce.c:1", 0, ms(1000), ms(900), 0);
  w.end(kRun, ms(1000));
  return w.bytes;
}

TEST(WaitGraph, W4FalseWakeupsMakeNoEdge) {
  WaitAnalysis a = analyze(broadcast());
  EXPECT_EQ(weightMs(a, "waiter [41]", "broadcaster [43]"), 0);
  EXPECT_NEAR(weightMs(a, "waiter [41]", "producer [44]"), 990, 0.1);
  EXPECT_EQ(a.falseWakeups, 2u * 10 * 98);
  const WaitEdge *e = a.edge(vertex(a, "waiter [41]"), vertex(a, "broadcaster [43]"));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->falseWakeups, 10u * 98);

  // Format 1 (no marks): the gap says it; without fusing (a gap of 0) the
  // broadcaster gets the waits.
  WaitAnalysis old = analyze(broadcast(1));
  EXPECT_EQ(weightMs(old, "waiter [41]", "broadcaster [43]"), 0);
  EXPECT_EQ(old.falseWakeups, 2u * 10 * 98);
  WaitAnalysisOptions options;
  options.falseWakeupGapNs = 0;
  WaitAnalysis unfused = analyze(broadcast(1), options);
  EXPECT_GT(weightMs(unfused, "waiter [41]", "broadcaster [43]"), 900);
  EXPECT_EQ(unfused.falseWakeups, 0u);
}

// Preempted waiters re-wait 0.3 ms after each false wake-up, more than any
// gap would allow: the recorder's marks still fuse them (format 2: one wait
// of 99 ms per window, its gaps included), the gap of a format 1 sidecar
// does not (per window, 1 ms and 97 waits of 0.7 ms on the broadcaster).
TEST(WaitGraph, W4MarkedRewaitsAreFusedWhateverTheGap) {
  WaitAnalysis a = analyze(broadcast(wf::kVersion, 0.3));
  EXPECT_EQ(weightMs(a, "waiter [41]", "broadcaster [43]"), 0);
  EXPECT_NEAR(weightMs(a, "waiter [41]", "producer [44]"), 990, 0.1);
  EXPECT_EQ(a.falseWakeups, 2u * 10 * 98);
  WaitAnalysis old = analyze(broadcast(1, 0.3));
  EXPECT_NEAR(weightMs(old, "waiter [41]", "broadcaster [43]"), 10 * (1 + 97 * 0.7), 0.1);
}

// Waits 5 us apart without the mark: the thread made progress between them
// (an unlock, a wake, I/O): not false, however short the gap.
TEST(WaitGraph, W4UnmarkedWaitsAreNotFusedInFormat2) {
  WaitAnalysis a = analyze(broadcast(wf::kVersion, 0.005, false));
  EXPECT_EQ(a.falseWakeups, 0u);
  EXPECT_GT(weightMs(a, "waiter [41]", "broadcaster [43]"), 900);
}

// ---- W5: a heartbeat thread that sleeps ------------------------------------
//
// The heartbeat sleeps 99.8 ms of every 100, then takes a lock the worker
// also takes: each waits briefly for the other, a two-thread cycle. The
// heartbeat is a background thread (sleeps > 50 %, CPU < 10 %) and the
// knot's CPU use is below one CPU: reported as background, not a bottleneck.
std::string heartbeat(bool withDisk) {
  WaitsWriter w;
  w.begin(kRun, 0);
  std::vector<wf::Episode> beat, work;
  for (int k = 0; k < 10; ++k) {
    double t = 100.0 * k;
    beat.push_back(w.episode(kRun, ms(t), ms(t + 99.8), kTimer, wf::WaitKind::Sleep, "beat.c:4"));
    beat.push_back(w.episode(kRun, ms(t + 99.8), ms(t + 99.9), 52, wf::WaitKind::Mutex, "beat.c:5",
                             "work.c:21", 0x20));
    work.push_back(w.episode(kRun, ms(t + 99.9), ms(t + 99.95), 51, wf::WaitKind::Mutex,
                             "work.c:20", "beat.c:6", 0x20));
    if (withDisk)
      work.push_back(
          w.episode(kRun, ms(t + 10), ms(t + 60), kDisk, wf::WaitKind::FileIo, "work.c:30"));
  }
  w.episodes(kRun, 51, beat);
  w.episodes(kRun, 52, work);
  w.thread(kRun, 51, "heartbeat", "beat.c:1", 0, ms(1000), ms(1), ms(999));
  w.thread(kRun, 52, "worker", "work.c:1", 0, ms(1000), ms(withDisk ? 490 : 990),
           ms(withDisk ? 500.5 : 0.5));
  w.end(kRun, ms(1000));
  return w.bytes;
}

TEST(WaitGraph, W5HeartbeatIsNeverTheBottleneck) {
  for (bool withDisk : {false, true}) {
    SCOPED_TRACE(withDisk ? "worker also waits on a disk" : "heartbeat and worker only");
    WaitAnalysis a = analyze(heartbeat(withDisk));
    size_t beat = vertex(a, "heartbeat [51]");
    EXPECT_TRUE(a.vertices[beat].background);
    EXPECT_FALSE(a.vertices[vertex(a, "worker [52]")].background);
    // Never in what a bottleneck knot is refined to.
    for (const WaitKnot &knot : a.knots)
      for (const std::vector<size_t> &core : knot.cores)
        EXPECT_TRUE(knot.background || std::count(core.begin(), core.end(), beat) == 0)
            << "heartbeat reported as a bottleneck";
    EXPECT_EQ(std::count(a.sinks.begin(), a.sinks.end(), beat), 0);
    if (!withDisk) {
      ASSERT_EQ(a.knots.size(), 1u);
      EXPECT_TRUE(a.knots[0].background);
    } else {
      // One knot {heartbeat, worker, disk} (the lock ties the heartbeat in);
      // refinement drops the 0.5 ms worker->heartbeat edge first and leaves
      // the worker and its disk.
      ASSERT_EQ(a.knots.size(), 1u);
      EXPECT_FALSE(a.knots[0].background);
      EXPECT_EQ(a.knots[0].vertices.size(), 3u);
      ASSERT_EQ(a.knots[0].cores.size(), 1u);
      EXPECT_EQ(labels(a, a.knots[0].cores[0]),
                (std::vector<std::string>{"disk 1", "worker [52]"}));
    }
  }
}

// ---- Cascaded re-distribution, by hand -------------------------------------
//
// A waits [0, 10) for B; B waits [2, 8) for C; C waits [4, 6) for D.
//   A->B = 10 (direct).
//   B->C = 6 direct + 6 cascaded from A's wait (clipped to [2, 8)) = 12.
//   C->D = 2 direct + 2 from B's wait + 2 from A's (through B) = 6.
// wPerf's Figure 3: each nested wait counts once for every thread it holds up.
TEST(WaitGraph, CascadedRedistributionByHand) {
  WaitsWriter w;
  w.begin(kRun, 0);
  w.episodes(kRun, 1, {w.episode(kRun, ms(0), ms(10), 2, wf::WaitKind::CondVar, "a.c:1")});
  w.episodes(kRun, 2, {w.episode(kRun, ms(2), ms(8), 3, wf::WaitKind::CondVar, "b.c:1")});
  w.episodes(kRun, 3, {w.episode(kRun, ms(4), ms(6), 4, wf::WaitKind::Mutex, "c.c:1")});
  for (uint32_t tid = 1; tid <= 4; ++tid)
    w.thread(kRun, tid, std::string(1, char('A' + tid - 1)), "", 0, ms(20), ms(5), 0);
  w.end(kRun, ms(20));
  WaitAnalysis a = analyze(w.bytes);
  const WaitEdge *ab = a.edge(vertex(a, "A [1]"), vertex(a, "B [2]"));
  const WaitEdge *bc = a.edge(vertex(a, "B [2]"), vertex(a, "C [3]"));
  const WaitEdge *cd = a.edge(vertex(a, "C [3]"), vertex(a, "D [4]"));
  ASSERT_TRUE(ab && bc && cd);
  EXPECT_NEAR(ab->directNs / 1e6, 10, 1e-9);
  EXPECT_NEAR(ab->cascadedNs, 0, 1e-9);
  EXPECT_NEAR(bc->directNs / 1e6, 6, 1e-9);
  EXPECT_NEAR(bc->cascadedNs / 1e6, 6, 1e-9);
  EXPECT_NEAR(cd->directNs / 1e6, 2, 1e-9);
  EXPECT_NEAR(cd->cascadedNs / 1e6, 4, 1e-9);
  // D waits for nothing: a sink; nothing forms a knot.
  EXPECT_TRUE(a.knots.empty());
  ASSERT_EQ(a.sinks.size(), 1u);
  EXPECT_EQ(a.vertices[a.sinks[0]].label, "D [4]");
}

TEST(WaitGraph, OverlappingCycleOfWaitsTerminates) {
  // A and B each claim to wait for the other over the same interval (clock
  // skew between hooks can record it): the cascade stops at the repeated
  // thread instead of recursing for ever.
  WaitsWriter w;
  w.begin(kRun, 0);
  w.episodes(kRun, 1, {w.episode(kRun, ms(0), ms(10), 2, wf::WaitKind::Mutex)});
  w.episodes(kRun, 2, {w.episode(kRun, ms(0), ms(10), 1, wf::WaitKind::Mutex)});
  w.end(kRun, ms(10));
  WaitAnalysis a = analyze(w.bytes);
  EXPECT_NEAR(weightMs(a, "thread [1]", "thread [2]"), 20, 1e-9); // 10 + 10 through B
  ASSERT_EQ(a.knots.size(), 1u);
  EXPECT_FALSE(a.cascadeTruncated);
}

TEST(WaitGraph, RunsAreSeparateUnlessMerged) {
  // The pipeline recorded twice (two runs appended): two knots, one per run;
  // merged by role, one knot over both runs with twice the weight.
  std::string twice = pipeline();
  std::string second = pipeline();
  // Re-label the second copy's run id: patch every chunk header's run field.
  for (size_t at = sizeof(wf::FileHeader); at < second.size();) {
    wf::ChunkHeader header;
    std::memcpy(&header, second.data() + at, sizeof header);
    header.run = kRun + 1;
    std::memcpy(second.data() + at, &header, sizeof header);
    at += sizeof header + header.size;
  }
  twice += second.substr(sizeof(wf::FileHeader));
  WaitAnalysis a = analyze(twice);
  EXPECT_EQ(a.runs, 2u);
  EXPECT_EQ(a.knots.size(), 2u);
  EXPECT_NEAR(a.runNs, 2e9, 1);
  WaitAnalysisOptions merged;
  merged.mergeRoles = true;
  WaitAnalysis m = analyze(twice, merged);
  ASSERT_EQ(m.knots.size(), 1u);
  EXPECT_NEAR(weightMs(m, "stageB (x2)", "disk 1"), 2400, 1e-6);
  EXPECT_NEAR(m.share(m.edge(vertex(m, "stageB (x2)"), vertex(m, "disk 1"))->weightNs()), 1.2,
              1e-9);
}

// ---- The reader ------------------------------------------------------------

TEST(WaitsReader, ReadsThreadsEpisodesAndTexts) {
  WaitsFile file = readOk(pipeline());
  ASSERT_EQ(file.runs.size(), 1u);
  const WaitRun &run = file.runs[0];
  EXPECT_TRUE(run.hasEnd);
  EXPECT_EQ(run.durationNs(), ms(1000));
  EXPECT_EQ(run.episodes.size(), 200u);
  ASSERT_EQ(run.threads.size(), 2u);
  EXPECT_EQ(run.threads.at(11).name, "stageA");
  EXPECT_EQ(run.threads.at(11).startRoutine, "stage.c:5");
  EXPECT_EQ(run.text(run.episodes[0].line), "stage.c:10");
  EXPECT_TRUE(file.warnings.empty());
}

TEST(WaitsReader, MissingFileSaysHowToRecord) {
  WaitsFile file;
  std::string error;
  EXPECT_FALSE(readWaitsFile("/nonexistent/dir/p.coz.waits", file, error));
  EXPECT_NE(error.find("No such file"), std::string::npos) << error;
  EXPECT_NE(error.find("causal run --waits"), std::string::npos) << error;
}

TEST(WaitsReader, EmptyAndShortFiles) {
  EXPECT_NE(readError("").find("empty"), std::string::npos);
  EXPECT_NE(readError("CAUS").find("too short"), std::string::npos);
}

TEST(WaitsReader, BadMagic) {
  std::string bytes = pipeline();
  bytes[0] = 'X';
  EXPECT_NE(readError(bytes).find("bad magic"), std::string::npos);
}

TEST(WaitsReader, NewerVersionIsRefused) {
  WaitsWriter w(wf::kVersion + 1);
  w.begin(kRun, 0);
  std::string error = readError(w.bytes);
  EXPECT_NE(error.find("newer than this reader"), std::string::npos) << error;
}

TEST(WaitsReader, TruncatedAnywhereIsAnErrorNeverACrash) {
  std::string bytes = pipeline();
  // Every cut inside the file either ends exactly between chunks (read fine)
  // or names a truncated chunk.
  size_t errors = 0;
  for (size_t cut = sizeof(wf::FileHeader) + 1; cut < bytes.size(); cut += 7) {
    WaitsFile file;
    std::string error;
    if (!readWaitsData(std::string_view(bytes).substr(0, cut), "t", file, error)) {
      ++errors;
      EXPECT_NE(error.find("truncated"), std::string::npos) << error;
    }
  }
  EXPECT_GT(errors, 0u);
  std::string error = readError(bytes.substr(0, bytes.size() - 3));
  EXPECT_NE(error.find("truncated chunk"), std::string::npos) << error;
}

TEST(WaitsReader, UnknownChunkTypeIsSkippedWithAWarning) {
  WaitsWriter w;
  w.begin(kRun, 0);
  w.chunk(99, kRun, std::string(24, '\x7f'));
  w.chunk(99, kRun, "x");
  w.episodes(kRun, 5, {w.episode(kRun, ms(1), ms(2), kTimer, wf::WaitKind::Sleep)});
  w.end(kRun, ms(3));
  WaitsFile file = readOk(w.bytes);
  ASSERT_EQ(file.runs.size(), 1u);
  EXPECT_EQ(file.runs[0].episodes.size(), 1u);
  size_t unknown = 0;
  for (const std::string &warning : file.warnings)
    unknown += warning.find("unknown type 99") != std::string::npos;
  EXPECT_EQ(unknown, 1u); // once per type
}

TEST(WaitsReader, CorruptRecordsAreErrorsNamingTheProblem) {
  {
    WaitsWriter w; // an episode that ends before it starts
    w.begin(kRun, 0);
    w.episodes(kRun, 5, {w.episode(kRun, ms(5), ms(2), kTimer, wf::WaitKind::Sleep)});
    EXPECT_NE(readError(w.bytes).find("ends (2000000) before it starts"), std::string::npos);
  }
  {
    WaitsWriter w; // a string id used before it is defined
    w.begin(kRun, 0);
    wf::Episode e = w.episode(kRun, ms(1), ms(2), kTimer, wf::WaitKind::Sleep);
    e.line = 77;
    w.episodes(kRun, 5, {e});
    EXPECT_NE(readError(w.bytes).find("string id 77"), std::string::npos);
  }
  {
    WaitsWriter w; // a chunk of a run that never began
    w.episodes(kRun, 5, {});
    EXPECT_NE(readError(w.bytes).find("no RunBegin"), std::string::npos);
  }
  {
    WaitsWriter w; // count and size disagree
    w.begin(kRun, 0);
    uint32_t head[2] = {5, 1000};
    w.chunk(uint32_t(wf::ChunkType::Episodes), kRun,
            std::string(reinterpret_cast<const char *>(head), sizeof head));
    EXPECT_NE(readError(w.bytes).find("1000 episodes in 0 bytes"), std::string::npos);
  }
  {
    WaitsWriter w; // an unknown wait kind
    w.begin(kRun, 0);
    wf::Episode e = w.episode(kRun, ms(1), ms(2), kTimer, wf::WaitKind::Sleep);
    e.kind = 200;
    w.episodes(kRun, 5, {e});
    EXPECT_NE(readError(w.bytes).find("unknown kind 200"), std::string::npos);
  }
  {
    WaitsWriter w; // a RunBegin of the wrong size
    w.chunk(uint32_t(wf::ChunkType::RunBegin), kRun, "short");
    EXPECT_NE(readError(w.bytes).find("RunBegin chunk of 5 bytes"), std::string::npos);
  }
}

TEST(WaitsReader, ThreadsWithoutThreadChunkAndMissingRunEndAreWarnings) {
  WaitsWriter w;
  w.begin(kRun, ms(100));
  w.episodes(kRun, 5, {w.episode(kRun, ms(101), ms(150), 6, wf::WaitKind::Mutex)});
  WaitsFile file = readOk(w.bytes);
  ASSERT_EQ(file.runs.size(), 1u);
  EXPECT_FALSE(file.runs[0].hasEnd);
  EXPECT_EQ(file.runs[0].durationNs(), ms(50)); // up to the last time seen
  EXPECT_FALSE(file.runs[0].threads.at(5).described);
  std::string all;
  for (const std::string &warning : file.warnings)
    all += warning + "\n";
  EXPECT_NE(all.find("has no RunEnd"), std::string::npos) << all;
  EXPECT_NE(all.find("no Thread chunk"), std::string::npos) << all;
  WaitAnalysis a = analyzeWaits(file, {});
  EXPECT_EQ(a.vertices[vertex(a, "thread [5]")].unexplainedShare(), -1);
}

TEST(WaitsReader, SidecarOfAnotherRunOrBinary) {
  // The profile's run started at realtime 50 s; a sidecar run at 50.1 s
  // matches, one at 500 s does not.
  Profile profile;
  std::string error;
  ASSERT_TRUE(readProfileText("startup\ttime=50000000000\tprofiler=causal\nruntime\ttime=1000\n",
                              "p.coz", profile, ReadOptions(), error))
      << error;
  for (uint64_t realtime : {50100000000ull, 500000000000ull}) {
    WaitsWriter w;
    w.begin(kRun, 0, realtime, 0xABCD);
    w.end(kRun, ms(1));
    WaitsFile file = readOk(w.bytes);
    std::string mismatch = waitsProfileMismatch(file, profile);
    if (realtime == 50100000000ull)
      EXPECT_EQ(mismatch, "");
    else
      EXPECT_NE(mismatch.find("recorded by another run"), std::string::npos) << mismatch;
  }
  // Two runs of different binaries in one sidecar: a warning.
  WaitsWriter w;
  w.begin(1, 0, 0, 0x1111);
  w.begin(2, 0, 0, 0x2222);
  w.end(1, 1);
  w.end(2, 1);
  WaitsFile file = readOk(w.bytes);
  bool warned = false;
  for (const std::string &warning : file.warnings)
    warned = warned || warning.find("2 different binaries") != std::string::npos;
  EXPECT_TRUE(warned);
}

} // namespace
