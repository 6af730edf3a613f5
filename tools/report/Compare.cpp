//===- Compare.cpp - causal diff: which lines gained or lost impact -------===//
#include "Report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace causal::report {

using profile::PointResult;

const char *changeKindName(ChangeKind kind) {
  switch (kind) {
  case ChangeKind::Gained:
    return "gained";
  case ChangeKind::Lost:
    return "lost";
  case ChangeKind::Unchanged:
    return "unchanged";
  case ChangeKind::New:
    return "new";
  case ChangeKind::Gone:
    return "gone";
  }
  return "?";
}

std::vector<LineChange> compareAnalyses(const Analysis &before, const Analysis &after) {
  std::map<std::pair<std::string, std::string>, LineChange> byKey;
  auto collect = [&](const Analysis &analysis, const PointResult *LineChange::*side) {
    for (const auto &line : analysis.lines)
      for (const PointResult &point : line.points) {
        LineChange &change = byKey[{line.line, point.point}];
        change.line = line.line;
        change.point = point.point;
        change.*side = &point;
      }
  };
  collect(before, &LineChange::before);
  collect(after, &LineChange::after);
  std::vector<LineChange> changes;
  for (auto &entry : byKey) {
    LineChange change = entry.second;
    if (change.before && change.after) {
      change.slopeChange = change.after->slope - change.before->slope;
      change.maxImpactChange = change.after->maxImpact - change.before->maxImpact;
      const auto &a = change.before->slopeInterval, &b = change.after->slopeInterval;
      bool separate =
          a.valid && b.valid ? (b.low > a.high || b.high < a.low) : change.slopeChange != 0;
      change.kind = !separate                ? ChangeKind::Unchanged
                    : change.slopeChange > 0 ? ChangeKind::Gained
                                             : ChangeKind::Lost;
    } else if (change.after) {
      change.kind = ChangeKind::New;
      change.slopeChange = change.after->slope;
      change.maxImpactChange = change.after->maxImpact;
    } else {
      change.kind = ChangeKind::Gone;
      change.slopeChange = -change.before->slope;
      change.maxImpactChange = -change.before->maxImpact;
    }
    changes.push_back(change);
  }
  std::stable_sort(changes.begin(), changes.end(), [](const LineChange &x, const LineChange &y) {
    bool xSignificant = x.kind != ChangeKind::Unchanged;
    bool ySignificant = y.kind != ChangeKind::Unchanged;
    if (xSignificant != ySignificant)
      return xSignificant;
    double dx = std::fabs(x.slopeChange), dy = std::fabs(y.slopeChange);
    if (dx != dy)
      return dx > dy;
    return std::make_pair(x.line, x.point) < std::make_pair(y.line, y.point);
  });
  return changes;
}

namespace {

std::string slopeText(const PointResult *point) {
  if (!point)
    return "-";
  char buffer[96];
  if (point->slopeInterval.valid)
    std::snprintf(buffer, sizeof buffer, "%+.3f [%+.3f, %+.3f]", point->slope,
                  point->slopeInterval.low, point->slopeInterval.high);
  else
    std::snprintf(buffer, sizeof buffer, "%+.3f", point->slope);
  return buffer;
}

void writeSide(std::ostream &out, const PointResult *point) {
  if (!point) {
    out << "null";
    return;
  }
  out << "{\"slope\":" << jsonNumber(point->slope) << ",\"slope_ci\":";
  if (point->slopeInterval.valid)
    out << "[" << jsonNumber(point->slopeInterval.low) << ","
        << jsonNumber(point->slopeInterval.high) << "]";
  else
    out << "null";
  out << ",\"max_impact\":" << jsonNumber(point->maxImpact)
      << ",\"experiments\":" << point->experiments << "}";
}

} // namespace

void renderDiffText(std::ostream &out, const std::vector<LineChange> &changes,
                    const Analysis &before, const Analysis &after,
                    const std::vector<std::string> &inputs, const DiffTextOptions &options) {
  out << "causal diff: " << (inputs.size() > 0 ? inputs[0] : "?") << " (" << before.experiments
      << " experiments, " << before.lines.size() << " lines with a curve) -> "
      << (inputs.size() > 1 ? inputs[1] : "?") << " (" << after.experiments << " experiments, "
      << after.lines.size() << " lines with a curve)\n";
  size_t counts[5] = {0, 0, 0, 0, 0};
  for (const LineChange &change : changes)
    ++counts[size_t(change.kind)];
  out << counts[size_t(ChangeKind::Gained)] << " gained, " << counts[size_t(ChangeKind::Lost)]
      << " lost, " << counts[size_t(ChangeKind::New)] << " new, "
      << counts[size_t(ChangeKind::Gone)] << " gone, " << counts[size_t(ChangeKind::Unchanged)]
      << " unchanged (a change counts when the 95% slope intervals do not overlap)\n\n";
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"change", "line", "progress point", "slope before", "slope after", "delta"});
  size_t shown = 0;
  for (const LineChange &change : changes) {
    if (change.kind == ChangeKind::Unchanged && !options.all)
      continue;
    if (options.top && shown == options.top)
      break;
    ++shown;
    char delta[32];
    std::snprintf(delta, sizeof delta, "%+.3f", change.slopeChange);
    rows.push_back({changeKindName(change.kind), change.line, change.point,
                    slopeText(change.before), slopeText(change.after), delta});
  }
  if (rows.size() == 1) {
    out << "no line gained or lost impact" << (options.all ? "" : " (--all lists every line)")
        << "\n";
    return;
  }
  std::vector<size_t> widths(rows[0].size(), 0);
  for (const auto &row : rows)
    for (size_t c = 0; c < row.size(); ++c)
      widths[c] = std::max(widths[c], row[c].size());
  for (size_t r = 0; r < rows.size(); ++r) {
    std::string text;
    for (size_t c = 0; c < rows[r].size(); ++c) {
      std::string cell = rows[r][c];
      if (c + 1 < rows[r].size())
        cell += std::string(widths[c] - cell.size(), ' ');
      if (options.color && r > 0 && c == 0) {
        const char *code = rows[r][0] == "gained" || rows[r][0] == "new"  ? "\033[32m"
                           : rows[r][0] == "lost" || rows[r][0] == "gone" ? "\033[31m"
                                                                          : "";
        if (*code)
          cell = code + cell + "\033[0m";
      }
      if (options.color && r == 0)
        cell = "\033[1m" + cell + "\033[0m";
      text += (c ? "  " : "") + cell;
    }
    out << text << "\n";
  }
}

void renderDiffJson(std::ostream &out, const std::vector<LineChange> &changes,
                    const Analysis &before, const Analysis &after,
                    const std::vector<std::string> &inputs) {
  out << "{\"format\":\"causal-diff\",\"version\":1,\"before\":{\"input\":\""
      << jsonEscape(inputs.size() > 0 ? inputs[0] : "")
      << "\",\"experiments\":" << before.experiments << ",\"lines\":" << before.lines.size()
      << "},\"after\":{\"input\":\"" << jsonEscape(inputs.size() > 1 ? inputs[1] : "")
      << "\",\"experiments\":" << after.experiments << ",\"lines\":" << after.lines.size()
      << "},\"changes\":[";
  for (size_t i = 0; i < changes.size(); ++i) {
    const LineChange &change = changes[i];
    out << (i ? ",\n" : "\n") << "{\"line\":\"" << jsonEscape(change.line) << "\",\"point\":\""
        << jsonEscape(change.point) << "\",\"change\":\"" << changeKindName(change.kind)
        << "\",\"slope_change\":" << jsonNumber(change.slopeChange)
        << ",\"max_impact_change\":" << jsonNumber(change.maxImpactChange) << ",\"before\":";
    writeSide(out, change.before);
    out << ",\"after\":";
    writeSide(out, change.after);
    profile::LineName name = profile::splitLineName(change.line);
    out << ",\"wait_kind\":";
    if (name.isWait())
      out << "\"" << profile::waitTargetKindName(name.wait) << "\"";
    else
      out << "null";
    out << ",\"caller\":";
    if (name.isPath())
      out << "\"" << jsonEscape(name.caller) << "\"";
    else
      out << "null";
    out << "}";
  }
  out << "]}\n";
}

} // namespace causal::report
