//===- WaitGraph.cpp - Wait-for graph, cascaded weights, knots (wPerf) ----===//
#include "WaitGraph.h"

#include "causal/tunables.h"
#include "causal/waits_format.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

namespace causal::profile {

namespace wf = causal::waits_format;

const char *waitVertexKindName(WaitVertexKind kind) {
  switch (kind) {
  case WaitVertexKind::Thread:
    return "thread";
  case WaitVertexKind::Timer:
    return "timer";
  case WaitVertexKind::Disk:
    return "disk";
  case WaitVertexKind::Network:
    return "network";
  case WaitVertexKind::Unknown:
    return "unknown";
  }
  return "?";
}

double WaitVertex::unexplainedShare() const {
  if (kind != WaitVertexKind::Thread || !described)
    return -1;
  double offCpu = wallNs - cpuNs;
  return offCpu > 0 ? unexplainedNs / offCpu : 0;
}

const WaitEdge *WaitAnalysis::edge(size_t from, size_t to) const {
  for (const WaitEdge &e : edges)
    if (e.from == from && e.to == to)
      return &e;
  return nullptr;
}

size_t WaitAnalysis::vertexNamed(const std::string &label) const {
  for (size_t i = 0; i < vertices.size(); ++i)
    if (vertices[i].label == label)
      return i;
  return size_t(-1);
}

namespace {

/// A wait of one thread after false wake-ups were fused.
struct Segment {
  uint64_t start = 0, end = 0;
  uint32_t waker = 0;
  uint32_t line = 0, wakerLine = 0;
};

struct EdgeBuild {
  double directNs = 0, cascadedNs = 0, idleNs = 0;
  uint64_t episodes = 0, falseWakeups = 0;
  std::map<std::string, double> waitLines, wakeLines;
};

WaitVertexKind pseudoKind(uint32_t id) {
  if (id == wf::kPseudoTimer)
    return WaitVertexKind::Timer;
  if (id == wf::kPseudoNetwork)
    return WaitVertexKind::Network;
  if (id >= wf::kPseudoDiskBase)
    return WaitVertexKind::Disk;
  return WaitVertexKind::Unknown;
}

std::string pseudoName(uint32_t id) {
  switch (pseudoKind(id)) {
  case WaitVertexKind::Timer:
    return "timer";
  case WaitVertexKind::Network:
    return "network";
  case WaitVertexKind::Disk:
    return "disk " + std::to_string(id - wf::kPseudoDiskBase);
  default:
    return id == wf::kPseudoUnknown ? "unknown" : "unknown " + std::to_string(id);
  }
}

/// A thread is not its own waker (a sidecar of an older recorder may say so
/// when the thread was preempted in a lock it had just released): unknown.
uint32_t ownWakeForgotten(uint32_t tid, uint32_t waker) {
  return waker == tid ? uint32_t(wf::kPseudoUnknown) : waker;
}

bool mayWakeFalsely(uint8_t kind) {
  return kind == uint8_t(wf::WaitKind::CondVar) || kind == uint8_t(wf::WaitKind::Futex);
}

class Builder {
public:
  Builder(const WaitsFile &waits, const WaitAnalysisOptions &options, WaitAnalysis &out)
      : waits(waits), options(options), out(out) {
    gapNs = options.falseWakeupGapNs >= 0 ? options.falseWakeupGapNs
                                          : double(CAUSAL_WAITS_FALSE_WAKEUP_GAP_NS);
    topLines = options.topLines ? options.topLines : size_t(CAUSAL_WAITS_TOP_LINES);
  }

  /// |next| is a wait begun again without progress after |woken|: the
  /// recorder says so (format 2: no hooked call between them); a format 1
  /// sidecar says nothing of it, so its gap is the rule.
  bool rewaits(const WaitEpisode &woken, const WaitEpisode &next) const {
    if (waits.version >= 2)
      return next.flags & wf::kEpisodeRewait;
    return double(next.startNs - woken.endNs) <= gapNs;
  }

  void build() {
    out.runs = waits.runs.size();
    for (size_t r = 0; r < waits.runs.size(); ++r)
      buildRun(r);
    finishVertices();
    finishEdges();
    if (out.cascadeTruncated)
      out.notes.push_back("cascaded re-distribution stopped early (more than " +
                          std::to_string(CAUSAL_WAITS_CASCADE_MAX_STEPS) +
                          " steps): cascaded weights are too low");
  }

private:
  const WaitsFile &waits;
  const WaitAnalysisOptions &options;
  WaitAnalysis &out;
  double gapNs = 0;
  size_t topLines = 0;
  std::map<std::string, size_t> vertexByKey;
  std::map<std::pair<size_t, size_t>, EdgeBuild> edgeBuilds;
  std::map<size_t, std::set<size_t>> vertexRuns;
  uint64_t cascadeSteps = 0;

  // Per run, while building it:
  const WaitRun *run = nullptr;
  size_t runIndex = 0;
  std::map<uint32_t, std::vector<Segment>> segments; // by tid, sorted by start
  std::map<uint32_t, std::vector<uint64_t>> maxEnd;  // prefix maximum of end

  std::string roleOf(const WaitThread &thread) const {
    if (!thread.startRoutine.empty())
      return "routine " + thread.startRoutine;
    if (!thread.name.empty())
      return "name " + thread.name;
    return "tid " + std::to_string(thread.tid);
  }

  size_t vertexOf(uint32_t tid) {
    std::string key, label, role;
    WaitVertexKind kind = WaitVertexKind::Thread;
    const WaitThread *thread = nullptr;
    if (wf::isPseudoThread(tid)) {
      kind = pseudoKind(tid);
      role = pseudoName(tid);
      key = "p " + role;
      label = role;
    } else {
      auto found = run->threads.find(tid);
      if (found != run->threads.end())
        thread = &found->second;
      std::string name = thread && !thread->name.empty() ? thread->name : "thread";
      role = thread ? roleOf(*thread) : "tid " + std::to_string(tid);
      key = "t " + role;
      label = name + " [" + std::to_string(tid) + "]";
      if (!options.mergeRoles)
        key = "t " + std::to_string(tid);
    }
    if (!options.mergeRoles && waits.runs.size() > 1) {
      key += " r" + std::to_string(runIndex);
      label += " (run " + std::to_string(runIndex + 1) + ")";
    }
    auto [where, inserted] = vertexByKey.emplace(key, out.vertices.size());
    if (inserted) {
      WaitVertex vertex;
      vertex.kind = kind;
      vertex.role = role;
      vertex.label = label;
      vertex.described = kind == WaitVertexKind::Thread;
      out.vertices.push_back(std::move(vertex));
    }
    size_t index = where->second;
    WaitVertex &vertex = out.vertices[index];
    bool newInRun = vertexRuns[index].insert(runIndex).second;
    if (kind == WaitVertexKind::Thread &&
        (newInRun || std::find(vertex.tids.begin(), vertex.tids.end(), tid) == vertex.tids.end())) {
      vertex.tids.push_back(tid);
      vertex.described = vertex.described && thread && thread->described;
      if (options.mergeRoles && vertex.tids.size() > 1) {
        std::string name = thread && !thread->name.empty() ? thread->name : "thread";
        vertex.label = name + " (x" + std::to_string(vertex.tids.size()) + ")";
      }
    }
    return index;
  }

  EdgeBuild &edgeOf(size_t from, size_t to) { return edgeBuilds[{from, to}]; }

  void addWait(uint32_t tid, const Segment &segment, uint64_t start, uint64_t end, bool cascaded) {
    size_t from = vertexOf(tid), to = vertexOf(segment.waker);
    EdgeBuild &e = edgeOf(from, to);
    double length = double(end - start);
    (cascaded ? e.cascadedNs : e.directNs) += length;
    if (!cascaded)
      ++e.episodes;
    e.waitLines[run->text(segment.line)] += length;
    e.wakeLines[run->text(segment.wakerLine)] += length;
  }

  /// wPerf's cascade (its Figure 4): weight the edge of this (clipped) wait,
  /// then the waker's own waits inside [start, end), recursively. \p path:
  /// the threads on the chain so far (a cycle of overlapping waits would
  /// otherwise never end).
  void cascade(uint32_t tid, const Segment &segment, uint64_t start, uint64_t end, unsigned depth,
               std::vector<uint32_t> &path) {
    if (cascadeSteps >= CAUSAL_WAITS_CASCADE_MAX_STEPS) {
      out.cascadeTruncated = true;
      return;
    }
    ++cascadeSteps;
    addWait(tid, segment, start, end, depth > 0);
    uint32_t waker = segment.waker;
    if (wf::isPseudoThread(waker) || depth + 1 >= CAUSAL_WAITS_CASCADE_MAX_DEPTH ||
        std::find(path.begin(), path.end(), waker) != path.end())
      return;
    auto found = segments.find(waker);
    if (found == segments.end())
      return;
    const std::vector<Segment> &theirs = found->second;
    const std::vector<uint64_t> &ends = maxEnd[waker];
    // Segments starting before `end`, walked back while some may still reach past `start`.
    size_t upper =
        size_t(std::lower_bound(theirs.begin(), theirs.end(), end,
                                [](const Segment &s, uint64_t value) { return s.start < value; }) -
               theirs.begin());
    std::vector<size_t> overlapping;
    for (size_t i = upper; i-- > 0;) {
      if (ends[i] <= start)
        break;
      if (theirs[i].end > start && theirs[i].start < end)
        overlapping.push_back(i);
    }
    path.push_back(waker);
    for (auto i = overlapping.rbegin(); i != overlapping.rend(); ++i) {
      const Segment &s = theirs[*i];
      uint64_t clippedStart = std::max(s.start, start), clippedEnd = std::min(s.end, end);
      if (clippedEnd > clippedStart)
        cascade(waker, s, clippedStart, clippedEnd, depth + 1, path);
    }
    path.pop_back();
  }

  void buildRun(size_t index) {
    run = &waits.runs[index];
    runIndex = index;
    segments.clear();
    maxEnd.clear();
    out.runNs += double(run->durationNs());
    out.episodes += run->episodes.size();

    std::map<uint32_t, std::vector<const WaitEpisode *>> byThread;
    std::map<uint32_t, double> spinNs, sleepNs;
    for (const WaitEpisode &episode : run->episodes) {
      byThread[episode.tid].push_back(&episode);
      double length = double(episode.endNs - episode.startNs);
      if (episode.kind == uint8_t(wf::WaitKind::Spin))
        spinNs[episode.tid] += length;
      if (episode.waker == wf::kPseudoTimer)
        sleepNs[episode.tid] += length;
    }
    // Fuse false wake-ups with the wait that follows them.
    for (auto &[tid, list] : byThread) {
      std::stable_sort(list.begin(), list.end(), [](const WaitEpisode *a, const WaitEpisode *b) {
        return a->startNs < b->startNs;
      });
      std::vector<Segment> &mine = segments[tid];
      for (size_t i = 0; i < list.size(); ++i) {
        const WaitEpisode *first = list[i];
        Segment segment{first->startNs, first->endNs, ownWakeForgotten(tid, first->waker),
                        first->line, first->wakerLine};
        while (i + 1 < list.size()) {
          const WaitEpisode *current = list[i], *next = list[i + 1];
          bool isFalse = mayWakeFalsely(current->kind) &&
                         current->end == uint8_t(wf::WaitEnd::Woken) &&
                         next->kind == current->kind && next->object == current->object &&
                         next->startNs >= current->endNs && rewaits(*current, *next);
          if (!isFalse)
            break;
          EdgeBuild &e = edgeOf(vertexOf(tid), vertexOf(current->waker));
          ++e.falseWakeups;
          ++out.falseWakeups;
          segment.end = next->endNs;
          segment.waker = ownWakeForgotten(tid, next->waker);
          segment.wakerLine = next->wakerLine;
          ++i;
        }
        mine.push_back(segment);
      }
      std::vector<uint64_t> &ends = maxEnd[tid];
      uint64_t high = 0;
      for (const Segment &s : mine)
        ends.push_back(high = std::max(high, s.end));
    }
    // Cascaded re-distribution of every wait.
    for (const auto &[tid, mine] : segments)
      for (const Segment &segment : mine) {
        std::vector<uint32_t> path{tid};
        cascade(tid, segment, segment.start, segment.end, 0, path);
      }
    // I/O pseudo-threads: idle time, shared among their users.
    std::map<uint32_t, std::vector<std::pair<uint64_t, uint64_t>>> busy;
    std::map<uint32_t, std::map<uint32_t, double>> users;
    for (const auto &[tid, mine] : segments)
      for (const Segment &s : mine) {
        WaitVertexKind kind =
            wf::isPseudoThread(s.waker) ? pseudoKind(s.waker) : WaitVertexKind::Thread;
        if (kind != WaitVertexKind::Disk && kind != WaitVertexKind::Network)
          continue;
        busy[s.waker].push_back({s.start, s.end});
        users[s.waker][tid] += double(s.end - s.start);
      }
    for (auto &[device, intervals] : busy) {
      std::sort(intervals.begin(), intervals.end());
      double busyNs = 0;
      uint64_t coveredTo = 0;
      for (auto [start, end] : intervals) {
        start = std::max(start, coveredTo);
        if (end > start) {
          busyNs += double(end - start);
          coveredTo = end;
        }
      }
      double idle = std::max(0.0, double(run->durationNs()) - busyNs);
      size_t deviceVertex = vertexOf(device);
      out.vertices[deviceVertex].idleNs += idle;
      double total = 0;
      for (const auto &[tid, ns] : users[device])
        total += ns;
      for (const auto &[tid, ns] : users[device])
        if (total > 0)
          edgeOf(deviceVertex, vertexOf(tid)).idleNs += idle * ns / total;
    }
    // Threads: times, and what the hooks could not explain.
    for (const auto &[tid, thread] : run->threads) {
      size_t index = vertexOf(tid);
      WaitVertex &vertex = out.vertices[index];
      double wall = double(thread.endNs - thread.startNs);
      vertex.wallNs += wall;
      vertex.cpuNs += double(thread.cpuNs);
      vertex.blockedNs += double(thread.blockedNs);
      vertex.spinNs += spinNs[tid];
      vertex.sleepNs += sleepNs[tid];
      vertex.dropped += thread.dropped;
      double offCpuRecorded = double(thread.blockedNs) - spinNs[tid];
      vertex.unexplainedNs += std::max(0.0, wall - double(thread.cpuNs) - offCpuRecorded);
    }
  }

  void finishVertices() {
    for (size_t i = 0; i < out.vertices.size(); ++i) {
      WaitVertex &vertex = out.vertices[i];
      vertex.runs = vertexRuns[i].size();
      if (vertex.kind == WaitVertexKind::Thread && vertex.described && vertex.wallNs > 0)
        vertex.background = vertex.sleepNs >= CAUSAL_WAITS_BACKGROUND_SLEEP_SHARE * vertex.wallNs &&
                            vertex.cpuNs <= CAUSAL_WAITS_BACKGROUND_CPU_SHARE * vertex.wallNs;
    }
  }

  std::vector<LineWeight> topOf(const std::map<std::string, double> &lines) const {
    std::vector<LineWeight> list;
    for (const auto &[line, ns] : lines)
      list.push_back({line, ns});
    std::stable_sort(list.begin(), list.end(),
                     [](const LineWeight &a, const LineWeight &b) { return a.ns > b.ns; });
    if (list.size() > topLines)
      list.resize(topLines);
    return list;
  }

  void finishEdges() {
    for (const auto &[key, build] : edgeBuilds) {
      WaitEdge e;
      e.from = key.first;
      e.to = key.second;
      e.directNs = build.directNs;
      e.cascadedNs = build.cascadedNs;
      e.idleNs = build.idleNs;
      e.episodes = build.episodes;
      e.falseWakeups = build.falseWakeups;
      e.waitLines = topOf(build.waitLines);
      e.wakeLines = topOf(build.wakeLines);
      out.edges.push_back(std::move(e));
    }
    std::stable_sort(out.edges.begin(), out.edges.end(), [](const WaitEdge &a, const WaitEdge &b) {
      return a.weightNs() > b.weightNs();
    });
  }
};

/// The subgraph knots are searched in: edges of positive weight between
/// vertices that are in it.
struct Subgraph {
  std::vector<std::vector<std::pair<size_t, double>>> out; // per vertex: (to, weight)
  std::vector<bool> in;
};

/// Strongly connected components of the vertices in the subgraph (Tarjan,
/// iterative). Returns the component index of each vertex (-1 if outside).
std::vector<long> components(const Subgraph &graph, size_t &count) {
  size_t n = graph.in.size();
  std::vector<long> component(n, -1), low(n, 0), order(n, -1);
  std::vector<bool> onStack(n, false);
  std::vector<size_t> stack;
  long counter = 0;
  count = 0;
  for (size_t root = 0; root < n; ++root) {
    if (!graph.in[root] || order[root] >= 0)
      continue;
    std::vector<std::pair<size_t, size_t>> frames{{root, 0}}; // (vertex, next edge)
    order[root] = low[root] = counter++;
    stack.push_back(root);
    onStack[root] = true;
    while (!frames.empty()) {
      auto &[v, next] = frames.back();
      if (next < graph.out[v].size()) {
        size_t w = graph.out[v][next++].first;
        if (!graph.in[w])
          continue;
        if (order[w] < 0) {
          order[w] = low[w] = counter++;
          stack.push_back(w);
          onStack[w] = true;
          frames.push_back({w, 0});
        } else if (onStack[w]) {
          low[v] = std::min(low[v], order[w]);
        }
        continue;
      }
      if (low[v] == order[v]) {
        size_t w;
        do {
          w = stack.back();
          stack.pop_back();
          onStack[w] = false;
          component[w] = long(count);
        } while (w != v);
        ++count;
      }
      size_t done = v;
      frames.pop_back();
      if (!frames.empty())
        low[frames.back().first] = std::min(low[frames.back().first], low[done]);
    }
  }
  return component;
}

/// The components with no edge out of them (knots and sinks), each as its vertices.
std::vector<std::vector<size_t>> closedComponents(const Subgraph &graph) {
  size_t count = 0;
  std::vector<long> component = components(graph, count);
  std::vector<bool> leaves(count, false);
  std::vector<std::vector<size_t>> members(count);
  for (size_t v = 0; v < graph.in.size(); ++v) {
    if (!graph.in[v])
      continue;
    members[size_t(component[v])].push_back(v);
    for (auto [w, weight] : graph.out[v])
      if (graph.in[w] && component[w] != component[v])
        leaves[size_t(component[v])] = true;
  }
  std::vector<std::vector<size_t>> closed;
  for (size_t c = 0; c < count; ++c)
    if (!leaves[c])
      closed.push_back(members[c]);
  return closed;
}

bool hasSelfLoop(const Subgraph &graph, size_t v) {
  for (auto [w, weight] : graph.out[v])
    if (w == v)
      return true;
  return false;
}

/// The subgraph restricted to \p members.
Subgraph restrict(const Subgraph &graph, const std::vector<size_t> &members) {
  Subgraph sub;
  sub.in.assign(graph.in.size(), false);
  sub.out.resize(graph.in.size());
  for (size_t v : members)
    sub.in[v] = true;
  for (size_t v : members)
    for (auto [w, weight] : graph.out[v])
      if (sub.in[w])
        sub.out[v].push_back({w, weight});
  return sub;
}

bool isSimpleCycle(const Subgraph &graph, const std::vector<size_t> &members) {
  std::map<size_t, int> inDegree;
  for (size_t v : members) {
    if (graph.out[v].size() != 1 || graph.out[v][0].first == v)
      return false;
    ++inDegree[graph.out[v][0].first];
  }
  for (size_t v : members)
    if (inDegree[v] != 1)
      return false;
  return true;
}

/// wPerf's refinement: drop the lightest edges until the knot is no longer
/// strongly connected, then look for knots in what is left, and refine those.
void refine(const Subgraph &knot, const std::vector<size_t> &members, double minEdgeNs,
            std::vector<std::vector<size_t>> &cores) {
  double lightest = -1;
  for (size_t v : members)
    for (auto [w, weight] : knot.out[v])
      if (w != v && (lightest < 0 || weight < lightest))
        lightest = weight;
  if (members.size() <= 1 || isSimpleCycle(knot, members) ||
      (minEdgeNs > 0 && lightest > minEdgeNs)) {
    cores.push_back(members);
    return;
  }
  Subgraph trimmed = knot;
  while (true) {
    // Remove the lightest edge between two different vertices.
    size_t bestV = size_t(-1), bestIndex = 0;
    double best = 0;
    for (size_t v : members)
      for (size_t i = 0; i < trimmed.out[v].size(); ++i) {
        auto [w, weight] = trimmed.out[v][i];
        if (w != v && (bestV == size_t(-1) || weight < best)) {
          bestV = v;
          bestIndex = i;
          best = weight;
        }
      }
    if (bestV == size_t(-1))
      break;
    trimmed.out[bestV].erase(trimmed.out[bestV].begin() + long(bestIndex));
    size_t count = 0;
    components(trimmed, count);
    if (count > 1)
      break;
  }
  for (const std::vector<size_t> &closed : closedComponents(trimmed))
    refine(restrict(trimmed, closed), closed, minEdgeNs, cores);
}

} // namespace

WaitAnalysis analyzeWaits(const WaitsFile &waits, const WaitAnalysisOptions &options) {
  WaitAnalysis analysis;
  Builder(waits, options, analysis).build();

  // The graph knots are searched in: no timer, no unknown waker.
  size_t n = analysis.vertices.size();
  Subgraph graph;
  graph.out.resize(n);
  graph.in.assign(n, false);
  for (size_t v = 0; v < n; ++v) {
    WaitVertexKind kind = analysis.vertices[v].kind;
    graph.in[v] = kind != WaitVertexKind::Timer && kind != WaitVertexKind::Unknown;
  }
  for (const WaitEdge &e : analysis.edges)
    if (e.weightNs() > 0 && graph.in[e.from] && graph.in[e.to])
      graph.out[e.from].push_back({e.to, e.weightNs()});

  auto describe = [&](const std::vector<size_t> &members) {
    WaitKnot knot;
    knot.vertices = members;
    std::sort(knot.vertices.begin(), knot.vertices.end());
    bool anyBackground = false, allBackground = true;
    double cpu = 0;
    std::map<size_t, double> inWeight;
    for (size_t v : members) {
      const WaitVertex &vertex = analysis.vertices[v];
      knot.hasIo = knot.hasIo || vertex.isIo();
      if (vertex.kind == WaitVertexKind::Thread) {
        cpu += vertex.cpuNs;
        anyBackground = anyBackground || vertex.background;
        allBackground = allBackground && vertex.background;
      }
      for (auto [w, weight] : graph.out[v])
        if (std::find(members.begin(), members.end(), w) != members.end()) {
          knot.weightNs += weight;
          inWeight[w] += weight;
        }
    }
    knot.mostWaitedFor = knot.vertices.front();
    for (auto [v, weight] : inWeight)
      if (weight > inWeight[knot.mostWaitedFor])
        knot.mostWaitedFor = v;
    knot.cpuShare = analysis.share(cpu);
    knot.background = !knot.hasIo && anyBackground && (allBackground || knot.cpuShare < 1.0);
    return knot;
  };

  std::vector<WaitKnot> background;
  std::vector<WaitKnot> knots;
  while (true) {
    knots.clear();
    analysis.sinks.clear();
    bool removed = false;
    for (const std::vector<size_t> &closed : closedComponents(graph)) {
      if (closed.size() == 1 && !hasSelfLoop(graph, closed[0])) {
        const WaitVertex &vertex = analysis.vertices[closed[0]];
        if (vertex.kind == WaitVertexKind::Thread && !vertex.background)
          analysis.sinks.push_back(closed[0]);
        continue;
      }
      WaitKnot knot = describe(closed);
      if (knot.background) {
        for (size_t v : closed)
          graph.in[v] = false;
        background.push_back(std::move(knot));
        removed = true;
      } else {
        knots.push_back(std::move(knot));
      }
    }
    if (!removed)
      break;
  }
  double minEdgeNs = options.minEdgeShare > 0 ? options.minEdgeShare * analysis.runNs : 0;
  for (WaitKnot &knot : knots)
    refine(restrict(graph, knot.vertices), knot.vertices, minEdgeNs, knot.cores);
  for (WaitKnot &knot : background)
    knot.cores.push_back(knot.vertices);
  auto heavier = [](const WaitKnot &a, const WaitKnot &b) { return a.weightNs > b.weightNs; };
  std::stable_sort(knots.begin(), knots.end(), heavier);
  std::stable_sort(background.begin(), background.end(), heavier);
  analysis.knots = std::move(knots);
  for (WaitKnot &knot : background)
    analysis.knots.push_back(std::move(knot));
  std::sort(analysis.sinks.begin(), analysis.sinks.end());
  return analysis;
}

} // namespace causal::profile
