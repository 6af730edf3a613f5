//===- WaitEffects.h - The causal profile's word on a wait-for edge -------===//
//
// An edge of the wait-for graph from a thread to a pseudo-thread (disk,
// network, timer, unknown) is a set of blocking calls, one per wait line,
// that the runtime can also virtually speed up: the wait target "LINE (KIND
// wait)", KIND the pseudo-thread's (disk -> disk, network -> network, timer
// -> timer, unknown -> other). When the causal profile beside the sidecar
// has experiments on such a target, the edge carries what the analysis
// found for it: the same numbers `causal report` shows for that line (its
// rank, slope, curve at 50 %, verdict of A/B runs), never recomputed here.
// docs/waits.md, "The causal effect of a wait".
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_PROFILE_WAITEFFECTS_H
#define CAUSAL_PROFILE_WAITEFFECTS_H

#include "Analysis.h"
#include "WaitGraph.h"

#include <string>
#include <vector>

namespace causal::profile {

/// The kind of wait target the waits ended by a vertex of this kind are;
/// None for a program thread (its waits are no wait target).
WaitTargetKind waitTargetKindOf(WaitVertexKind kind);

/// What the analysis holds of one wait target. Pointers into the Analysis
/// it came from, which must outlive it.
struct WaitTargetEffect {
  std::string line;   // the edge's wait line, FILE:LINE
  std::string target; // the wait target, "FILE:LINE (KIND wait)"
  size_t rank = 0;    // in the ranking, 1 = top; 0: not ranked
  const LineResult *ranked = nullptr;
  /// Ranked: its point of steepest slope (the one `causal confirm` tests),
  /// and that point's curve point at a 50 % line speedup, if measured.
  const PointResult *point = nullptr;
  const CurvePoint *atHalf = nullptr;
  /// Not ranked: the first of its (line, point) pairs without enough data.
  const NotEnoughData *notEnough = nullptr;
  const Confirmation *confirmation = nullptr; // A/B runs of it, if any
};

/// For an edge whose waker is a pseudo-thread: one entry per wait line of
/// the edge (in its order, heaviest first) whose wait target the analysis
/// ranked or lists without enough data. Empty for an edge to a program
/// thread, or when no line of it was a target of experiments.
std::vector<WaitTargetEffect> waitEdgeEffects(const WaitAnalysis &waits, const WaitEdge &edge,
                                              const Analysis &analysis);

} // namespace causal::profile

#endif
