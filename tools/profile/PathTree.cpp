//===- PathTree.cpp - Calling-context trees of chosen functions -----------===//
#include "PathTree.h"

#include <algorithm>
#include <fnmatch.h>
#include <set>

namespace causal::profile {

namespace {

uint64_t saturatingAdd(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

/// A tree while it is built: children by frame.
struct BuildNode {
  PathMetrics metrics;
  size_t paths = 0;
  std::map<PathFrame, BuildNode> children;
};

PathNode finish(const PathFrame &frame, const BuildNode &built, PathMetric metric) {
  PathNode node;
  node.function = frame.function;
  node.location = frame.location;
  node.metrics = built.metrics;
  node.paths = built.paths;
  node.children.reserve(built.children.size());
  for (const auto &[childFrame, child] : built.children)
    node.children.push_back(finish(childFrame, child, metric));
  std::stable_sort(node.children.begin(), node.children.end(),
                   [metric](const PathNode &a, const PathNode &b) {
                     uint64_t x = a.metrics.get(metric), y = b.metrics.get(metric);
                     if (x != y)
                       return x > y;
                     return a.label() < b.label();
                   });
  return node;
}

CpuSource combine(CpuSource a, CpuSource b) {
  if (a == CpuSource::None)
    return b;
  if (b == CpuSource::None || a == b)
    return a;
  return CpuSource::Mixed;
}

bool matches(const std::string &pattern, const PathFunction &function) {
  return fnmatch(pattern.c_str(), function.displayName().c_str(), 0) == 0 ||
         (!function.symbol.empty() && fnmatch(pattern.c_str(), function.symbol.c_str(), 0) == 0);
}

} // namespace

const char *pathMetricName(PathMetric metric) {
  switch (metric) {
  case PathMetric::Calls:
    return "calls";
  case PathMetric::CpuNs:
    return "cpu-ns";
  case PathMetric::WallNs:
    return "wall-ns";
  case PathMetric::BlockedNs:
    return "blocked-ns";
  case PathMetric::Samples:
    return "samples";
  }
  return "?";
}

bool parsePathMetric(const std::string &text, PathMetric &metric) {
  for (PathMetric m : {PathMetric::Calls, PathMetric::CpuNs, PathMetric::WallNs,
                       PathMetric::BlockedNs, PathMetric::Samples})
    if (text == pathMetricName(m)) {
      metric = m;
      return true;
    }
  return false;
}

const char *cpuSourceName(CpuSource source) {
  switch (source) {
  case CpuSource::None:
    return "none";
  case CpuSource::Measured:
    return "measured";
  case CpuSource::Estimated:
    return "estimated";
  case CpuSource::Mixed:
    return "mixed";
  }
  return "?";
}

uint64_t PathMetrics::get(PathMetric metric) const {
  switch (metric) {
  case PathMetric::Calls:
    return calls;
  case PathMetric::CpuNs:
    return cpuNs;
  case PathMetric::WallNs:
    return wallNs;
  case PathMetric::BlockedNs:
    return blockedNs;
  case PathMetric::Samples:
    return samples;
  }
  return 0;
}

void PathMetrics::add(const PathMetrics &o) {
  calls = saturatingAdd(calls, o.calls);
  recursiveCalls = saturatingAdd(recursiveCalls, o.recursiveCalls);
  cpuNs = saturatingAdd(cpuNs, o.cpuNs);
  wallNs = saturatingAdd(wallNs, o.wallNs);
  blockedNs = saturatingAdd(blockedNs, o.blockedNs);
  samples = saturatingAdd(samples, o.samples);
  threads = saturatingAdd(threads, o.threads);
}

void PathMetrics::add(const PathRecord &path) {
  PathMetrics m;
  m.calls = path.calls;
  m.recursiveCalls = path.recursiveCalls;
  m.cpuNs = path.cpuNs;
  m.wallNs = path.wallNs;
  m.blockedNs = path.blockedNs;
  m.samples = path.samples;
  m.threads = path.threads;
  add(m);
}

std::string PathNode::label(bool withLocation) const {
  std::string text = function.empty() ? kUnknownFunction : function;
  if (withLocation && !location.empty())
    text += " (" + location + ")";
  return text;
}

double FunctionPaths::share(const PathMetrics &value, PathMetric metric) const {
  uint64_t all = total.get(metric);
  return all == 0 ? -1 : double(value.get(metric)) / double(all);
}

PathsAnalysis analyzePaths(const PathsFile &file, const PathsAnalysisOptions &options) {
  PathsAnalysis a;
  a.metric = options.metric;
  if (options.runs.empty()) {
    for (size_t i = 0; i < file.runs.size(); ++i)
      a.runIndices.push_back(i);
  } else {
    std::set<size_t> seen;
    for (size_t i : options.runs) {
      if (i >= file.runs.size())
        a.badRuns.push_back(std::to_string(i + 1));
      else if (seen.insert(i).second)
        a.runIndices.push_back(i);
    }
  }
  a.runs = a.runIndices.size();

  struct Building {
    FunctionPaths function;
    std::map<std::vector<PathFrame>, PathMetrics> paths;
  };
  std::map<std::string, size_t> byKey;
  std::vector<Building> building;
  std::set<std::string> matchedPatterns;
  for (size_t index : a.runIndices) {
    const PathRun &run = file.runs[index];
    CpuSource runCpu = run.cpuEstimated ? CpuSource::Estimated : CpuSource::Measured;
    a.cpu = combine(a.cpu, runCpu);
    if (run.cpuEstimated && a.samplePeriodNs == 0)
      a.samplePeriodNs = run.samplePeriodNs;
    a.timeOneIn = std::max(a.timeOneIn, run.timeOneIn);
    a.walkGapMax = std::max(a.walkGapMax, run.walkGapMax);
    a.walkAuto = a.walkAuto || (run.walkOneIn == 0 && run.walkGapMax > 1);
    a.droppedEntries = saturatingAdd(a.droppedEntries, run.droppedEntries);
    a.truncatedWalks = saturatingAdd(a.truncatedWalks, run.truncatedWalks);
    std::map<uint32_t, size_t> slotOf; // function id -> index in building
    for (const auto &[id, function] : run.functions) {
      bool chosen = options.functions.empty();
      for (const std::string &pattern : options.functions)
        if (matches(pattern, function)) {
          chosen = true;
          matchedPatterns.insert(pattern);
        }
      if (!chosen)
        continue;
      auto [where, inserted] = byKey.emplace(function.key(), building.size());
      if (inserted) {
        building.emplace_back();
        building.back().function.name = function.displayName();
        building.back().function.symbol = function.symbol;
      }
      building[where->second].function.enabled |= function.enabled;
      slotOf[id] = where->second;
    }
    for (const PathRecord &path : run.paths) {
      auto slot = slotOf.find(path.function);
      if (slot == slotOf.end())
        continue;
      Building &b = building[slot->second];
      b.function.cpu = combine(b.function.cpu, runCpu);
      std::vector<PathFrame> frames;
      bool tooDeep = path.frames.size() > kMaxTreeDepth;
      size_t keep = tooDeep ? kMaxTreeDepth : path.frames.size();
      frames.reserve(keep + 1);
      if (path.truncated || tooDeep)
        frames.push_back({kTruncatedFrame, ""});
      frames.insert(frames.end(), path.frames.end() - long(keep), path.frames.end());
      b.paths[frames].add(path);
    }
  }
  for (const std::string &pattern : options.functions)
    if (!matchedPatterns.count(pattern))
      a.unmatchedPatterns.push_back(pattern);

  for (Building &b : building) {
    FunctionPaths &f = b.function;
    BuildNode callers, topDown;
    std::set<std::string> ownLocations;
    for (const auto &[frames, metrics] : b.paths) {
      f.paths.push_back({frames, metrics});
      f.total.add(metrics);
      if (frames.front().function == kTruncatedFrame && frames.front().location.empty())
        ++f.truncatedPaths;
      ownLocations.insert(frames.back().location);
      BuildNode *node = &topDown;
      for (const PathFrame &frame : frames) {
        node = &node->children[frame];
        node->metrics.add(metrics);
        ++node->paths;
      }
      node = &callers;
      for (size_t i = frames.size() - 1; i-- > 0;) {
        node = &node->children[frames[i]];
        node->metrics.add(metrics);
        ++node->paths;
      }
    }
    callers.metrics = topDown.metrics = f.total;
    callers.paths = topDown.paths = f.paths.size();
    PathFrame own{f.name, ownLocations.size() == 1 ? *ownLocations.begin() : ""};
    f.callers = finish(own, callers, options.metric);
    f.topDown = finish({f.name, ""}, topDown, options.metric);
    a.functions.push_back(std::move(f));
  }
  std::stable_sort(a.functions.begin(), a.functions.end(),
                   [&](const FunctionPaths &x, const FunctionPaths &y) {
                     uint64_t p = x.total.get(options.metric), q = y.total.get(options.metric);
                     if (p != q)
                       return p > q;
                     return x.name < y.name;
                   });
  return a;
}

ShownChildren shownChildren(const FunctionPaths &function, const PathNode &node, size_t depth,
                            PathMetric metric, const TreeLimits &limits) {
  ShownChildren result;
  for (const PathNode &child : node.children) {
    double share = function.share(child.metrics, metric);
    bool deep = limits.maxDepth != 0 && depth >= limits.maxDepth;
    bool small = share >= 0 && share < limits.minShare;
    if (deep || small) {
      ++result.hidden;
      result.hiddenSum.add(child.metrics);
    } else {
      result.shown.push_back(&child);
    }
  }
  return result;
}

std::string foldedFrame(const PathFrame &frame, bool withLocation) {
  std::string text = frame.function.empty() ? kUnknownFunction : frame.function;
  if (withLocation && !frame.location.empty())
    text += " (" + frame.location + ")";
  for (char &c : text) {
    if (c == ';')
      c = ':';
    else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      c = ' ';
  }
  return text;
}

std::vector<std::string> foldedLines(const FunctionPaths &function, PathMetric metric,
                                     bool withLocation) {
  // Without locations, paths that differ only in them give the same line:
  // one line with their sum.
  std::map<std::string, uint64_t> values;
  for (const MergedPath &path : function.paths) {
    uint64_t value = path.metrics.get(metric);
    if (value == 0)
      continue;
    std::string line;
    for (const PathFrame &frame : path.frames)
      line += (line.empty() ? "" : ";") + foldedFrame(frame, withLocation);
    uint64_t &sum = values[line];
    sum = saturatingAdd(sum, value);
  }
  std::vector<std::string> lines;
  for (const auto &[stack, value] : values)
    lines.push_back(stack + " " + std::to_string(value));
  return lines;
}

} // namespace causal::profile
