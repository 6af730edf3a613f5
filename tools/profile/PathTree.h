//===- PathTree.h - Calling-context trees of chosen functions -------------===//
//
// The analysis of the paths sidecar (PathsReader.h): per chosen function,
// its calling contexts over the selected runs merged into trees (frames are
// the same when their function and location texts are), in both directions:
//
//   callers  the root is the function itself, its children its immediate
//            callers, theirs their callers...: which caller makes it matter;
//   top-down the root holds the function's totals, its children are the
//            outermost frames, down to the function itself in the leaves.
//
// Each node has the sums of the paths through it and, against the
// function's totals, their shares. A path whose walk stopped early
// (kPathTruncated) gets the pseudo-frame "[truncated]" as its outermost
// frame, so that it does not merge with paths that reach the stack's base.
// Folded lines (flame graph tools' input) come from the same merged paths.
// The views (tools/report/Paths.cpp) compute no numbers of their own.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_PROFILE_PATHTREE_H
#define CAUSAL_PROFILE_PATHTREE_H

#include "PathsReader.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace causal::profile {

/// What trees are sorted by and folded lines count.
enum class PathMetric { Calls, CpuNs, WallNs, BlockedNs, Samples };
/// "calls", "cpu-ns", "wall-ns", "blocked-ns", "samples".
const char *pathMetricName(PathMetric metric);
bool parsePathMetric(const std::string &text, PathMetric &metric);

/// The pseudo-frame above a truncated path, and the name of a frame whose
/// function is unknown (outside instrumented images).
inline constexpr const char *kTruncatedFrame = "[truncated]";
inline constexpr const char *kUnknownFunction = "[unknown]";
/// The deepest path the trees keep: a deeper one (only a damaged or
/// unusual file has one; the runtime's walks are far shorter) keeps its
/// innermost kMaxTreeDepth frames under a kTruncatedFrame, so that every
/// walk over a tree stays within a small stack.
inline constexpr size_t kMaxTreeDepth = 1024;

struct PathMetrics {
  uint64_t calls = 0, recursiveCalls = 0, cpuNs = 0, wallNs = 0, blockedNs = 0, samples = 0;
  /// Threads that took the path (of a merged path: summed over the runs,
  /// which are other processes). Summed over paths in a tree's node, where
  /// a thread that took two paths counts twice: the views show it per path.
  uint64_t threads = 0;
  uint64_t get(PathMetric metric) const;
  void add(const PathMetrics &other); // saturating
  void add(const PathRecord &path);
};

struct PathNode {
  std::string function; // "" for unknown (kUnknownFunction in views)
  std::string location; // "" for unknown
  PathMetrics metrics;
  size_t paths = 0;               // distinct merged paths through the node
  std::vector<PathNode> children; // sorted by the analysis' metric, heaviest first

  /// "function (location)", or "function" when the location is unknown or
  /// \p withLocation is false.
  std::string label(bool withLocation = true) const;
};

/// Where a function's CPU times come from.
enum class CpuSource {
  None,      // no path
  Measured,  // every run used the thread CPU clock (--paths-cpu-clock)
  Estimated, // none did: samples x sample period
  Mixed,     // some did
};
const char *cpuSourceName(CpuSource source); // "none", "measured", "estimated", "mixed"

/// One distinct path after merging the runs: frames outermost first (the
/// pseudo-frame first when truncated), the function's own frame last.
struct MergedPath {
  std::vector<PathFrame> frames;
  PathMetrics metrics;
};

struct FunctionPaths {
  std::string name;     // PathFunction::displayName of its first run
  std::string symbol;   // linkage name ("" if none)
  bool enabled = false; // in any selected run
  PathMetrics total;
  size_t truncatedPaths = 0; // merged paths with the pseudo-frame
  CpuSource cpu = CpuSource::None;
  PathNode callers; // root: the function itself
  PathNode topDown; // root: the function's totals (location ""), children outermost frames
  std::vector<MergedPath> paths; // sorted by frames

  /// \p value as a fraction of the function's total of \p metric; -1 when
  /// that total is 0.
  double share(const PathMetrics &value, PathMetric metric) const;
};

struct PathsAnalysisOptions {
  PathMetric metric = PathMetric::Calls;
  /// fnmatch(3) patterns matched against the function's name and linkage
  /// name; empty: every function.
  std::vector<std::string> functions;
  /// Indices into PathsFile::runs; empty: every run.
  std::vector<size_t> runs;
};

struct PathsAnalysis {
  PathMetric metric = PathMetric::Calls;
  size_t runs = 0;                      // selected
  std::vector<size_t> runIndices;       // which
  std::vector<FunctionPaths> functions; // heaviest first by the metric, then by name
  CpuSource cpu = CpuSource::None;      // over the selected runs
  uint64_t samplePeriodNs = 0;          // of the first estimated run (0: none)
  uint32_t timeOneIn = 1;               // the largest PathRun::timeOneIn of the selected runs
  uint32_t walkGapMax = 1;              // the largest PathRun::walkGapMax of the selected runs
  bool walkAuto = false;                // a run chose its gaps itself (walk_one_in 0) and sampled
  uint64_t droppedEntries = 0, truncatedWalks = 0;
  std::vector<std::string> unmatchedPatterns; // PathsAnalysisOptions::functions that matched none
  std::vector<std::string> badRuns;           // run numbers (1-based) out of range
};

PathsAnalysis analyzePaths(const PathsFile &file, const PathsAnalysisOptions &options);

/// Which children a tree view shows: those at most \p maxDepth levels below
/// the root (0: no limit) whose share of the function's total of the
/// metric is at least \p minShare.
struct TreeLimits {
  size_t maxDepth = 0;
  double minShare = 0;
};
struct ShownChildren {
  std::vector<const PathNode *> shown;
  size_t hidden = 0;     // children left out (by share or depth)
  PathMetrics hiddenSum; // their sums
};
/// \p depth: the depth of \p node (the root is 0).
ShownChildren shownChildren(const FunctionPaths &function, const PathNode &node, size_t depth,
                            PathMetric metric, const TreeLimits &limits);

/// The folded lines of \p function: one per merged path whose value of
/// \p metric is not 0, "frame;frame;...;function VALUE", outermost first,
/// sorted by text (lines that come out the same, as without locations,
/// are one line with their sum). A frame is foldedFrame(...).
std::vector<std::string> foldedLines(const FunctionPaths &function, PathMetric metric,
                                     bool withLocation);
/// A frame for a folded line: "function (FILE:LINE)" (or "function"),
/// kUnknownFunction for an unknown function; ';' becomes ':' and control
/// characters (newlines, tabs) become spaces, so that a line stays one line
/// of ';'-separated frames with its count after the last space.
std::string foldedFrame(const PathFrame &frame, bool withLocation);

} // namespace causal::profile

#endif
