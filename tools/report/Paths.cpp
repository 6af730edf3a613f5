//===- Paths.cpp - Render call-path trees: text, JSON, folded, HTML -------===//
//
// Output side of `causal paths report` and of the call-paths section of
// `causal report --html`. Everything renders one PathsAnalysis
// (tools/profile/PathTree.h); the views show the same numbers.
// docs/paths.md, "Reading paths (report)".
//
//===----------------------------------------------------------------------===//
#include "Report.h"

#include "causal/tunables.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace causal::report {

using profile::CpuSource;
using profile::FunctionPaths;
using profile::PathMetric;
using profile::PathMetrics;
using profile::PathNode;
using profile::PathsAnalysis;
using profile::PathsFile;

namespace {

/// Version of the JSON below (docs/paths.md); bumped when a field changes
/// meaning or goes away.
constexpr int kPathsJsonVersion = 1;

std::string shareText(double fraction) {
  if (fraction < 0 || !std::isfinite(fraction))
    return "n/a";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f %%", fraction * 100);
  return buffer;
}

/// A duration with a unit that keeps it short: "850 ns", "12.5 us",
/// "3.20 ms", "1.234 s".
std::string duration(uint64_t ns) {
  char buffer[32];
  if (ns < 1000)
    std::snprintf(buffer, sizeof buffer, "%llu ns", static_cast<unsigned long long>(ns));
  else if (ns < 1000000)
    std::snprintf(buffer, sizeof buffer, "%.1f us", double(ns) / 1e3);
  else if (ns < 1000000000)
    std::snprintf(buffer, sizeof buffer, "%.2f ms", double(ns) / 1e6);
  else
    std::snprintf(buffer, sizeof buffer, "%.3f s", double(ns) / 1e9);
  return buffer;
}

const char *metricWords(PathMetric metric) {
  switch (metric) {
  case PathMetric::Calls:
    return "calls";
  case PathMetric::CpuNs:
    return "CPU time";
  case PathMetric::WallNs:
    return "wall time";
  case PathMetric::BlockedNs:
    return "blocked time";
  case PathMetric::Samples:
    return "samples";
  }
  return "?";
}

/// The column header of the share of \p metric.
std::string shareHeader(PathMetric metric) {
  switch (metric) {
  case PathMetric::Calls:
    return "% calls";
  case PathMetric::CpuNs:
    return "% cpu";
  case PathMetric::WallNs:
    return "% wall";
  case PathMetric::BlockedNs:
    return "% blocked";
  case PathMetric::Samples:
    return "% samples";
  }
  return "%";
}

const char *cpuNote(CpuSource source) {
  switch (source) {
  case CpuSource::Estimated:
    return " (estimated from samples)";
  case CpuSource::Mixed:
    return " (partly estimated from samples)";
  default:
    return "";
  }
}

std::string plural(uint64_t n, const char *one, const char *many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

/// "1 run (pid 4242, ./prog)" or "3 runs".
std::string runsText(const PathsAnalysis &a, const PathsFile &file) {
  std::string text = plural(a.runs, "run", "runs");
  if (a.runs == 1) {
    const profile::PathRun &run = file.runs[a.runIndices[0]];
    text += " (pid " + std::to_string(run.pid);
    if (!run.program.empty())
      text += ", " + run.program;
    text += ")";
  }
  return text;
}

std::string totalsText(const FunctionPaths &f) {
  if (f.paths.empty())
    return f.enabled ? "no calls recorded (enabled, never called)"
                     : "no calls recorded (not enabled in the runs read)";
  std::string text = plural(f.total.calls, "call", "calls");
  if (f.total.recursiveCalls)
    text += " (+" + std::to_string(f.total.recursiveCalls) + " recursive)";
  text += ", cpu " + duration(f.total.cpuNs) + cpuNote(f.cpu) + ", wall " +
          duration(f.total.wallNs) + ", blocked " + duration(f.total.blockedNs) + ", " +
          plural(f.total.samples, "sample", "samples") + ", " +
          plural(f.paths.size(), "path", "paths");
  if (f.truncatedPaths)
    text += " (" + std::to_string(f.truncatedPaths) + " " + profile::kTruncatedFrame + ")";
  return text;
}

struct TextRow {
  size_t depth = 0;
  std::string label;
  const PathMetrics *metrics = nullptr; // null: a "hidden" line
  PathMetrics hidden;
  size_t hiddenCount = 0;
};

void collectRows(const FunctionPaths &f, const PathNode &node, size_t depth, PathMetric metric,
                 const profile::TreeLimits &limits, std::vector<TextRow> &rows) {
  TextRow row;
  row.depth = depth;
  row.label = node.label();
  row.metrics = &node.metrics;
  rows.push_back(row);
  profile::ShownChildren children = profile::shownChildren(f, node, depth, metric, limits);
  for (const PathNode *child : children.shown)
    collectRows(f, *child, depth + 1, metric, limits, rows);
  if (children.hidden) {
    TextRow more;
    more.depth = depth + 1;
    more.hiddenCount = children.hidden;
    more.hidden = children.hiddenSum;
    rows.push_back(more);
  }
}

void writeMetricsJson(std::ostream &out, const FunctionPaths &f, const PathMetrics &m) {
  out << "\"calls\":" << m.calls << ",\"recursive_calls\":" << m.recursiveCalls
      << ",\"cpu_ns\":" << m.cpuNs << ",\"wall_ns\":" << m.wallNs
      << ",\"blocked_ns\":" << m.blockedNs << ",\"samples\":" << m.samples << ",\"shares\":{";
  bool first = true;
  for (PathMetric metric : {PathMetric::Calls, PathMetric::CpuNs, PathMetric::WallNs,
                            PathMetric::BlockedNs, PathMetric::Samples}) {
    double share = f.share(m, metric);
    out << (first ? "" : ",") << "\"" << profile::pathMetricName(metric)
        << "\":" << (share < 0 ? std::string("null") : jsonNumber(share));
    first = false;
  }
  out << "}";
}

void writeNodeJson(std::ostream &out, const FunctionPaths &f, const PathNode &node, size_t depth,
                   PathMetric metric, const profile::TreeLimits &limits) {
  out << "{\"function\":\"" << jsonEscape(node.function) << "\",\"location\":\""
      << jsonEscape(node.location) << "\",\"paths\":" << node.paths << ",";
  writeMetricsJson(out, f, node.metrics);
  profile::ShownChildren children = profile::shownChildren(f, node, depth, metric, limits);
  out << ",\"children\":[";
  for (size_t i = 0; i < children.shown.size(); ++i) {
    out << (i ? "," : "");
    writeNodeJson(out, f, *children.shown[i], depth + 1, metric, limits);
  }
  out << "],\"hidden_children\":" << children.hidden << "}";
}

void htmlNode(std::string &html, const FunctionPaths &f, const PathNode &node, size_t depth,
              PathMetric metric, size_t &budget) {
  std::string numbers = plural(node.metrics.calls, "call", "calls") + " (" +
                        shareText(f.share(node.metrics, PathMetric::Calls)) + "), cpu " +
                        duration(node.metrics.cpuNs) + ", wall " + duration(node.metrics.wallNs) +
                        ", blocked " + duration(node.metrics.blockedNs) + ", " +
                        plural(node.metrics.samples, "sample", "samples");
  std::string label = "<code>" + xmlEscape(node.label()) +
                      "</code> <span class=\"paths-numbers\">" + numbers + "</span>";
  double share = f.share(node.metrics, metric);
  std::string bar = "<span class=\"paths-bar\" style=\"width:" +
                    std::to_string(int(std::lround(std::max(0.0, share) * 80))) + "px\"></span>";
  if (budget)
    --budget;
  if (node.children.empty()) {
    html += "<li class=\"paths-leaf\">" + bar + label + "</li>\n";
    return;
  }
  html += std::string("<li><details") + (depth < 2 ? " open" : "") + "><summary>" + bar + label +
          "</summary>\n<ul>\n";
  size_t left = 0;
  for (const PathNode &child : node.children) {
    if (budget == 0) {
      ++left;
      continue;
    }
    htmlNode(html, f, child, depth + 1, metric, budget);
  }
  if (left)
    html += "<li class=\"paths-more\">... " +
            plural(left, "more caller or callee", "more callers or callees") +
            " (the page shows at most 2,000 nodes a tree; `causal paths report` shows all)</li>\n";
  html += "</ul></details></li>\n";
}

} // namespace

// How often the stack was walked, when not at every entry.
std::string walkedText(const PathsAnalysis &a) {
  std::string gap = std::to_string(a.walkGapMax);
  if (a.walkAuto)
    return "each thread walked the stack at every entry of a function entered less often than " +
           std::to_string(CAUSAL_PATHS_WALK_BUDGET_PERMILLE * 1000000ull /
                          CAUSAL_PATHS_WALK_COST_NS) +
           " times a second, else at 1 entry in up to " + gap + " after its first " +
           std::to_string(CAUSAL_PATHS_AUTO_EXACT_WALKS);
  return "each thread walked the stack at a function's first " +
         std::to_string(CAUSAL_PATHS_EXACT_WALKS) + " entries, then at 1 entry in " + gap +
         " on average";
}

void renderPathsText(std::ostream &out, const PathsAnalysis &a, const PathsFile &file,
                     const PathsViewOptions &options) {
  size_t paths = 0;
  for (const FunctionPaths &f : a.functions)
    paths += f.paths.size();
  out << "causal paths: " << file.path << ": " << runsText(a, file) << ", "
      << plural(a.functions.size(), "chosen function", "chosen functions") << ", "
      << plural(paths, "path", "paths") << "; trees sorted by " << metricWords(a.metric) << "\n";
  if (a.cpu == CpuSource::Estimated || a.cpu == CpuSource::Mixed) {
    out << "CPU times " << (a.cpu == CpuSource::Mixed ? "of some runs " : "")
        << "are estimated from samples (samples x " << duration(a.samplePeriodNs) << "): "
        << (a.cpu == CpuSource::Mixed ? "those runs"
            : a.runs == 1             ? "the run"
                                      : "the runs")
        << " did not read the CPU clock (`causal run --paths-cpu-clock` does).\n";
  }
  if (a.walkGapMax > 1)
    out << "Paths are estimates: " << walkedText(a)
        << ", each walked entry standing for the entries since the last "
        << "(`causal run --paths-walk-one-in 1` walks every entry); each function's calls are "
        << "exact, its paths' calls, times and samples are estimates, and only samples inside "
        << "walked entries are seen, so those of short calls (and the CPU times estimated from "
        << "them) are coarse.\n";
  else if (a.timeOneIn > 1)
    out << "Wall times" << (a.cpu == CpuSource::Measured ? " and CPU times" : "")
        << " are estimates: each thread timed a path's first " << CAUSAL_PATHS_EXACT_TIMED_CALLS
        << " calls, then 1 call in " << a.timeOneIn
        << " at random (`causal run --paths-time-one-in 1` times every call); "
        << "calls, samples and the time blocked are exact.\n";
  if (a.truncatedWalks)
    out << plural(a.truncatedWalks, "walk", "walks")
        << " stopped before the stack's base: their paths start with " << profile::kTruncatedFrame
        << ".\n";
  for (const FunctionPaths &f : a.functions) {
    out << "\n" << f.name;
    if (!f.symbol.empty() && f.symbol != f.name)
      out << "  [" << f.symbol << "]";
    out << "\n  " << totalsText(f) << "\n";
    if (f.paths.empty())
      continue;
    const PathNode &root = options.topDown ? f.topDown : f.callers;
    out << "  "
        << (options.topDown ? "top-down (outermost frames first):"
                            : "callers (which caller makes it matter):")
        << "\n";
    std::vector<TextRow> rows;
    collectRows(f, root, 0, a.metric, options.limits, rows);
    if (options.topDown)
      rows.front().label = "(all paths)";
    bool extraShare = a.metric != PathMetric::Calls;
    size_t width = 20;
    auto labelOf = [&](const TextRow &row) {
      return std::string(2 * row.depth, ' ') +
             (row.metrics ? row.label
                          : "... " + plural(row.hiddenCount, "branch", "branches") + " hidden");
    };
    for (const TextRow &row : rows)
      width = std::max(width, labelOf(row).size());
    width = std::min<size_t>(width, 100);
    // Labels longer than the column (long C++ names) push their numbers
    // right rather than being cut.
    auto padded = [&](const std::string &text) {
      return "    " + text + std::string(text.size() < width ? width - text.size() : 0, ' ');
    };
    char line[256];
    std::snprintf(line, sizeof line, " %10s %8s %10s %10s %10s %9s", "calls", "% calls", "cpu",
                  "wall", "blocked", "samples");
    out << padded("frame") << line;
    if (extraShare)
      out << " " << std::string(std::max<int>(0, 10 - int(shareHeader(a.metric).size())), ' ')
          << shareHeader(a.metric);
    out << "\n";
    for (const TextRow &row : rows) {
      const PathMetrics &m = row.metrics ? *row.metrics : row.hidden;
      std::snprintf(line, sizeof line, " %10llu %8s %10s %10s %10s %9llu",
                    static_cast<unsigned long long>(m.calls),
                    shareText(f.share(m, PathMetric::Calls)).c_str(), duration(m.cpuNs).c_str(),
                    duration(m.wallNs).c_str(), duration(m.blockedNs).c_str(),
                    static_cast<unsigned long long>(m.samples));
      out << padded(labelOf(row)) << line;
      if (extraShare) {
        std::snprintf(line, sizeof line, " %10s", shareText(f.share(m, a.metric)).c_str());
        out << line;
      }
      out << "\n";
    }
  }
}

void renderPathsJson(std::ostream &out, const PathsAnalysis &a, const PathsFile &file,
                     const PathsViewOptions &options) {
  out << "{\"version\":" << kPathsJsonVersion << ",\"sidecar\":\"" << jsonEscape(file.path)
      << "\",\"format_version\":" << file.version << ",\"metric\":\""
      << profile::pathMetricName(a.metric) << "\",\"direction\":\""
      << (options.topDown ? "top-down" : "callers")
      << "\",\"max_depth\":" << options.limits.maxDepth
      << ",\"min_share\":" << jsonNumber(options.limits.minShare) << ",\"cpu\":\""
      << profile::cpuSourceName(a.cpu) << "\",\"runs\":[";
  for (size_t i = 0; i < a.runIndices.size(); ++i) {
    const profile::PathRun &run = file.runs[a.runIndices[i]];
    out << (i ? "," : "") << "{\"index\":" << a.runIndices[i] + 1 << ",\"pid\":" << run.pid
        << ",\"program\":\"" << jsonEscape(run.program)
        << "\",\"cpu_clock\":" << (run.cpuEstimated ? "false" : "true")
        << ",\"sample_period_ns\":" << run.samplePeriodNs << ",\"time_one_in\":" << run.timeOneIn
        << ",\"walk_one_in\":" << run.walkOneIn << ",\"walk_gap_max\":" << run.walkGapMax
        << ",\"writes\":" << run.writes << ",\"complete\":" << (run.hasEnd ? "true" : "false")
        << ",\"dropped_entries\":" << run.droppedEntries
        << ",\"truncated_walks\":" << run.truncatedWalks << "}";
  }
  out << "],\"functions\":[";
  for (size_t i = 0; i < a.functions.size(); ++i) {
    const FunctionPaths &f = a.functions[i];
    out << (i ? "," : "") << "{\"name\":\"" << jsonEscape(f.name) << "\",\"symbol\":\""
        << jsonEscape(f.symbol) << "\",\"enabled\":" << (f.enabled ? "true" : "false")
        << ",\"cpu\":\"" << profile::cpuSourceName(f.cpu) << "\",\"paths\":" << f.paths.size()
        << ",\"truncated_paths\":" << f.truncatedPaths << ",\"totals\":{";
    writeMetricsJson(out, f, f.total);
    out << "},\"tree\":";
    if (f.paths.empty())
      out << "null";
    else
      writeNodeJson(out, f, options.topDown ? f.topDown : f.callers, 0, a.metric, options.limits);
    // Every distinct path, flat, with the threads that took it.
    out << ",\"contexts\":[";
    for (size_t k = 0; k < f.paths.size(); ++k) {
      const profile::MergedPath &path = f.paths[k];
      out << (k ? "," : "") << "{\"frames\":[";
      for (size_t j = 0; j < path.frames.size(); ++j)
        out << (j ? "," : "") << "{\"function\":\"" << jsonEscape(path.frames[j].function)
            << "\",\"location\":\"" << jsonEscape(path.frames[j].location) << "\"}";
      out << "],\"threads\":" << path.metrics.threads << ",";
      writeMetricsJson(out, f, path.metrics);
      out << "}";
    }
    out << "]}";
  }
  out << "],\"warnings\":[";
  for (size_t i = 0; i < file.warnings.size(); ++i)
    out << (i ? "," : "") << "\"" << jsonEscape(file.warnings[i]) << "\"";
  out << "]}\n";
}

void renderPathsFolded(std::ostream &out, const PathsAnalysis &a, const PathsViewOptions &options) {
  for (const FunctionPaths &f : a.functions)
    for (const std::string &line : profile::foldedLines(f, a.metric, options.withLocation))
      out << line << "\n";
}

std::string pathsHtmlSection(const PathsAnalysis *a, const PathsFile *file,
                             const std::string &problem) {
  std::string html =
      "<h2 style=\"font-size:1em\" id=\"paths\">Call paths</h2>\n"
      "<style>\n"
      "#paths-section ul { list-style: none; padding-left: 1.2em; margin: 0; }\n"
      "#paths-section > div > details > ul { padding-left: 0; }\n"
      "#paths-section summary { cursor: pointer; }\n"
      "#paths-section .paths-summary { font-size: .9em; color: #444; }\n"
      "#paths-section code { font-size: .85em; }\n"
      "#paths-section .paths-numbers { font-size: .78em; color: #555; }\n"
      "#paths-section .paths-bar { display: inline-block; height: .6em; background: #4a7bd0; "
      "margin-right: .4em; vertical-align: middle; }\n"
      "#paths-section .paths-leaf { padding-left: 1.05em; }\n"
      "#paths-section .paths-function { background: #fff; border: 1px solid #ddd; "
      "border-radius: 4px; padding: 4px 8px; margin-bottom: 8px; font-size: .9em; }\n"
      "#paths-section h3 { font-size: .95em; margin: 0; font-family: ui-monospace, monospace; }\n"
      "</style>\n<div id=\"paths-section\">\n";
  if (!a || !file)
    return html + "<p id=\"paths-missing\">" + xmlEscape(problem) + "</p>\n</div>\n";
  size_t paths = 0;
  for (const FunctionPaths &f : a->functions)
    paths += f.paths.size();
  html += "<p class=\"paths-summary\">" + xmlEscape(file->path) + ": " +
          xmlEscape(runsText(*a, *file)) + ", " +
          plural(a->functions.size(), "chosen function", "chosen functions") + ", " +
          plural(paths, "path", "paths") + ". Bars: share of the function's calls.";
  if (a->cpu == CpuSource::Estimated || a->cpu == CpuSource::Mixed)
    html += std::string(" CPU times ") + (a->cpu == CpuSource::Mixed ? "of some runs " : "") +
            "are estimated from samples (samples x " + duration(a->samplePeriodNs) + ").";
  if (a->walkGapMax > 1)
    html += " Paths are estimates: " + walkedText(*a) + "; each function's calls are exact.";
  else if (a->timeOneIn > 1)
    html += " Wall and CPU times are estimates from a path's first " +
            std::to_string(CAUSAL_PATHS_EXACT_TIMED_CALLS) + " calls per thread, then 1 call in " +
            std::to_string(a->timeOneIn) + " at random (the time blocked is exact).";
  html += "</p>\n";
  for (const FunctionPaths &f : a->functions) {
    html += "<div class=\"paths-function\" data-function=\"" + xmlEscape(f.name) + "\"><h3>" +
            xmlEscape(f.name) + "</h3>\n<div>" + xmlEscape(totalsText(f)) + "</div>\n";
    if (!f.paths.empty()) {
      html += "<details class=\"paths-callers\" open><summary>callers (which caller makes it "
              "matter)</summary>\n<ul>\n";
      size_t budget = 2000;
      htmlNode(html, f, f.callers, 0, PathMetric::Calls, budget);
      html += "</ul></details>\n<details class=\"paths-topdown\"><summary>top-down (outermost "
              "frames first)</summary>\n<ul>\n";
      budget = 2000;
      for (const PathNode &child : f.topDown.children)
        if (budget)
          htmlNode(html, f, child, 0, PathMetric::Calls, budget);
      html += "</ul></details>\n";
    }
    html += "</div>\n";
  }
  return html + "</div>\n";
}

} // namespace causal::report
