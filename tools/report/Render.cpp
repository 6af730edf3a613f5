//===- Render.cpp - Text and JSON views of a causal profile ---------------===//
#include "Report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

namespace causal::report {

using profile::CurvePoint;
using profile::LineResult;
using profile::PointResult;

std::string jsonEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 8);
  for (char c : text) {
    unsigned char u = static_cast<unsigned char>(c);
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    case '<':
    case '>':
    case '&': {
      char buffer[8];
      std::snprintf(buffer, sizeof buffer, "\\u%04x", u);
      out += buffer;
      break;
    }
    default:
      if (u < 0x20 || u == 0x7f) {
        char buffer[8];
        std::snprintf(buffer, sizeof buffer, "\\u%04x", u);
        out += buffer;
      } else {
        out += c;
      }
    }
  }
  return out;
}

std::string jsonNumber(double value) {
  if (!std::isfinite(value))
    return "null";
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.0f", value);
    return buffer;
  }
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g", value);
  return buffer;
}

std::string percent(double fraction, int decimals) {
  if (!std::isfinite(fraction))
    return "n/a";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%+.*f%%", decimals, fraction * 100);
  return buffer;
}

namespace {

std::string signedNumber(double value, int decimals = 3) {
  if (!std::isfinite(value))
    return "n/a";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%+.*f", decimals, value);
  return buffer;
}

std::string seconds(double ns) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f s", ns / 1e9);
  return buffer;
}

std::string intervalText(const profile::Interval &interval, bool asPercent) {
  if (!interval.valid)
    return "[no interval]";
  if (asPercent)
    return "[" + percent(interval.low) + ", " + percent(interval.high) + "]";
  return "[" + signedNumber(interval.low) + ", " + signedNumber(interval.high) + "]";
}

/// Display width of UTF-8 text (one column per code point).
size_t columns(const std::string &text) {
  size_t n = 0;
  for (unsigned char c : text)
    if ((c & 0xC0) != 0x80)
      ++n;
  return n;
}

std::string pad(const std::string &text, size_t width, bool right = false) {
  size_t w = columns(text);
  if (w >= width)
    return text;
  std::string fill(width - w, ' ');
  return right ? fill + text : text + fill;
}

/// Long paths shortened for the table: the last path components that fit,
/// after "...". JSON and HTML keep the full names.
std::string shortName(const std::string &name, size_t width = 44) {
  if (name.size() <= width)
    return name;
  size_t cut = name.size() - (width - 3);
  size_t slash = name.find('/', cut);
  if (slash != std::string::npos && slash + 1 < name.size())
    return ".../" + name.substr(slash + 1);
  return "..." + name.substr(cut);
}

/// A caller for the tables: whole up to \p width columns, else its start
/// and its end around "...".
std::string shortCaller(const std::string &caller, size_t width = 40) {
  if (caller.size() <= width)
    return caller;
  size_t head = (width - 3) / 2, tail = width - 3 - head;
  // Not in the middle of a UTF-8 sequence.
  while (head > 0 && (static_cast<unsigned char>(caller[head]) & 0xC0) == 0x80)
    --head;
  size_t from = caller.size() - tail;
  while (from < caller.size() && (static_cast<unsigned char>(caller[from]) & 0xC0) == 0x80)
    ++from;
  return caller.substr(0, head) + "..." + caller.substr(from);
}

/// A line's name for the tables: shortName of its FILE:LINE, a wait
/// target's " (KIND wait)" kept whole after it, so that the kind stays
/// readable however long the path. A per-caller line's " (via CALLER)" is
/// kept too, the name up to 20 columns wider: its FILE:LINE shortened to 30
/// columns and the caller to what remains (20 columns at least).
std::string shortLineName(const std::string &name, size_t width = 44) {
  profile::LineName split = profile::splitLineName(name);
  if ((!split.isWait() && !split.isPath()) || name.size() <= width)
    return shortName(name, width);
  std::string location = split.location();
  if (split.isPath()) {
    std::string shortLocation = shortName(location, 30);
    size_t used = columns(shortLocation) + 7; // " (via " and ")"
    size_t callerWidth = width + 20 > used + 20 ? width + 20 - used : 20;
    return shortLocation + " (via " + shortCaller(split.caller, callerWidth) + ")";
  }
  std::string suffix = name.substr(location.size());
  return shortName(location, width > suffix.size() + 8 ? width - suffix.size() : 8) + suffix;
}

const char *const kReset = "\033[0m";
const char *const kBold = "\033[1m";
const char *const kGreen = "\033[32m";
const char *const kRed = "\033[31m";
const char *const kYellow = "\033[33m";
const char *const kDim = "\033[2m";

std::string paint(const std::string &text, const char *code, bool color) {
  return color ? std::string(code) + text + kReset : text;
}

/// Common vertical scale of the curves shown (clamped to -100 %..+100 %).
void curveRange(const Analysis &analysis, size_t shown, double &low, double &high) {
  low = 0;
  high = 0;
  for (size_t i = 0; i < shown && i < analysis.lines.size(); ++i)
    for (const PointResult &point : analysis.lines[i].points)
      for (const CurvePoint &c : point.curve) {
        low = std::min(low, c.programSpeedup);
        high = std::max(high, c.programSpeedup);
      }
  low = std::max(low, -1.0);
  high = std::min(high, 1.0);
  if (high - low < 0.01)
    high = low + 0.01;
}

void writeInterval(std::ostream &out, const profile::Interval &interval) {
  if (!interval.valid)
    out << "null";
  else
    out << "[" << jsonNumber(interval.low) << "," << jsonNumber(interval.high) << "]";
}

/// "+12.3% @50% [..]", or "n/a" when no speedup above 0 was measured twice.
std::string maxImpactText(const PointResult &point) {
  if (std::isnan(point.maxImpact))
    return "n/a";
  return percent(point.maxImpact) + " @" +
         std::to_string(int(std::lround(point.maxImpactSpeedup * 100))) + "% " +
         intervalText(point.maxImpactInterval, true);
}

/// The physical bound b of a curve, and whether the curve exceeds it.
std::string boundText(const profile::Bound &bound) {
  if (!bound.known)
    return "-";
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, "%.3f%s", bound.limit, bound.exceeded() ? " exceeded" : "");
  return buffer;
}

/// Why a curve was flagged: its slope or points against the bound.
std::string boundViolation(const PointResult &point) {
  const profile::Bound &bound = point.bound;
  char buffer[160];
  std::string text;
  if (bound.slopeExceeds) {
    std::snprintf(buffer, sizeof buffer, "slope %+.3f %s above b = %.3f (+%.0f%%)", point.slope,
                  intervalText(point.slopeInterval, false).c_str(), bound.limit,
                  100 * bound.margin);
    text = buffer;
  }
  if (bound.pointsExceeding) {
    for (const CurvePoint &c : point.curve)
      if (c.exceedsBound) {
        std::snprintf(buffer, sizeof buffer, "%s%s at %d%% above %s (= %d%% x b, +%.0f%%)",
                      text.empty() ? "" : "; ", percent(c.programSpeedup).c_str(),
                      int(std::lround(c.speedup * 100)), percent(c.speedup * bound.limit).c_str(),
                      int(std::lround(c.speedup * 100)), 100 * bound.margin);
        text += buffer;
        break;
      }
    if (bound.pointsExceeding > 1)
      text += " (" + std::to_string(bound.pointsExceeding) + " points in all)";
  }
  return text;
}

const char *rankName(profile::RankBy by) {
  switch (by) {
  case profile::RankBy::Slope:
    return "slope";
  case profile::RankBy::MaxImpact:
    return "max-impact";
  case profile::RankBy::Name:
    return "name";
  }
  return "slope";
}

} // namespace

std::string sparkline(const std::vector<CurvePoint> &curve, double low, double high, bool ascii) {
  static const char *const blocks[] = {"\u2581", "\u2582", "\u2583", "\u2584",
                                       "\u2585", "\u2586", "\u2587", "\u2588"};
  static const char asciiLevels[] = "_.,-~=*#";
  std::string out;
  for (int step = 0; step <= 20; ++step) {
    const CurvePoint *found = nullptr;
    for (const CurvePoint &point : curve)
      if (int(std::lround(point.speedup * 20)) == step &&
          std::fabs(point.speedup * 20 - step) < 0.26)
        found = &point;
    if (!found) {
      out += ' ';
      continue;
    }
    double t = high > low ? (found->programSpeedup - low) / (high - low) : 0;
    int level = int(std::clamp(std::floor(t * 8), 0.0, 7.0)); // NaN-free: curve values are finite
    if (ascii)
      out += asciiLevels[level];
    else
      out += blocks[level];
  }
  return out;
}

namespace {

/// The report's first lines: inputs, runs, progress points, settings.
void writeTextHeader(std::ostream &out, const Analysis &analysis, const ReportContext &context,
                     bool color) {
  std::string inputs;
  for (const std::string &input : context.inputs)
    inputs += (inputs.empty() ? "" : ", ") + input;
  out << paint("causal profile", kBold, color) << " of " << inputs << ": " << analysis.runs
      << (analysis.runs == 1 ? " run, " : " runs, ") << analysis.experiments << " experiments ("
      << seconds(analysis.experimentTimeNs) << " of experiments";
  if (analysis.runsWithRuntime)
    out << ", " << seconds(analysis.runtimeNs) << " of run time";
  out << ")\n";

  out << "progress points:";
  if (analysis.progressPoints.empty())
    out << " none";
  for (const auto &point : analysis.progressPoints)
    out << "\n  " << point.name << " (" << profile::pointKindName(point.kind) << ", "
        << point.experiments << " experiments, " << jsonNumber(point.visits)
        << (point.kind == profile::PointKind::Throughput ? " visits" : " arrivals")
        << (point.periodFromTimes
                ? "; period from visit times in " + std::to_string(point.periodFromTimes)
                : "")
        << (point.ignoredExperiments
                ? "; " + std::to_string(point.ignoredExperiments) + " ignored (duration <= 0)"
                : "")
        << ")";
  out << "\n";
  const AnalysisOptions &o = context.options;
  out << "phase correction (Eq. 8): " << (o.phaseCorrection ? "on" : "off") << "; ";
  if (o.bootstrapRounds)
    out << jsonNumber(o.confidence * 100) << "% bootstrap intervals (" << o.bootstrapRounds
        << " rounds, seed " << o.seed << ")";
  else
    out << "no intervals (--bootstrap 0)";
  out << "; ranked by " << rankName(o.rankBy) << "\n";
  bool anyLatency = false;
  for (const auto &point : analysis.progressPoints)
    anyLatency = anyLatency || point.kind == profile::PointKind::Latency;
  if (anyLatency && !analysis.latencyTimeAveraged)
    out << paint("note:", kYellow, color)
        << " latency from a profile not written by causal: Coz's in-flight count is a "
           "snapshot at the end of each experiment and is noisy\n";
}

/// The ranking table's rows: a header, then one per (line, point) shown;
/// \p rowSign: per row, the sign of a slope whose interval excludes 0.
std::vector<std::vector<std::string>> rankingRows(const Analysis &analysis, size_t shown,
                                                  const TextOptions &options,
                                                  std::vector<int> &rowSign) {
  double low, high;
  curveRange(analysis, shown, low, high);
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"rank", "line", "progress point", "slope [95% CI]", "max impact [95% CI]",
                  "bound b", "curve 0..100%"});
  rowSign.push_back(0);
  for (size_t i = 0; i < shown; ++i) {
    const LineResult &line = analysis.lines[i];
    for (size_t p = 0; p < line.points.size(); ++p) {
      const PointResult &point = line.points[p];
      std::string slope =
          signedNumber(point.slope) + " " + intervalText(point.slopeInterval, false);
      std::string impact = maxImpactText(point);
      std::string curve = sparkline(point.curve, low, high, options.ascii);
      if (point.phaseCorrected && point.phaseFactor < 0.995) {
        char note[48];
        std::snprintf(note, sizeof note, "  phase x%.2f", point.phaseFactor);
        curve += note;
      }
      if (const profile::Confirmation *c = profile::findConfirmation(analysis, line.line);
          c && c->point == point.point && c->kind == point.kind)
        curve += std::string("  [") + profile::verdictName(c->verdict) + "]";
      // '?': not kept by the false-discovery control, possibly noise.
      std::string rank =
          std::to_string(i + 1) + (analysis.fdrApplied && !line.discovery ? "?" : "");
      rows.push_back({p == 0 ? rank : "", p == 0 ? shortLineName(line.line) : "",
                      shortName(point.point, 32), slope, impact, boundText(point.bound), curve});
      bool significant = point.slopeInterval.valid &&
                         (point.slopeInterval.low > 0 || point.slopeInterval.high < 0);
      rowSign.push_back(!significant ? 0 : point.slope > 0 ? 1 : -1);
    }
  }
  return rows;
}

/// Prints \p rows in aligned columns, coloured.
void writeTable(std::ostream &out, const std::vector<std::vector<std::string>> &rows,
                const std::vector<int> &rowSign, bool color, size_t signColumn = 3) {
  std::vector<size_t> widths(rows[0].size(), 0);
  for (const auto &row : rows)
    for (size_t c = 0; c + 1 < row.size(); ++c)
      widths[c] = std::max(widths[c], columns(row[c]));
  for (size_t r = 0; r < rows.size(); ++r) {
    std::string text;
    for (size_t c = 0; c < rows[r].size(); ++c) {
      std::string cell = c + 1 < rows[r].size() ? pad(rows[r][c], widths[c], c == 0) : rows[r][c];
      if (r == 0)
        cell = paint(cell, kBold, color);
      else if (c == 5 && signColumn == 3 && rows[r][c].find("exceeded") != std::string::npos)
        cell = paint(cell, kRed, color);
      else if (c == signColumn && rowSign[r] > 0)
        cell = paint(cell, kGreen, color);
      else if (c == signColumn && rowSign[r] < 0)
        cell = paint(cell, kRed, color);
      text += (c ? "  " : "") + cell;
    }
    while (!text.empty() && text.back() == ' ')
      text.pop_back();
    out << text << "\n";
  }
}

/// What the false-discovery control kept (docs/report.md, "Many lines
/// compared").
void writeDiscoveries(std::ostream &out, const Analysis &analysis, bool color) {
  if (!analysis.fdrApplied || analysis.discoveries == analysis.lines.size())
    return;
  const std::string rate = jsonNumber(analysis.fdrRate * 100) + "%";
  if (analysis.discoveries == 0)
    out << paint("note:", kYellow, color) << " no line stands out from the noise: none of the "
        << analysis.fdrCompared
        << " lines compared has a slope above 0 at a false-discovery rate of " << rate
        << " (--fdr); every rank is marked '?'. Run longer or more often (runs append).\n";
  else
    out << paint("note:", kYellow, color) << " ranks 1-" << analysis.discoveries
        << " have a slope above 0 at a false-discovery rate of " << rate << " over the "
        << analysis.fdrCompared
        << " lines compared (--fdr); the ranks marked '?' after them may be noise.\n";
}

/// " in FUNCTION: SOURCE" of a line (the parts it has), or "".
std::string lineLabelText(const Analysis &analysis, const std::string &line) {
  auto found = analysis.labels.find(line);
  if (found == analysis.labels.end())
    return "";
  const profile::LineLabel &label = found->second;
  std::string text;
  if (!label.function.empty())
    text += " in " + label.function;
  if (!label.source.empty())
    text += (text.empty() ? " " : ": ") + label.source;
  return text;
}

/// Under the ranking: each shown line's function and source text.
void writeRankedLineLabels(std::ostream &out, const Analysis &analysis, size_t shown, bool color) {
  bool any = false;
  for (size_t i = 0; i < shown && !any; ++i)
    any = analysis.labels.count(analysis.lines[i].line) != 0;
  if (!any)
    return;
  out << "\n";
  for (size_t i = 0; i < shown; ++i) {
    const std::string &line = analysis.lines[i].line;
    char rank[16];
    std::snprintf(rank, sizeof rank, "%4zu  ", i + 1);
    out << rank << paint(shortLineName(line), kBold, color) << lineLabelText(analysis, line)
        << "\n";
  }
}

/// "; lacks ...; about N s more running" of a line without enough data.
std::string shortfallAdvice(const profile::NotEnoughData &entry) {
  std::string text = entry.samples > 0 ? "; " + jsonNumber(entry.samples) + " samples" : "";
  if (!entry.lacking.empty())
    text += "; lacks " + entry.lacking;
  if (!std::isnan(entry.moreSeconds)) {
    char buf[96];
    if (entry.moreSeconds < 90)
      std::snprintf(buf, sizeof buf, "; about %.0f s more running", std::ceil(entry.moreSeconds));
    else if (entry.moreSeconds < 5400)
      std::snprintf(buf, sizeof buf, "; about %.0f min more running",
                    std::ceil(entry.moreSeconds / 60));
    else
      std::snprintf(buf, sizeof buf, "; about %.0f h more running",
                    std::ceil(entry.moreSeconds / 3600));
    text += buf;
  }
  return text;
}

/// The ranked lines with their curves.
void writeRanking(std::ostream &out, const Analysis &analysis, size_t shown,
                  const TextOptions &options) {
  out << "\n";
  if (analysis.lines.empty()) {
    out << "no line has enough data for a speedup curve\n";
    return;
  }
  std::vector<int> rowSign;
  writeTable(out, rankingRows(analysis, shown, options, rowSign), rowSign, options.color);
  writeRankedLineLabels(out, analysis, shown, options.color);
  if (shown < analysis.lines.size())
    out << "... " << analysis.lines.size() - shown
        << " more line(s) with a curve (--top 0 shows all)\n";
  writeDiscoveries(out, analysis, options.color);
}

/// One member of a line's calling-context group: the line itself (caller
/// "") or one of its per-caller lines, with its curve's rank and results or
/// why it has none.
struct ContextMember {
  std::string name;
  std::string caller;
  size_t rank = 0; // 0: not ranked
  const LineResult *result = nullptr;
  std::vector<const profile::NotEnoughData *> shortfalls;
};

struct ContextGroup {
  std::string location;
  ContextMember line;                 // the line's own curve, if any
  std::vector<ContextMember> callers; // by rank, then by name
  size_t bestRank() const {
    size_t best = line.rank ? line.rank : SIZE_MAX;
    for (const ContextMember &c : callers)
      if (c.rank)
        best = std::min(best, c.rank);
    return best;
  }
};

/// The lines with per-caller curves, each with its own curve and its
/// callers': groups by the best rank among them (then by name).
std::vector<ContextGroup> contextGroups(const Analysis &analysis) {
  std::map<std::string, ContextGroup> byLocation;
  auto member = [&](const std::string &name) -> ContextMember * {
    profile::LineName split = profile::splitLineName(name);
    if (!split.valid || split.isWait())
      return nullptr;
    std::string location = split.location();
    ContextGroup &group = byLocation[location];
    group.location = location;
    if (!split.isPath()) {
      group.line.name = name;
      return &group.line;
    }
    for (ContextMember &c : group.callers)
      if (c.name == name)
        return &c;
    group.callers.push_back({name, split.caller});
    return &group.callers.back();
  };
  for (size_t i = 0; i < analysis.lines.size(); ++i)
    if (ContextMember *m = member(analysis.lines[i].line)) {
      m->rank = i + 1;
      m->result = &analysis.lines[i];
    }
  for (const profile::NotEnoughData &entry : analysis.notEnoughData)
    if (ContextMember *m = member(entry.line))
      m->shortfalls.push_back(&entry);
  std::vector<ContextGroup> groups;
  for (auto &[location, group] : byLocation) {
    if (group.callers.empty())
      continue;
    // The callers by rank (the caller that gains most first), then those
    // without a curve by name.
    std::sort(group.callers.begin(), group.callers.end(),
              [](const ContextMember &a, const ContextMember &b) {
                size_t x = a.rank ? a.rank : SIZE_MAX, y = b.rank ? b.rank : SIZE_MAX;
                return x != y ? x < y : profile::lineNameLess(a.name, b.name);
              });
    groups.push_back(std::move(group));
  }
  std::stable_sort(groups.begin(), groups.end(), [](const ContextGroup &a, const ContextGroup &b) {
    return a.bestRank() < b.bestRank();
  });
  return groups;
}

/// "Per calling context": for each line with per-caller curves, FILE:LINE
/// (via CALLER), the line's own curve and under it, indented, one row per
/// caller, by rank (docs/report.md, "Per calling context").
void writeCallingContexts(std::ostream &out, const Analysis &analysis, const TextOptions &options) {
  std::vector<ContextGroup> groups = contextGroups(analysis);
  if (groups.empty())
    return;
  size_t shown = options.top == 0 ? groups.size() : std::min(options.top, groups.size());
  double low = 0, high = 0;
  for (size_t g = 0; g < shown; ++g) {
    auto range = [&](const ContextMember &m) {
      if (m.result)
        for (const PointResult &point : m.result->points)
          for (const CurvePoint &c : point.curve) {
            low = std::min(low, c.programSpeedup);
            high = std::max(high, c.programSpeedup);
          }
    };
    range(groups[g].line);
    for (const ContextMember &c : groups[g].callers)
      range(c);
  }
  low = std::max(low, -1.0);
  high = std::min(high, 1.0);
  if (high - low < 0.01)
    high = low + 0.01;

  out << "\n"
      << paint("per calling context", kBold, options.color)
      << ": a line's own curve, then one per caller (FILE:LINE (via CALLER): its samples "
         "counted only when called from CALLER)\n";
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"rank", "line", "progress point", "slope [95% CI]", "max impact [95% CI]",
                  "experiments", "curve 0..100%"});
  std::vector<int> rowSign{0};
  auto add = [&](const ContextMember &m, const std::string &label) {
    bool any = false;
    std::string rank =
        m.rank ? std::to_string(m.rank) +
                     (analysis.fdrApplied && m.result && !m.result->discovery ? "?" : "")
               : "-";
    if (m.result)
      for (const PointResult &point : m.result->points) {
        rows.push_back({any ? "" : rank, any ? "" : label, shortName(point.point, 32),
                        signedNumber(point.slope) + " " + intervalText(point.slopeInterval, false),
                        maxImpactText(point), std::to_string(point.experiments),
                        sparkline(point.curve, low, high, options.ascii)});
        bool significant = point.slopeInterval.valid &&
                           (point.slopeInterval.low > 0 || point.slopeInterval.high < 0);
        rowSign.push_back(!significant ? 0 : point.slope > 0 ? 1 : -1);
        any = true;
      }
    for (const profile::NotEnoughData *entry : m.shortfalls) {
      rows.push_back({any ? "" : rank, any ? "" : label, shortName(entry->point, 32),
                      std::string("not enough data: ") + profile::shortfallText(entry->reason), "",
                      std::to_string(entry->experiments), ""});
      rowSign.push_back(0);
      any = true;
    }
    if (!any) {
      rows.push_back({"", label, "", "no experiments of its own", "", "", ""});
      rowSign.push_back(0);
    }
  };
  for (size_t g = 0; g < shown; ++g) {
    const ContextGroup &group = groups[g];
    add(group.line, shortName(group.location));
    for (const ContextMember &c : group.callers)
      add(c, "  via " + shortCaller(c.caller));
  }
  writeTable(out, rows, rowSign, options.color);
  if (shown < groups.size())
    out << "... " << groups.size() - shown
        << " more line(s) with per-caller curves (--top 0 shows all)\n";
}

/// For each progress point too sparse for the lines it left unranked or
/// the speedups it dropped: its visit rate, what a line needs, and what
/// would give more (docs/report.md, "Too few visits").
void writeVisitAdvice(std::ostream &out, const Analysis &analysis, const AnalysisOptions &o,
                      bool color) {
  for (const profile::ProgressPointSummary &point : analysis.progressPoints) {
    if (!point.sparse(o) || (point.pairsShortOfVisits == 0 && analysis.droppedLowVisits == 0))
      continue;
    const char *visits = point.kind == profile::PointKind::Throughput ? "visits" : "arrivals";
    double perExperiment = point.visitsPerExperiment();
    double perSecond = point.durationNs > 0 ? point.visits / (point.durationNs / 1e9) : 0;
    double lengthMs = point.durationNs / 1e6 / double(point.experiments);
    char figures[320];
    std::snprintf(figures, sizeof figures,
                  "progress point '%s' saw %.2g %s per experiment (%.3g per second; experiments "
                  "of %.0f ms on average)",
                  point.name.c_str(), perExperiment, visits, perSecond, lengthMs);
    out << paint("advice:", kYellow, color) << " " << figures;
    if (point.pairsShortOfVisits)
      out << ", too few for " << point.pairsShortOfVisits << " line(s)";
    out << ". A line is ranked after " << jsonNumber(o.minEvidenceVisits) << " " << visits
        << " at speedups above 0";
    if (perExperiment > 0)
      out << " (about " << std::lround(std::ceil(o.minEvidenceVisits / perExperiment))
          << " of its experiments at this rate)";
    out << ", and a speedup is kept after " << jsonNumber(o.minVisits) << ". A finer progress "
        << "point gives more per experiment: one visited per item instead of once per batch of "
           "k items gives k times as many. Otherwise run longer or more often (runs append), "
           "or lengthen experiments (--experiment-length; each run then covers fewer lines).\n";
  }
}

/// The A/B confirmations: one row each, then the reason.
void writeConfirmations(std::ostream &out, const Analysis &analysis, bool color) {
  out << paint("confirmation", kBold, color) << " by A/B runs (" << analysis.confirmationRuns
      << (analysis.confirmationRuns == 1 ? " run, " : " runs, ") << analysis.confirmationExperiments
      << " experiments, kept out of the ranking):\n";
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"rank", "line", "progress point", "verdict", "A/B program speedup [95% CI]",
                  "predicted [95% CI]", "pairs", "why"});
  std::vector<int> sign{0};
  for (const profile::Confirmation &c : analysis.confirmations) {
    std::string at = " at " + std::to_string(int(std::lround(c.speedup * 100))) + "%";
    std::string measured =
        std::isnan(c.estimate) ? "n/a" : percent(c.estimate) + " " + intervalText(c.interval, true);
    std::string predicted =
        c.predicted ? percent(c.prediction) + " " + intervalText(c.predictionInterval, true) : "-";
    rows.push_back({c.rank ? std::to_string(c.rank) : "-", shortLineName(c.line),
                    shortName(c.point, 32), profile::verdictName(c.verdict), measured + at,
                    predicted, std::to_string(c.pairs), c.reason});
    sign.push_back(c.verdict == profile::Verdict::Confirmed ? 1
                   : c.verdict == profile::Verdict::Refuted ? -1
                                                            : 0);
  }
  writeTable(out, rows, sign, color, 3);
}

/// The (line, point) pairs without a curve, and why.
void writeNotEnoughData(std::ostream &out, const Analysis &analysis, const AnalysisOptions &o,
                        const TextOptions &options) {
  const bool color = options.color;
  if (!analysis.notEnoughData.empty()) {
    out << "\n"
        << paint("not enough data", kBold, color) << " for " << analysis.notEnoughData.size()
        << " line/point pair(s) (need a baseline, " << o.minSpeedups
        << " distinct speedups including 0% (--min-speedups), and " << o.minExperiments
        << " experiments with " << jsonNumber(o.minEvidenceVisits)
        << " visits at speedups above 0 (--min-experiments, --min-evidence-visits)):\n";
    size_t listed = std::min(options.notEnoughShown, analysis.notEnoughData.size());
    for (size_t i = 0; i < listed; ++i) {
      const auto &entry = analysis.notEnoughData[i];
      out << "  " << entry.line << "  " << entry.point << ": "
          << profile::shortfallText(entry.reason) << " (" << entry.distinctSpeedups << " speedups, "
          << entry.experiments << " experiments";
      if (entry.reason == profile::Shortfall::TooLittleEvidence)
        out << "; " << entry.evidenceExperiments << " experiments and "
            << jsonNumber(entry.evidenceVisits) << " visits at speedups above 0";
      out << ")" << shortfallAdvice(entry) << "\n";
      if (std::string label = lineLabelText(analysis, entry.line); !label.empty())
        out << "     " << label << "\n";
    }
    if (listed < analysis.notEnoughData.size())
      out << "  ... and " << analysis.notEnoughData.size() - listed << " more (see --json)\n";
  }
  writeVisitAdvice(out, analysis, o, color);
}

/// Curves the phase correction was not applied to.
void writePhaseNotes(std::ostream &out, const Analysis &analysis, bool color) {
  std::vector<std::string> notes;
  for (const LineResult &line : analysis.lines)
    for (const PointResult &point : line.points)
      if (!point.phaseNote.empty()) {
        notes.push_back("phase correction not applied to " + line.line + " (" + point.point +
                        "): " + point.phaseNote);
      }
  if (!notes.empty()) {
    out << "\n";
    size_t listed = std::min<size_t>(notes.size(), 5);
    for (size_t i = 0; i < listed; ++i)
      out << paint("note:", kYellow, color) << " " << notes[i] << "\n";
    if (listed < notes.size())
      out << paint("note:", kYellow, color) << " ... and " << notes.size() - listed
          << " more line(s) without phase correction\n";
  }
}

/// Lines measured while threads outnumbered the CPUs, while they waited for
/// CPUs that stood idle, or while other processes took CPUs (docs/report.md,
/// "Saturation").
void writeSaturationNotes(std::ostream &out, const Analysis &analysis, size_t shown, bool color) {
  size_t saturationNotes = 0;
  for (size_t i = 0; i < shown; ++i) {
    const profile::Saturation &sat = analysis.lines[i].saturation;
    if (!sat.oversubscribed() && !sat.waitedWithCpusIdle() && !sat.otherLoad())
      continue;
    if (saturationNotes++ == 0)
      out << "\n";
    char figures[160];
    std::snprintf(figures, sizeof figures,
                  "%.1f threads running and %.1f waiting for %.1f CPUs on average", sat.running,
                  sat.waiting, sat.cpus);
    out << paint("note:", kYellow, color) << " " << analysis.lines[i].line << ": " << figures;
    if (sat.waitedWithCpusIdle()) {
      std::snprintf(figures, sizeof figures, "%.1f", sat.idle);
      out << ", while " << figures
          << " of them stood idle: the threads waited to be woken up, not for CPUs that "
             "others held, so CPU time freed by a speedup may not turn into progress and the "
             "prediction is less certain";
    } else if (sat.otherLoad())
      out << "; threads waited while CPUs went to other processes, so the prediction holds "
             "only under the same load";
    else if (sat.sharedDelayShare > 0.5)
      out << "; " << std::lround(sat.sharedDelayShare * 100)
          << "% of its delay is CPU time freed on shared CPUs, which assumes that freed CPU "
             "time turns into progress; that accounting pauses nobody, so its curve is straight "
             "where a real speedup's gain may level off once another part (a serial stage, a "
             "lock) limits the program (docs/runtime.md)";
    out << "\n";
  }
}

/// Lines whose curve promises more than the line's CPU time can give
/// (docs/report.md, "Physical bound").
void writeBoundNotes(std::ostream &out, const Analysis &analysis, bool color) {
  std::vector<std::string> violations;
  for (const LineResult &line : analysis.lines)
    for (const PointResult &point : line.points)
      if (point.bound.exceeded())
        violations.push_back(line.line + " (" + point.point + "): " + boundViolation(point));
  if (!violations.empty()) {
    out << "\n"
        << paint("note:", kYellow, color) << " " << violations.size()
        << " curve(s) exceed their physical bound b (marked 'exceeded'): a speedup s of a line "
           "removes at most s x b of the run, b = the line's samples x sample period / run "
           "time. They are noise and rank below every line that respects its bound.\n";
    size_t listed = std::min<size_t>(violations.size(), 5);
    for (size_t i = 0; i < listed; ++i)
      out << "  " << violations[i] << "\n";
    if (listed < violations.size())
      out << "  ... and " << violations.size() - listed << " more (see --json)\n";
  }
}

/// Samples a CPU-time timer took cover kernel time; perf's user time only
/// (docs/report.md, "Samples with kernel time"): said when there are any.
void writeTimerSamplesNote(std::ostream &out, const Analysis &analysis, bool color) {
  if (!(analysis.timerSamples > 0) || !(analysis.samplesArrived > 0))
    return;
  long share = std::lround(100 * std::min(1.0, analysis.timerSamples / analysis.samplesArrived));
  out << paint("note:", kYellow, color) << " ";
  if (analysis.timerSamples >= analysis.samplesArrived)
    out << "every sample came from a CPU-time timer";
  else
    out << (share == 0     ? std::string("under 1")
            : share == 100 ? std::string("over 99")
                           : std::to_string(share))
        << " % of the samples came from CPU-time timers (threads that switched often, moved "
           "from perf_event, or perf_event unavailable); the others from perf_event, which "
           "samples user mode only";
  out << ". A timer's samples include kernel time and charge it to the line that made the "
         "system call, so lines of system calls carry that time and can rank by it "
         "(docs/report.md, \"Samples with kernel time\")\n";
}

/// Assumed sample periods, dropped speedups, the analysis' warnings, and
/// whether enough experiments stand behind the profile.
void writeOtherNotes(std::ostream &out, const Analysis &analysis, const AnalysisOptions &o,
                     bool color) {
  if (analysis.runsWithAssumedPeriod && !analysis.lines.empty())
    out << paint("note:", kYellow, color) << " " << analysis.runsWithAssumedPeriod
        << " run(s) did not record their sample period; the bounds assume 1 ms (Coz's and "
           "causal's default)\n";
  if (analysis.droppedLowVisits)
    out << paint("note:", kYellow, color) << " " << analysis.droppedLowVisits
        << " speedup(s) of a line with fewer than " << jsonNumber(o.minVisits)
        << " visits in all were dropped (--min-visits)\n";
  for (const std::string &warning : analysis.warnings)
    out << paint("warning:", kYellow, color) << " " << warning << "\n";
  writeTimerSamplesNote(out, analysis, color);

  // A program that links the runtime but whose code was built without the
  // flag: more samples cannot help.
  if (analysis.samplesOutside > 0 && analysis.samplesInLines == 0) {
    out << paint("warning:", kYellow, color) << " no samples in instrumented code ("
        << jsonNumber(analysis.samplesOutside)
        << " outside it): was the code compiled with -fcausal-profile?\n";
    return;
  }
  // Samples charged to no line: their lines' virtual speedups were smaller
  // than asked (docs/report.md, "Samples charged to no line").
  double sampled = analysis.samplesOutside + analysis.samplesInLines;
  if (sampled > 0 && analysis.samplesOutside >= 0.25 * sampled)
    out << paint("warning:", kYellow, color) << " "
        << std::lround(100 * analysis.samplesOutside / sampled)
        << " % of the samples were charged to no line: they landed outside instrumented code, "
           "and no instrumented caller was found on the stack. Where they came from calls "
           "into a library (a deep or frame-pointer-less one), the calling lines' virtual "
           "speedups were that much smaller than asked and their predictions are too low; "
           "try CAUSAL_STACK_COPY_BYTES=16384 (docs/usage.md).\n";
  // Is there enough behind this profile?
  const double kEnoughExperimentTimeNs = 30e9;
  const size_t kEnoughExperiments = 200;
  if (analysis.lines.empty() || analysis.experiments < kEnoughExperiments ||
      analysis.experimentTimeNs < kEnoughExperimentTimeNs)
    out << paint("hint:", kYellow, color) << " only " << analysis.experiments << " experiments ("
        << seconds(analysis.experimentTimeNs)
        << ") stand behind this profile; intervals are wide and lines are missing. Run the "
           "program longer or several times: each run appends to the profile.\n";
}

} // namespace

void renderText(std::ostream &out, const Analysis &analysis, const ReportContext &context,
                const TextOptions &options) {
  size_t shown =
      options.top == 0 ? analysis.lines.size() : std::min(options.top, analysis.lines.size());
  writeTextHeader(out, analysis, context, options.color);
  writeRanking(out, analysis, shown, options);
  writeCallingContexts(out, analysis, options);
  if (!analysis.confirmations.empty()) {
    out << "\n";
    writeConfirmations(out, analysis, options.color);
  }
  writeNotEnoughData(out, analysis, context.options, options);
  writePhaseNotes(out, analysis, options.color);
  writeSaturationNotes(out, analysis, shown, options.color);
  writeBoundNotes(out, analysis, options.color);
  writeOtherNotes(out, analysis, context.options, options.color);
}

void renderConfirmationsText(std::ostream &out, const Analysis &analysis,
                             const std::string &profilePath) {
  out << "confirmation of " << profilePath << "'s top lines:\n";
  writeConfirmations(out, analysis, false);
}

namespace {

void writeBoundJson(std::ostream &out, const profile::Bound &bound) {
  if (!bound.known) {
    out << "null";
    return;
  }
  out << "{\"b\":" << jsonNumber(bound.b) << ",\"b_in_phase\":" << jsonNumber(bound.inPhase)
      << ",\"stretch\":" << jsonNumber(bound.stretch) << ",\"limit\":" << jsonNumber(bound.limit)
      << ",\"margin\":" << jsonNumber(bound.margin)
      << ",\"slope_exceeds\":" << (bound.slopeExceeds ? "true" : "false")
      << ",\"points_exceeding\":" << bound.pointsExceeding
      << ",\"exceeded\":" << (bound.exceeded() ? "true" : "false") << "}";
}

void writePointJson(std::ostream &out, const PointResult &point) {
  out << "{\"name\":\"" << jsonEscape(point.point) << "\",\"kind\":\""
      << profile::pointKindName(point.kind) << "\",\"slope\":" << jsonNumber(point.slope)
      << ",\"slope_ci\":";
  writeInterval(out, point.slopeInterval);
  out << ",\"max_impact\":" << jsonNumber(point.maxImpact)
      << ",\"max_impact_speedup\":" << jsonNumber(point.maxImpactSpeedup) << ",\"max_impact_ci\":";
  writeInterval(out, point.maxImpactInterval);
  out << ",\"experiments\":" << point.experiments
      << ",\"baseline_experiments\":" << point.baselineExperiments
      << ",\"own_baseline_experiments\":" << point.ownBaselineExperiments
      << ",\"evidence_visits\":" << jsonNumber(point.evidenceVisits)
      << ",\"distinct_speedups\":" << point.distinctSpeedups
      << ",\"phase_corrected\":" << (point.phaseCorrected ? "true" : "false")
      << ",\"phase_factor\":" << jsonNumber(point.phaseFactor);
  if (!point.phaseNote.empty())
    out << ",\"phase_note\":\"" << jsonEscape(point.phaseNote) << "\"";
  out << ",\"bound\":";
  writeBoundJson(out, point.bound);
  if (!point.bound.note.empty())
    out << ",\"bound_note\":\"" << jsonEscape(point.bound.note) << "\"";
  out << ",\"curve\":[";
  for (size_t i = 0; i < point.curve.size(); ++i) {
    const CurvePoint &c = point.curve[i];
    out << (i ? "," : "") << "{\"speedup\":" << jsonNumber(c.speedup)
        << ",\"program_speedup\":" << jsonNumber(c.programSpeedup) << ",\"ci\":";
    writeInterval(out, c.interval);
    out << ",\"experiments\":" << c.experiments << ",\"duration_ns\":" << jsonNumber(c.durationNs)
        << ",\"exceeds_bound\":" << (c.exceedsBound ? "true" : "false") << "}";
  }
  out << "]}";
}

/// ,"function":...,"source":... of a line (null when unknown).
void writeLabelJson(std::ostream &out, const profile::LineLabel *label) {
  auto text = [&](const std::string *value) {
    if (value && !value->empty())
      out << "\"" << jsonEscape(*value) << "\"";
    else
      out << "null";
  };
  out << ",\"function\":";
  text(label ? &label->function : nullptr);
  out << ",\"source\":";
  text(label ? &label->source : nullptr);
}

void writeLabelJson(std::ostream &out, const Analysis &analysis, const std::string &line) {
  auto found = analysis.labels.find(line);
  writeLabelJson(out, found == analysis.labels.end() ? nullptr : &found->second);
}

/// ,"wait_kind":"timer" of a wait target, null for a CPU line; then
/// ,"location":"FILE:LINE" (null for a name that is none) and
/// ,"caller":"CALLER" of a line in one calling context (else null).
void writeWaitKindJson(std::ostream &out, const std::string &line) {
  profile::LineName split = profile::splitLineName(line);
  out << ",\"wait_kind\":";
  if (split.isWait())
    out << "\"" << profile::waitTargetKindName(split.wait) << "\"";
  else
    out << "null";
  out << ",\"location\":";
  if (split.valid)
    out << "\"" << jsonEscape(split.location()) << "\"";
  else
    out << "null";
  out << ",\"caller\":";
  if (split.isPath())
    out << "\"" << jsonEscape(split.caller) << "\"";
  else
    out << "null";
}

/// "calling_contexts": per line with per-caller curves, its own name and
/// rank and its callers' (rank null: no curve).
void writeCallingContextsJson(std::ostream &out, const Analysis &analysis) {
  std::vector<ContextGroup> groups = contextGroups(analysis);
  auto rank = [&](const ContextMember &m) {
    out << ",\"rank\":";
    if (m.rank)
      out << m.rank;
    else
      out << "null";
  };
  out << ",\n\"calling_contexts\":[";
  for (size_t g = 0; g < groups.size(); ++g) {
    const ContextGroup &group = groups[g];
    out << (g ? ",\n" : "\n") << "{\"location\":\"" << jsonEscape(group.location) << "\",\"line\":";
    if (group.line.name.empty())
      out << "null";
    else
      out << "\"" << jsonEscape(group.line.name) << "\"";
    rank(group.line);
    out << ",\"callers\":[";
    for (size_t c = 0; c < group.callers.size(); ++c) {
      const ContextMember &m = group.callers[c];
      out << (c ? "," : "") << "{\"caller\":\"" << jsonEscape(m.caller) << "\",\"line\":\""
          << jsonEscape(m.name) << "\"";
      rank(m);
      out << "}";
    }
    out << "]}";
  }
  out << "]";
}

void writeConfirmationJson(std::ostream &out, const profile::Confirmation &c) {
  out << "{\"line\":\"" << jsonEscape(c.line) << "\",\"point\":\"" << jsonEscape(c.point)
      << "\",\"kind\":\"" << profile::pointKindName(c.kind) << "\",\"verdict\":\""
      << profile::verdictName(c.verdict) << "\",\"reason\":\"" << jsonEscape(c.reason)
      << "\",\"speedup\":" << jsonNumber(c.speedup) << ",\"estimate\":" << jsonNumber(c.estimate)
      << ",\"ci\":";
  writeInterval(out, c.interval);
  out << ",\"rank\":";
  if (c.rank)
    out << c.rank;
  else
    out << "null";
  out << ",\"prediction\":" << jsonNumber(c.predicted ? c.prediction : NAN)
      << ",\"prediction_ci\":";
  writeInterval(out, c.predictionInterval);
  out << ",\"prediction_phase_corrected\":" << (c.predictionPhaseCorrected ? "true" : "false")
      << ",\"pairs\":" << c.pairs << ",\"starved_pairs\":" << c.starvedPairs
      << ",\"experiments\":" << c.experiments << ",\"runs\":" << c.runs
      << ",\"duration_ns\":" << jsonNumber(c.durationNs) << ",\"visits\":" << jsonNumber(c.visits)
      << "}";
}

} // namespace

void writeAnalysisJson(std::ostream &out, const Analysis &analysis, const ReportContext &context) {
  const AnalysisOptions &o = context.options;
  out << "{\"format\":\"causal-report\",\"version\":1,\"inputs\":[";
  for (size_t i = 0; i < context.inputs.size(); ++i)
    out << (i ? "," : "") << "\"" << jsonEscape(context.inputs[i]) << "\"";
  out << "],\"options\":{\"phase_correction\":" << (o.phaseCorrection ? "true" : "false")
      << ",\"visit_times\":" << (o.visitTimes ? "true" : "false")
      << ",\"min_visits\":" << jsonNumber(o.minVisits) << ",\"min_speedups\":" << o.minSpeedups
      << ",\"bootstrap_rounds\":" << o.bootstrapRounds << ",\"seed\":" << o.seed
      << ",\"confidence\":" << jsonNumber(o.confidence) << ",\"rank_by\":\"" << rankName(o.rankBy)
      << "\",\"baseline_window\":" << o.baselineWindow
      << ",\"min_experiments\":" << o.minExperiments
      << ",\"min_evidence_visits\":" << jsonNumber(o.minEvidenceVisits)
      << ",\"false_discovery_rate\":" << jsonNumber(o.falseDiscoveryRate)
      << ",\"min_confirm_pairs\":" << o.minConfirmPairs
      << ",\"confirm_narrow_width\":" << jsonNumber(o.confirmNarrowWidth)
      << "},\"runs\":" << analysis.runs << ",\"runs_with_runtime\":" << analysis.runsWithRuntime
      << ",\"experiments\":" << analysis.experiments
      << ",\"experiments_used\":" << analysis.experimentsUsed
      << ",\"experiment_time_ns\":" << jsonNumber(analysis.experimentTimeNs)
      << ",\"runtime_ns\":" << jsonNumber(analysis.runtimeNs)
      << ",\"inserted_delay_ns\":" << jsonNumber(analysis.insertedDelayNs)
      << ",\"dropped_low_visits\":" << analysis.droppedLowVisits
      << ",\"dropped_bad_duration\":" << analysis.droppedBadDuration
      << ",\"kept_nonpositive_duration\":" << analysis.nonPositiveDurationKept
      << ",\"latency_time_averaged\":" << (analysis.latencyTimeAveraged ? "true" : "false")
      << ",\"runs_with_assumed_sample_period\":" << analysis.runsWithAssumedPeriod
      << ",\"samples_outside_instrumented_code\":" << jsonNumber(analysis.samplesOutside)
      << ",\"samples_expected\":" << jsonNumber(analysis.samplesExpected)
      << ",\"samples_arrived\":" << jsonNumber(analysis.samplesArrived)
      << ",\"timer_samples\":" << jsonNumber(analysis.timerSamples)
      << ",\"thin_runs\":" << analysis.thinRuns << ",\"false_discovery_control\":";
  if (analysis.fdrApplied)
    out << "{\"rate\":" << jsonNumber(analysis.fdrRate) << ",\"compared\":" << analysis.fdrCompared
        << ",\"discoveries\":" << analysis.discoveries << "}";
  else
    out << "null";
  out << ",\"confirmation_runs\":" << analysis.confirmationRuns
      << ",\"confirmation_experiments\":" << analysis.confirmationExperiments
      << ",\"progress_points\":[";
  for (size_t i = 0; i < analysis.progressPoints.size(); ++i) {
    const auto &point = analysis.progressPoints[i];
    out << (i ? "," : "") << "{\"name\":\"" << jsonEscape(point.name) << "\",\"kind\":\""
        << profile::pointKindName(point.kind) << "\",\"experiments\":" << point.experiments
        << ",\"visits\":" << jsonNumber(point.visits)
        << ",\"duration_ns\":" << jsonNumber(point.durationNs)
        << ",\"visits_per_experiment\":" << jsonNumber(point.visitsPerExperiment())
        << ",\"pairs_short_of_visits\":" << point.pairsShortOfVisits
        << ",\"period_from_visit_times\":" << point.periodFromTimes
        << ",\"ignored_experiments\":" << point.ignoredExperiments << "}";
  }
  out << "],\"lines\":[";
  for (size_t i = 0; i < analysis.lines.size(); ++i) {
    const LineResult &line = analysis.lines[i];
    out << (i ? ",\n" : "\n") << "{\"rank\":" << i + 1 << ",\"line\":\"" << jsonEscape(line.line)
        << "\",\"experiments\":" << line.experiments << ",\"p_value\":" << jsonNumber(line.pValue)
        << ",\"discovery\":" << (line.discovery ? "true" : "false");
    // The line's b (the same for all its points: whole-run samples) and
    // whether any of its curves exceeds its bound.
    double b = NAN;
    for (const PointResult &point : line.points)
      if (point.bound.known && std::isnan(b))
        b = point.bound.b;
    out << ",\"bound\":{\"b\":" << jsonNumber(b)
        << ",\"exceeded\":" << (line.exceedsBound ? "true" : "false") << "}";
    const profile::Saturation &sat = line.saturation;
    if (sat.experiments)
      out << ",\"saturation\":{\"experiments\":" << sat.experiments
          << ",\"cpus\":" << jsonNumber(sat.cpus) << ",\"running\":" << jsonNumber(sat.running)
          << ",\"waiting\":" << jsonNumber(sat.waiting)
          << ",\"idle\":" << jsonNumber(sat.idleExperiments ? sat.idle : NAN)
          << ",\"shared_cpu_delay_share\":" << jsonNumber(sat.sharedDelayShare)
          << ",\"oversubscribed\":" << (sat.oversubscribed() ? "true" : "false")
          << ",\"waited_with_cpus_idle\":" << (sat.waitedWithCpusIdle() ? "true" : "false")
          << ",\"other_load\":" << (sat.otherLoad() ? "true" : "false") << "}";
    out << ",\"points\":[";
    for (size_t p = 0; p < line.points.size(); ++p) {
      out << (p ? "," : "");
      writePointJson(out, line.points[p]);
    }
    out << "],\"confirmation\":";
    if (const profile::Confirmation *c = profile::findConfirmation(analysis, line.line))
      writeConfirmationJson(out, *c);
    else
      out << "null";
    writeLabelJson(out, analysis, line.line);
    writeWaitKindJson(out, line.line);
    out << "}";
  }
  out << "],\n\"not_enough_data\":[";
  for (size_t i = 0; i < analysis.notEnoughData.size(); ++i) {
    const auto &entry = analysis.notEnoughData[i];
    out << (i ? ",\n" : "\n") << "{\"line\":\"" << jsonEscape(entry.line) << "\",\"point\":\""
        << jsonEscape(entry.point) << "\",\"reason\":\"" << profile::shortfallText(entry.reason)
        << "\",\"distinct_speedups\":" << entry.distinctSpeedups
        << ",\"experiments\":" << entry.experiments
        << ",\"evidence_experiments\":" << entry.evidenceExperiments
        << ",\"evidence_visits\":" << jsonNumber(entry.evidenceVisits)
        << ",\"samples\":" << jsonNumber(entry.samples) << ",\"lacking\":\""
        << jsonEscape(entry.lacking) << "\",\"more_seconds\":" << jsonNumber(entry.moreSeconds);
    writeLabelJson(out, analysis, entry.line);
    writeWaitKindJson(out, entry.line);
    out << "}";
  }
  out << "],\n\"confirmations\":[";
  for (size_t i = 0; i < analysis.confirmations.size(); ++i) {
    out << (i ? ",\n" : "\n");
    writeConfirmationJson(out, analysis.confirmations[i]);
  }
  out << "]";
  writeCallingContextsJson(out, analysis);
  out << ",\"warnings\":[";
  for (size_t i = 0; i < analysis.warnings.size(); ++i)
    out << (i ? "," : "") << "\"" << jsonEscape(analysis.warnings[i]) << "\"";
  out << "]}";
}

void renderJson(std::ostream &out, const Analysis &analysis, const ReportContext &context) {
  writeAnalysisJson(out, analysis, context);
  out << "\n";
}

void renderSamplesText(std::ostream &out, const std::vector<profile::LineSamples> &lines,
                       const ReportContext &context, size_t top) {
  double total = 0;
  for (const profile::LineSamples &line : lines)
    total += line.count;
  if (lines.empty()) {
    out << "No samples in ";
    for (size_t i = 0; i < context.inputs.size(); ++i)
      out << (i ? ", " : "") << context.inputs[i];
    out << ": was the program built with -fcausal-profile, and did it run long enough?\n";
    return;
  }
  size_t shown = top == 0 ? lines.size() : std::min(top, lines.size());
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f", total);
  out << "Hottest lines by samples (" << buf << " samples):\n";
  out << "   share   samples  line\n";
  for (size_t i = 0; i < shown; ++i) {
    std::snprintf(buf, sizeof buf, "%7.1f%% %9.0f  ", 100.0 * lines[i].count / total,
                  lines[i].count);
    out << buf << lines[i].location;
    if (!lines[i].label.function.empty())
      out << " in " << lines[i].label.function;
    if (!lines[i].label.source.empty())
      out << (lines[i].label.function.empty() ? " " : ": ") << lines[i].label.source;
    out << "\n";
  }
  if (shown < lines.size())
    out << "(" << lines.size() - shown << " more lines; --top 0 shows all)\n";
}

void renderSamplesJson(std::ostream &out, const std::vector<profile::LineSamples> &lines,
                       const ReportContext &context) {
  double total = 0;
  for (const profile::LineSamples &line : lines)
    total += line.count;
  out << "{\"inputs\":[";
  for (size_t i = 0; i < context.inputs.size(); ++i)
    out << (i ? "," : "") << '"' << jsonEscape(context.inputs[i]) << '"';
  out << "],\"total_samples\":" << jsonNumber(total) << ",\"lines\":[";
  for (size_t i = 0; i < lines.size(); ++i) {
    out << (i ? "," : "") << "{\"location\":\"" << jsonEscape(lines[i].location)
        << "\",\"samples\":" << jsonNumber(lines[i].count)
        << ",\"share\":" << jsonNumber(total > 0 ? lines[i].count / total : 0);
    writeLabelJson(out, &lines[i].label);
    out << "}";
  }
  out << "]}\n";
}

} // namespace causal::report
