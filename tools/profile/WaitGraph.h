//===- WaitGraph.h - Wait-for graph, cascaded weights, knots (wPerf) ------===//
//
// The off-CPU analysis of the waits sidecar, after wPerf (Zhou et al., OSDI
// 2018; docs/waits.md "Analysis"):
//
//  * vertices: the program threads of every run and the pseudo-threads that
//    ended waits no program thread ended (timer, each disk, network,
//    unknown); with mergeRoles, threads of one role (same start routine, or
//    same name) are one vertex, across runs too;
//  * edge A->B: the time A waited for B, raised by cascaded re-distribution:
//    while A waits for B and B itself waits for C, that overlap is added to
//    B->C as well (recursively); false wake-ups (woken from a condition
//    variable or futex, waiting again on the same object with no progress) are fused
//    with the wait that follows, so the false waker gets no weight;
//  * an I/O pseudo-thread (disk, network) waits for the threads that use it
//    while it is idle: its idle time is shared among them by the time each
//    spent waiting for it;
//  * knots: strongly connected components with no edge out, found ignoring
//    edges into the timer and unknown pseudo-threads (a sleep or an
//    unexplained wake-up is not a thread one could wait less for); refined
//    by removing the lightest edges until the knot falls apart, then looking
//    for knots again, until a single vertex or a simple cycle remains (or
//    the lightest edge outweighs minEdgeShare of the run time);
//  * background knots (no I/O pseudo-thread, CPU use below one CPU, a thread
//    that mostly sleeps in it) are reported apart, removed, and the rest of
//    the graph searched again.
//
// Weights are nanoseconds; shares divide by the summed duration of the runs.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_PROFILE_WAITGRAPH_H
#define CAUSAL_PROFILE_WAITGRAPH_H

#include "WaitsReader.h"

#include <cstdint>
#include <string>
#include <vector>

namespace causal::profile {

enum class WaitVertexKind { Thread, Timer, Disk, Network, Unknown };
const char *waitVertexKindName(WaitVertexKind kind);

struct WaitVertex {
  WaitVertexKind kind = WaitVertexKind::Thread;
  std::string label;          // what is shown: "name [tid]", "disk 3", "worker (x4)"
  std::string role;           // the merge key (threads) or the pseudo-thread's name
  std::vector<uint32_t> tids; // its threads (one unless merged)
  size_t runs = 0;            // runs it appears in
  // Threads only (sums over merged threads):
  double wallNs = 0, cpuNs = 0, blockedNs = 0, spinNs = 0, sleepNs = 0;
  double unexplainedNs = 0; // wall - cpu - (blocked - spin), at least 0
  bool described = false;   // every thread had its Thread chunk
  uint64_t dropped = 0;
  bool background = false; // sleeps most of its life, little CPU
  // I/O pseudo-threads: the time no thread waited for it.
  double idleNs = 0;
  bool isPseudo() const { return kind != WaitVertexKind::Thread; }
  bool isIo() const { return kind == WaitVertexKind::Disk || kind == WaitVertexKind::Network; }
  /// Share of off-CPU time (wall - cpu) the hooks did not record; -1 if unknown.
  double unexplainedShare() const;
};

struct LineWeight {
  std::string line; // FILE:LINE, or "" when not recorded
  double ns = 0;
};

struct WaitEdge {
  size_t from = 0, to = 0;
  double directNs = 0;   // the waits' own lengths
  double cascadedNs = 0; // added by cascaded re-distribution
  double idleNs = 0;     // an I/O pseudo-thread's idle time given to this user
  uint64_t episodes = 0;
  uint64_t falseWakeups = 0;         // fused waits that named this edge's waker
  std::vector<LineWeight> waitLines; // where `from` blocked, heaviest first
  std::vector<LineWeight> wakeLines; // where `to` woke it, heaviest first
  double weightNs() const { return directNs + cascadedNs + idleNs; }
};

struct WaitKnot {
  std::vector<size_t> vertices; // in the knot as found
  double weightNs = 0;          // its internal edges
  bool background = false;      // reported apart: not a bottleneck
  bool hasIo = false;
  double cpuShare = 0; // its threads' CPU time over the run time (1 = one CPU)
  /// The vertex the others in it wait for most (largest in-weight inside):
  /// in a lock convoy, the holder.
  size_t mostWaitedFor = 0;
  /// After refinement: the smaller knots (or single vertices) it came down to.
  std::vector<std::vector<size_t>> cores;
};

struct WaitAnalysisOptions {
  bool mergeRoles = false;
  double falseWakeupGapNs = -1; // format 1 sidecars' rule; -1: the tunable
  double minEdgeShare = 0;      // refinement also stops when the lightest edge outweighs this
  size_t topLines = 0;          // 0: the tunable
};

struct WaitAnalysis {
  std::vector<WaitVertex> vertices;
  std::vector<WaitEdge> edges; // heaviest first
  std::vector<WaitKnot> knots; // bottleneck knots heaviest first, then background ones
  std::vector<size_t> sinks;   // program threads that wait for no one: CPU-bound
  double runNs = 0;            // the runs' durations summed
  size_t runs = 0;
  uint64_t episodes = 0, falseWakeups = 0;
  bool cascadeTruncated = false;
  std::vector<std::string> notes; // what the analysis had to leave out

  /// The edge from -> to, or null.
  const WaitEdge *edge(size_t from, size_t to) const;
  /// The vertex with this label, or npos.
  size_t vertexNamed(const std::string &label) const;
  double share(double ns) const { return runNs > 0 ? ns / runNs : 0; }
};

WaitAnalysis analyzeWaits(const WaitsFile &waits, const WaitAnalysisOptions &options);

} // namespace causal::profile

#endif
