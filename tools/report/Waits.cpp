//===- Waits.cpp - Render the wait-for graph: text, JSON, DOT, HTML -------===//
//
// Output side of `causal waits` and of the waits section of `causal report
// --html`. Everything renders one WaitAnalysis (tools/profile/WaitGraph.h);
// the views show the same numbers. docs/waits.md, "Reading the output".
//
//===----------------------------------------------------------------------===//
#include "Report.h"

#include "causal/waits_format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

namespace causal::report {

using profile::WaitAnalysis;
using profile::WaitEdge;
using profile::WaitKnot;
using profile::WaitVertex;

namespace {

/// "12.3 %" (no sign: weights are never negative).
std::string share(double fraction) {
  if (!std::isfinite(fraction))
    return "n/a";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f %%", fraction * 100);
  return buffer;
}

std::string seconds(double ns) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3f s", ns / 1e9);
  return buffer;
}

std::string lineOrUnknown(const std::string &line) { return line.empty() ? "(unknown)" : line; }

std::string lineList(const WaitAnalysis &a, const std::vector<profile::LineWeight> &lines) {
  std::string text;
  for (const profile::LineWeight &l : lines) {
    if (!text.empty())
      text += ", ";
    text += lineOrUnknown(l.line) + " (" + share(a.share(l.ns)) + ")";
  }
  return text;
}

std::string labelsOf(const WaitAnalysis &a, const std::vector<size_t> &vertices) {
  std::string text;
  for (size_t v : vertices)
    text += (text.empty() ? "" : ", ") + a.vertices[v].label;
  return text;
}

bool contains(const std::vector<size_t> &set, size_t v) {
  return std::find(set.begin(), set.end(), v) != set.end();
}

std::string intervalText(const profile::Interval &interval, bool asPercent) {
  if (!interval.valid)
    return "[no interval]";
  char buffer[64];
  if (asPercent)
    return "[" + percent(interval.low) + ", " + percent(interval.high) + "]";
  std::snprintf(buffer, sizeof buffer, "[%+.3f, %+.3f]", interval.low, interval.high);
  return buffer;
}

/// What the causal profile measured for one wait target of an edge, in
/// words: "+25.0% [..] at 50%, slope +0.500 [..] (tp, rank 2)", or why it
/// has no curve; then the verdict of A/B runs, if any.
std::string effectText(const profile::WaitTargetEffect &effect) {
  std::string text;
  if (effect.ranked && effect.point) {
    const profile::PointResult &p = *effect.point;
    char slope[32];
    std::snprintf(slope, sizeof slope, "%+.3f", p.slope);
    if (effect.atHalf)
      text = percent(effect.atHalf->programSpeedup) + " " +
             intervalText(effect.atHalf->interval, true) + " at 50%, ";
    text += "slope " + std::string(slope) + " " + intervalText(p.slopeInterval, false) + " (" +
            p.point + ", rank " + std::to_string(effect.rank) + ")";
  } else if (effect.notEnough) {
    text = std::string("no curve: ") + profile::shortfallText(effect.notEnough->reason) + " (" +
           effect.notEnough->point + ")";
  }
  if (const profile::Confirmation *c = effect.confirmation) {
    text += (text.empty() ? "" : "; ") + std::string("A/B runs: ") +
            profile::verdictName(c->verdict) + " " + percent(c->estimate) + " " +
            intervalText(c->interval, true) + " at " +
            std::to_string(int(std::lround(c->speedup * 100))) + "%";
  }
  return text;
}

void edgeText(std::ostream &out, const WaitAnalysis &a, const WaitEdge &e, const char *indent,
              const WaitsContext &context) {
  char head[512];
  std::snprintf(head, sizeof head, "%s%-28s -> %-28s %9s", indent, a.vertices[e.from].label.c_str(),
                a.vertices[e.to].label.c_str(), share(a.share(e.weightNs())).c_str());
  out << head;
  std::vector<std::string> parts;
  if (e.directNs > 0 && (e.cascadedNs > 0 || e.idleNs > 0))
    parts.push_back(share(a.share(e.directNs)) + " waited");
  if (e.cascadedNs > 0)
    parts.push_back(share(a.share(e.cascadedNs)) + " cascaded");
  if (e.idleNs > 0)
    parts.push_back(share(a.share(e.idleNs)) + " device idle, waiting for new I/O");
  if (e.falseWakeups)
    parts.push_back(std::to_string(e.falseWakeups) + " false wake-ups left out");
  if (!parts.empty()) {
    out << "  (";
    for (size_t i = 0; i < parts.size(); ++i)
      out << (i ? ", " : "") << parts[i];
    out << ")";
  }
  out << "\n";
  if (e.directNs > 0 || e.cascadedNs > 0) {
    out << indent << "    waits at " << lineList(a, e.waitLines) << "\n";
    if (!a.vertices[e.to].isPseudo()) // a device or a timer wakes from no line
      out << indent << "    woken at " << lineList(a, e.wakeLines) << "\n";
  }
  if (context.causal)
    for (const profile::WaitTargetEffect &effect : profile::waitEdgeEffects(a, e, *context.causal))
      out << indent << "    effect of " << effect.target << ": " << effectText(effect) << "\n";
}

void writeIntervalJson(std::ostream &out, const profile::Interval &interval) {
  if (!interval.valid)
    out << "null";
  else
    out << "[" << jsonNumber(interval.low) << "," << jsonNumber(interval.high) << "]";
}

/// ,"causal_effects":[...] of an edge to a pseudo-thread (docs/waits.md).
void writeEffectsJson(std::ostream &out, const WaitAnalysis &a, const WaitEdge &e,
                      const profile::Analysis &causal) {
  if (!a.vertices[e.to].isPseudo())
    return;
  out << ",\"causal_effects\":[";
  bool first = true;
  for (const profile::WaitTargetEffect &effect : profile::waitEdgeEffects(a, e, causal)) {
    out << (first ? "" : ",") << "{\"line\":\"" << jsonEscape(effect.line) << "\",\"target\":\""
        << jsonEscape(effect.target) << "\",\"rank\":";
    first = false;
    if (effect.rank)
      out << effect.rank;
    else
      out << "null";
    const profile::PointResult *p = effect.point;
    out << ",\"point\":";
    if (p)
      out << "\"" << jsonEscape(p->point) << "\"";
    else if (effect.notEnough)
      out << "\"" << jsonEscape(effect.notEnough->point) << "\"";
    else
      out << "null";
    out << ",\"slope\":" << jsonNumber(p ? p->slope : NAN) << ",\"slope_ci\":";
    writeIntervalJson(out, p ? p->slopeInterval : profile::Interval());
    out << ",\"program_speedup_at_50\":"
        << jsonNumber(effect.atHalf ? effect.atHalf->programSpeedup : NAN) << ",\"ci_at_50\":";
    writeIntervalJson(out, effect.atHalf ? effect.atHalf->interval : profile::Interval());
    out << ",\"max_impact\":" << jsonNumber(p ? p->maxImpact : NAN)
        << ",\"max_impact_speedup\":" << jsonNumber(p ? p->maxImpactSpeedup : NAN)
        << ",\"not_enough_data\":";
    if (effect.notEnough)
      out << "\"" << profile::shortfallText(effect.notEnough->reason) << "\"";
    else
      out << "null";
    out << ",\"verdict\":";
    if (effect.confirmation)
      out << "\"" << profile::verdictName(effect.confirmation->verdict) << "\"";
    else
      out << "null";
    out << "}";
  }
  out << "]";
}

std::string jsonLines(const WaitAnalysis &a, const std::vector<profile::LineWeight> &lines) {
  std::string text = "[";
  for (size_t i = 0; i < lines.size(); ++i)
    text += std::string(i ? "," : "") + "{\"line\":\"" + jsonEscape(lines[i].line) +
            "\",\"ns\":" + jsonNumber(lines[i].ns) +
            ",\"share\":" + jsonNumber(a.share(lines[i].ns)) + "}";
  return text + "]";
}

std::string jsonIds(const std::vector<size_t> &ids) {
  std::string text = "[";
  for (size_t i = 0; i < ids.size(); ++i)
    text += (i ? "," : "") + std::to_string(ids[i]);
  return text + "]";
}

std::string dotEscape(const std::string &text) {
  std::string escaped;
  for (char c : text) {
    if (c == '"' || c == '\\')
      escaped += '\\';
    if (c == '\n')
      escaped += "\\n";
    else
      escaped += c;
  }
  return escaped;
}

/// The knot (index) each vertex is in, for colouring; -1 if none.
std::vector<long> knotOf(const WaitAnalysis &a) {
  std::vector<long> knot(a.vertices.size(), -1);
  for (size_t k = 0; k < a.knots.size(); ++k)
    for (size_t v : a.knots[k].vertices)
      if (knot[v] < 0)
        knot[v] = long(k);
  return knot;
}

} // namespace

void renderWaitsText(std::ostream &out, const WaitAnalysis &a, const WaitsContext &context,
                     const WaitsTextOptions &options) {
  size_t threads = 0;
  for (const WaitVertex &v : a.vertices)
    threads += v.isPseudo() ? 0 : v.tids.size();
  out << "causal waits: " << context.sidecar << ": " << a.runs
      << (a.runs == 1 ? " run, " : " runs, ") << threads
      << (threads == 1 ? " thread, " : " threads, ") << a.episodes << " waits over "
      << seconds(a.runNs) << " of run time";
  if (a.falseWakeups)
    out << ", " << a.falseWakeups << " false wake-ups fused";
  out << (context.mergeRoles ? " (threads merged by role)" : "") << "\n";
  out << "Weights are shares of the run time (wPerf's cascaded weights: a wait nested in another "
         "counts for both).\n\n";

  std::set<std::pair<size_t, size_t>> shown;
  size_t rank = 0;
  bool anyBottleneck = false;
  for (const WaitKnot &knot : a.knots) {
    if (knot.background)
      continue;
    anyBottleneck = true;
    out << "Knot " << ++rank << ": " << share(a.share(knot.weightNs)) << "  {"
        << labelsOf(a, knot.vertices) << "}\n";
    for (const std::vector<size_t> &core : knot.cores)
      if (core.size() < knot.vertices.size())
        out << "  refined to: {" << labelsOf(a, core) << "}\n";
    out << "  waited for most: " << a.vertices[knot.mostWaitedFor].label << "\n";
    for (const WaitEdge &e : a.edges)
      if (contains(knot.vertices, e.from) && contains(knot.vertices, e.to) && e.weightNs() > 0) {
        edgeText(out, a, e, "  ", context);
        shown.insert({e.from, e.to});
      }
    out << "\n";
  }
  if (!anyBottleneck)
    out << "No knot: no group of threads waits only within itself (see the edges below: the "
           "waiting ends in the timer, unknown wakers or threads that wait for no one).\n\n";

  for (const WaitKnot &knot : a.knots)
    if (knot.background) {
      out << "Background knot (its threads mostly sleep; not a bottleneck): "
          << share(a.share(knot.weightNs)) << "  {" << labelsOf(a, knot.vertices) << "}\n";
      for (const WaitEdge &e : a.edges)
        if (contains(knot.vertices, e.from) && contains(knot.vertices, e.to) && e.weightNs() > 0) {
          edgeText(out, a, e, "  ", context);
          shown.insert({e.from, e.to});
        }
      out << "\n";
    }

  std::vector<const WaitEdge *> others;
  for (const WaitEdge &e : a.edges) // weightless edges only for their false wake-ups
    if (!shown.count({e.from, e.to}) && (e.weightNs() > 0 || e.falseWakeups > 0))
      others.push_back(&e);
  if (!others.empty()) {
    out << "Other edges:\n";
    size_t limit = options.top ? std::min(options.top, others.size()) : others.size();
    for (size_t i = 0; i < limit; ++i)
      edgeText(out, a, *others[i], "  ", context);
    if (limit < others.size())
      out << "  ... " << others.size() - limit << " lighter edges (--top 0 shows all)\n";
    out << "\n";
  }

  if (!a.sinks.empty())
    out << "Waiting for no other thread (their own CPU time is what others wait for): "
        << labelsOf(a, a.sinks) << "\n\n";

  out << "Threads:\n";
  char row[512];
  std::snprintf(row, sizeof row, "  %-30s %9s %7s %9s %7s %12s\n", "thread", "wall", "CPU",
                "recorded", "asleep", "unexplained");
  out << row;
  for (const WaitVertex &v : a.vertices) {
    if (v.isPseudo())
      continue;
    double wall = v.wallNs > 0 ? v.wallNs : 0;
    auto of = [&](double ns) { return wall > 0 ? share(ns / wall) : std::string("n/a"); };
    double unexplained = v.unexplainedShare();
    std::snprintf(
        row, sizeof row, "  %-30s %9s %7s %9s %7s %12s%s\n", v.label.c_str(),
        v.described ? seconds(wall).c_str() : "n/a", v.described ? of(v.cpuNs).c_str() : "n/a",
        v.described ? of(v.blockedNs).c_str() : "n/a", of(v.sleepNs).c_str(),
        unexplained < 0 ? "n/a" : share(unexplained).c_str(), v.background ? "  background" : "");
    out << row;
  }
  out << "  (recorded: time in hooked blocking calls; unexplained: the share of its off-CPU time "
         "no hook recorded)\n";
  for (const WaitVertex &v : a.vertices)
    if (v.isIo())
      out << "  " << v.label << ": idle " << share(a.share(v.idleNs)) << " of the run time\n";
  for (const std::string &note : a.notes)
    out << "note: " << note << "\n";
}

void writeWaitsJson(std::ostream &out, const WaitAnalysis &a, const WaitsContext &context) {
  out << "{\"sidecar\":\"" << jsonEscape(context.sidecar) << "\",\"runs\":" << a.runs
      << ",\"run_ns\":" << jsonNumber(a.runNs) << ",\"episodes\":" << a.episodes
      << ",\"false_wakeups\":" << a.falseWakeups
      << ",\"merge_roles\":" << (context.mergeRoles ? "true" : "false")
      << ",\"cascade_truncated\":" << (a.cascadeTruncated ? "true" : "false") << ",\"vertices\":[";
  for (size_t i = 0; i < a.vertices.size(); ++i) {
    const WaitVertex &v = a.vertices[i];
    double unexplained = v.unexplainedShare();
    out << (i ? "," : "") << "{\"id\":" << i << ",\"label\":\"" << jsonEscape(v.label)
        << "\",\"kind\":\"" << profile::waitVertexKindName(v.kind) << "\",\"role\":\""
        << jsonEscape(v.role) << "\",\"tids\":[";
    for (size_t t = 0; t < v.tids.size(); ++t)
      out << (t ? "," : "") << v.tids[t];
    out << "],\"wall_ns\":" << jsonNumber(v.wallNs) << ",\"cpu_ns\":" << jsonNumber(v.cpuNs)
        << ",\"blocked_ns\":" << jsonNumber(v.blockedNs)
        << ",\"sleep_ns\":" << jsonNumber(v.sleepNs) << ",\"idle_ns\":" << jsonNumber(v.idleNs)
        << ",\"unexplained_share\":"
        << (unexplained < 0 ? std::string("null") : jsonNumber(unexplained))
        << ",\"background\":" << (v.background ? "true" : "false") << ",\"dropped\":" << v.dropped
        << "}";
  }
  out << "],\"edges\":[";
  for (size_t i = 0; i < a.edges.size(); ++i) {
    const WaitEdge &e = a.edges[i];
    out << (i ? "," : "") << "{\"from\":" << e.from << ",\"to\":" << e.to << ",\"from_label\":\""
        << jsonEscape(a.vertices[e.from].label) << "\",\"to_label\":\""
        << jsonEscape(a.vertices[e.to].label) << "\",\"weight_ns\":" << jsonNumber(e.weightNs())
        << ",\"share\":" << jsonNumber(a.share(e.weightNs()))
        << ",\"direct_ns\":" << jsonNumber(e.directNs)
        << ",\"cascaded_ns\":" << jsonNumber(e.cascadedNs)
        << ",\"idle_ns\":" << jsonNumber(e.idleNs) << ",\"episodes\":" << e.episodes
        << ",\"false_wakeups\":" << e.falseWakeups
        << ",\"wait_lines\":" << jsonLines(a, e.waitLines)
        << ",\"wake_lines\":" << jsonLines(a, e.wakeLines);
    if (context.causal)
      writeEffectsJson(out, a, e, *context.causal);
    out << "}";
  }
  out << "],\"knots\":[";
  for (size_t k = 0; k < a.knots.size(); ++k) {
    const WaitKnot &knot = a.knots[k];
    out << (k ? "," : "") << "{\"rank\":" << k + 1 << ",\"vertices\":" << jsonIds(knot.vertices)
        << ",\"labels\":[";
    for (size_t i = 0; i < knot.vertices.size(); ++i)
      out << (i ? "," : "") << "\"" << jsonEscape(a.vertices[knot.vertices[i]].label) << "\"";
    out << "],\"weight_ns\":" << jsonNumber(knot.weightNs)
        << ",\"share\":" << jsonNumber(a.share(knot.weightNs))
        << ",\"background\":" << (knot.background ? "true" : "false")
        << ",\"has_io\":" << (knot.hasIo ? "true" : "false")
        << ",\"cpu_share\":" << jsonNumber(knot.cpuShare)
        << ",\"most_waited_for\":" << knot.mostWaitedFor << ",\"cores\":[";
    for (size_t c = 0; c < knot.cores.size(); ++c)
      out << (c ? "," : "") << jsonIds(knot.cores[c]);
    out << "]}";
  }
  out << "],\"sinks\":" << jsonIds(a.sinks) << ",\"notes\":[";
  for (size_t i = 0; i < a.notes.size(); ++i)
    out << (i ? "," : "") << "\"" << jsonEscape(a.notes[i]) << "\"";
  out << "],\"warnings\":[";
  for (size_t i = 0; i < context.warnings.size(); ++i)
    out << (i ? "," : "") << "\"" << jsonEscape(context.warnings[i]) << "\"";
  out << "]}";
}

void renderWaitsJson(std::ostream &out, const WaitAnalysis &a, const WaitsContext &context) {
  writeWaitsJson(out, a, context);
  out << "\n";
}

void renderWaitsDot(std::ostream &out, const WaitAnalysis &a, const WaitsContext &context) {
  std::vector<long> knot = knotOf(a);
  out << "// causal waits --dot: " << dotEscape(context.sidecar)
      << "; edge labels are shares of the run time\n";
  out << "digraph waits {\n  rankdir=LR;\n  node [shape=box, fontname=\"monospace\"];\n";
  for (size_t k = 0; k < a.knots.size(); ++k) {
    out << "  subgraph cluster_knot" << k + 1 << " {\n    label=\""
        << (a.knots[k].background ? "background knot " : "knot ") << k + 1 << ": "
        << share(a.share(a.knots[k].weightNs))
        << "\";\n    color=" << (a.knots[k].background ? "gray" : "red") << ";\n";
    for (size_t v : a.knots[k].vertices)
      if (knot[v] == long(k))
        out << "    v" << v << ";\n";
    out << "  }\n";
  }
  for (size_t v = 0; v < a.vertices.size(); ++v) {
    const WaitVertex &vertex = a.vertices[v];
    out << "  v" << v << " [label=\"" << dotEscape(vertex.label) << "\"";
    if (vertex.isPseudo())
      out << ", shape=ellipse, style=dashed";
    if (vertex.background)
      out << ", color=gray, fontcolor=gray";
    out << "];\n";
  }
  for (const WaitEdge &e : a.edges) {
    if (e.weightNs() <= 0)
      continue;
    double width = 1 + 4 * std::min(1.0, a.share(e.weightNs()));
    char penwidth[32];
    std::snprintf(penwidth, sizeof penwidth, "%.2f", width);
    out << "  v" << e.from << " -> v" << e.to << " [label=\"" << share(a.share(e.weightNs()))
        << "\", penwidth=" << penwidth;
    if (e.idleNs > 0 && e.directNs == 0)
      out << ", style=dashed";
    out << "];\n";
  }
  out << "}\n";
}

void renderEpisodesJson(std::ostream &out, const profile::WaitsFile &waits) {
  namespace wf = causal::waits_format;
  out << "{\"sidecar\":\"" << jsonEscape(waits.path) << "\",\"runs\":[";
  for (size_t r = 0; r < waits.runs.size(); ++r) {
    const profile::WaitRun &run = waits.runs[r];
    char hash[32];
    std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(run.binaryHash));
    out << (r ? "," : "") << "\n{\"id\":" << run.id << ",\"pid\":" << run.pid << ",\"program\":\""
        << jsonEscape(run.program) << "\",\"binary_hash\":\"" << hash
        << "\",\"start_ns\":" << run.startNs << ",\"end_ns\":" << run.endNs
        << ",\"realtime_ns\":" << run.realtimeNs
        << ",\"has_end\":" << (run.hasEnd ? "true" : "false") << ",\"dropped\":" << run.dropped
        << ",\"threads\":[";
    size_t i = 0;
    for (const auto &[tid, t] : run.threads)
      out << (i++ ? "," : "") << "\n {\"tid\":" << tid << ",\"name\":\"" << jsonEscape(t.name)
          << "\",\"start_routine\":\"" << jsonEscape(t.startRoutine)
          << "\",\"parent_tid\":" << t.parentTid << ",\"start_ns\":" << t.startNs
          << ",\"end_ns\":" << t.endNs << ",\"cpu_ns\":" << t.cpuNs
          << ",\"blocked_ns\":" << t.blockedNs << ",\"dropped\":" << t.dropped
          << ",\"described\":" << (t.described ? "true" : "false") << "}";
    out << "],\"episodes\":[";
    for (size_t e = 0; e < run.episodes.size(); ++e) {
      const profile::WaitEpisode &ep = run.episodes[e];
      std::string waker;
      if (wf::isPseudoThread(ep.waker)) {
        waker = ep.waker == wf::kPseudoTimer     ? "timer"
                : ep.waker == wf::kPseudoNetwork ? "network"
                : ep.waker >= wf::kPseudoDiskBase
                    ? "disk " + std::to_string(ep.waker - wf::kPseudoDiskBase)
                    : "unknown";
      } else {
        auto found = run.threads.find(ep.waker);
        waker = found != run.threads.end() ? found->second.name : "";
      }
      out << (e ? "," : "") << "\n {\"tid\":" << ep.tid << ",\"start_ns\":" << ep.startNs
          << ",\"end_ns\":" << ep.endNs << ",\"kind\":\"" << profile::waitKindName(ep.kind)
          << "\",\"end\":\"" << profile::waitEndName(ep.end) << "\",\"object\":" << ep.object
          << ",\"line\":\"" << jsonEscape(run.text(ep.line)) << "\",\"waker\":" << ep.waker
          << ",\"waker_name\":\"" << jsonEscape(waker) << "\",\"waker_line\":\""
          << jsonEscape(run.text(ep.wakerLine)) << "\"}";
    }
    out << "]}";
  }
  out << "],\"warnings\":[";
  for (size_t i = 0; i < waits.warnings.size(); ++i)
    out << (i ? "," : "") << "\"" << jsonEscape(waits.warnings[i]) << "\"";
  out << "]}\n";
}

std::string waitsHtmlSection(const WaitAnalysis &a, const std::string &problem,
                             const profile::Analysis *causal) {
  std::string html = "<h2 style=\"font-size:1em\" id=\"waits\">What the threads wait for</h2>\n";
  if (!problem.empty())
    return html + "<p id=\"waits-missing\">" + xmlEscape(problem) + "</p>\n";
  // The vertices on a circle, knot members next to each other; edges as
  // arcs (so that A->B and B->A do not overlap) with an arrowhead, their
  // width and label from the weight. Only the 40 heaviest edges are drawn.
  std::vector<size_t> order;
  std::vector<bool> placed(a.vertices.size(), false);
  for (const WaitKnot &knot : a.knots)
    for (size_t v : knot.vertices)
      if (!placed[v]) {
        placed[v] = true;
        order.push_back(v);
      }
  for (size_t v = 0; v < a.vertices.size(); ++v)
    if (!placed[v])
      order.push_back(v);
  std::vector<long> knot = knotOf(a);
  size_t n = order.size();
  double radius = std::max(140.0, double(n) * 28.0);
  double width = 2 * radius + 340, height = 2 * radius + 100;
  double cx = width / 2, cy = height / 2;
  std::vector<double> x(a.vertices.size()), y(a.vertices.size());
  for (size_t i = 0; i < n; ++i) {
    double angle = n == 1 ? 0 : 2 * M_PI * double(i) / double(n) - M_PI / 2;
    x[order[i]] = cx + radius * std::cos(angle);
    y[order[i]] = cy + radius * std::sin(angle);
  }
  char buffer[1024];
  std::snprintf(buffer, sizeof buffer,
                "<svg id=\"waits-graph\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
                "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-label=\"wait-for "
                "graph\">\n<defs><marker id=\"waits-arrow\" viewBox=\"0 0 10 10\" refX=\"10\" "
                "refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\">"
                "<path d=\"M0,0 L10,5 L0,10 z\" fill=\"#555\"/></marker></defs>\n",
                width, height, width, height);
  html += buffer;
  size_t drawn = 0;
  for (const WaitEdge &e : a.edges) {
    if (e.weightNs() <= 0 || drawn >= 40)
      continue;
    ++drawn;
    double s = a.share(e.weightNs());
    std::string title = a.vertices[e.from].label + " waits for " + a.vertices[e.to].label + ": " +
                        share(s) + " of the run time";
    bool inKnot = knot[e.from] >= 0 && knot[e.from] == knot[e.to];
    const char *colour =
        inKnot ? (a.knots[size_t(knot[e.from])].background ? "#999" : "#c62828") : "#555";
    double stroke = 1 + 5 * std::min(1.0, s);
    if (e.from == e.to) {
      std::snprintf(buffer, sizeof buffer,
                    "<g class=\"wait-edge\" data-from=\"%zu\" data-to=\"%zu\"><title>%s</title>"
                    "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"18\" fill=\"none\" stroke=\"%s\" "
                    "stroke-width=\"%.1f\"/><text x=\"%.1f\" y=\"%.1f\" font-size=\"10\">%s</text>"
                    "</g>\n",
                    e.from, e.to, xmlEscape(title).c_str(), x[e.from], y[e.from] - 22, colour,
                    stroke, x[e.from] + 20, y[e.from] - 38, share(s).c_str());
      html += buffer;
      continue;
    }
    // A quadratic arc bent to the left of the direction of travel; ends
    // pulled back so that the arrowhead stays outside the vertex's box.
    double x1 = x[e.from], y1 = y[e.from], x2 = x[e.to], y2 = y[e.to];
    double dx = x2 - x1, dy = y2 - y1, length = std::max(1.0, std::hypot(dx, dy));
    double mx = (x1 + x2) / 2 - dy / length * 30, my = (y1 + y2) / 2 + dx / length * 30;
    auto pull = [](double fx, double fy, double tx, double ty, double by, double &ox, double &oy) {
      double d = std::max(1.0, std::hypot(tx - fx, ty - fy));
      ox = fx + (tx - fx) * by / d;
      oy = fy + (ty - fy) * by / d;
    };
    double sx, sy, ex, ey;
    pull(x1, y1, mx, my, 16, sx, sy);
    pull(x2, y2, mx, my, 20, ex, ey);
    std::snprintf(buffer, sizeof buffer,
                  "<g class=\"wait-edge\" data-from=\"%zu\" data-to=\"%zu\"><title>%s</title>"
                  "<path d=\"M%.1f,%.1f Q%.1f,%.1f %.1f,%.1f\" fill=\"none\" stroke=\"%s\" "
                  "stroke-width=\"%.1f\"%s marker-end=\"url(#waits-arrow)\"/>"
                  "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"%s\">%s</text></g>\n",
                  e.from, e.to, xmlEscape(title).c_str(), sx, sy, mx, my, ex, ey, colour, stroke,
                  e.idleNs > 0 && e.directNs == 0 ? " stroke-dasharray=\"5 3\"" : "", mx, my,
                  colour, share(s).c_str());
    html += buffer;
  }
  for (size_t v = 0; v < a.vertices.size(); ++v) {
    const WaitVertex &vertex = a.vertices[v];
    bool inBottleneck = knot[v] >= 0 && !a.knots[size_t(knot[v])].background;
    const char *fill = vertex.isPseudo() ? "#eef3fb" : inBottleneck ? "#fde8e8" : "#ffffff";
    const char *stroke = inBottleneck ? "#c62828" : vertex.background ? "#aaa" : "#555";
    std::string label = vertex.label + (vertex.background ? " (background)" : "");
    double boxWidth = 12 + 6.2 * double(label.size());
    std::snprintf(buffer, sizeof buffer,
                  "<g class=\"wait-vertex\" data-id=\"%zu\" data-kind=\"%s\"><rect x=\"%.1f\" "
                  "y=\"%.1f\" width=\"%.1f\" height=\"20\" rx=\"%d\" fill=\"%s\" stroke=\"%s\"/>"
                  "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" font-family=\"monospace\" "
                  "text-anchor=\"middle\">%s</text></g>\n",
                  v, profile::waitVertexKindName(vertex.kind), x[v] - boxWidth / 2, y[v] - 10,
                  boxWidth, vertex.isPseudo() ? 10 : 2, fill, stroke, x[v], y[v] + 4,
                  xmlEscape(label).c_str());
    html += buffer;
  }
  html += "</svg>\n<table id=\"waits-knots\"><tr><th>knot</th><th>weight</th><th>threads</th>"
          "<th>refined to</th><th>waited for most</th></tr>\n";
  for (size_t k = 0; k < a.knots.size(); ++k) {
    const WaitKnot &kn = a.knots[k];
    std::string cores;
    for (const std::vector<size_t> &core : kn.cores)
      cores += (cores.empty() ? "{" : ", {") + labelsOf(a, core) + "}";
    html += "<tr><td>" + std::string(kn.background ? "background " : "") + std::to_string(k + 1) +
            "</td><td>" + share(a.share(kn.weightNs)) + "</td><td>" +
            xmlEscape(labelsOf(a, kn.vertices)) + "</td><td>" + xmlEscape(cores) + "</td><td>" +
            xmlEscape(a.vertices[kn.mostWaitedFor].label) + "</td></tr>\n";
  }
  if (a.knots.empty())
    html += "<tr><td colspan=\"5\">no knot</td></tr>\n";
  html += "</table>\n<table id=\"waits-edges\"><tr><th>waiter</th><th>waits for</th>"
          "<th>weight</th><th>waits at</th><th>woken at</th>" +
          std::string(causal ? "<th>causal effect</th>" : "") + "</tr>\n";
  for (const WaitEdge &e : a.edges) {
    if (e.weightNs() <= 0)
      continue;
    html += "<tr><td>" + xmlEscape(a.vertices[e.from].label) + "</td><td>" +
            xmlEscape(a.vertices[e.to].label) + "</td><td>" + share(a.share(e.weightNs())) +
            "</td><td>" + xmlEscape(lineList(a, e.waitLines)) + "</td><td>" +
            xmlEscape(lineList(a, e.wakeLines)) + "</td>";
    if (causal) {
      std::string effects;
      for (const profile::WaitTargetEffect &effect : profile::waitEdgeEffects(a, e, *causal))
        effects += (effects.empty() ? "" : "; ") + effect.target + ": " + effectText(effect);
      html += "<td>" + xmlEscape(effects) + "</td>";
    }
    html += "</tr>\n";
  }
  html += "</table>\n";
  return html;
}

} // namespace causal::report
