//===- LineLabels.cpp - What names a line, and what a line still lacks ----===//
//
// The parts of the analysis that speak to a person rather than rank: each
// line's function and source text, and for a line without a curve, what it
// lacks and roughly how much longer a run would need.
//
//===----------------------------------------------------------------------===//
#include "Analysis.h"
#include "LineName.h"

#include "causal/tunables.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sys/stat.h>

namespace causal::profile {

namespace {

/// Of all experiments, the share at a speedup above 0 (Coz's rule, which the
/// runtime draws from: tunables.h).
constexpr double kAboveZeroShare =
    double(CAUSAL_SPEEDUP_DIVISIONS) / (CAUSAL_SPEEDUP_DIVISIONS + CAUSAL_ZERO_SPEEDUP_WEIGHT + 1);

std::string plural(double count, const char *what) {
  long rounded = std::lround(std::ceil(count));
  return std::to_string(rounded) + " " + what + (rounded == 1 ? "" : "s");
}

/// Source files read once each, split in lines.
class SourceFiles {
public:
  explicit SourceFiles(size_t maxChars) : maxChars(maxChars) {}

  /// The source line a line's name points to (a wait target's: its call
  /// site; a per-caller line's: the line); "" when the name is no FILE:LINE or the file has no such
  /// line.
  std::string text(const std::string &name) {
    LineName split = splitLineName(name);
    if (!split.valid)
      return "";
    const std::vector<std::string> &lines = linesOf(split.file);
    if (split.line > lines.size())
      return "";
    return trimmed(lines[split.line - 1]);
  }

private:
  const std::vector<std::string> &linesOf(const std::string &file) {
    auto found = files.find(file);
    if (found != files.end())
      return found->second;
    std::vector<std::string> &lines = files[file];
    struct stat info;
    // Only regular files of a plausible size: a profile may name anything.
    if (::stat(file.c_str(), &info) != 0 || !S_ISREG(info.st_mode) || info.st_size > (64 << 20))
      return lines;
    std::ifstream in(file, std::ios::binary);
    std::string text;
    while (std::getline(in, text))
      lines.push_back(std::move(text));
    return lines;
  }

  std::string trimmed(const std::string &raw) const {
    std::string text;
    for (char c : raw)
      text.push_back(c == '\t' ? ' ' : ((unsigned char)c < 0x20 || c == 0x7f ? '?' : c));
    size_t begin = text.find_first_not_of(' ');
    if (begin == std::string::npos)
      return "";
    size_t end = text.find_last_not_of(' ');
    text = text.substr(begin, end - begin + 1);
    if (text.size() > maxChars) {
      text.resize(maxChars > 3 ? maxChars - 3 : 0);
      while (!text.empty() && ((unsigned char)text.back() & 0xc0) == 0x80)
        text.pop_back(); // not in the middle of a UTF-8 sequence
      if (!text.empty() && ((unsigned char)text.back() & 0x80))
        text.pop_back();
      text += "...";
    }
    return text;
  }

  size_t maxChars;
  std::map<std::string, std::vector<std::string>> files;
};

template <class Visit> void forEachLine(const Analysis &analysis, Visit visit) {
  for (const LineResult &line : analysis.lines)
    visit(line.line);
  for (const NotEnoughData &entry : analysis.notEnoughData)
    visit(entry.line);
  for (const Confirmation &c : analysis.confirmations)
    visit(c.line);
}

} // namespace

void addFunctionNames(Analysis &analysis, const Profile &profile) {
  if (profile.functions.empty())
    return;
  forEachLine(analysis, [&](const std::string &line) {
    // A wait target's function is that of its call site, a per-caller
    // line's that of its line (the `samples` records name CPU lines only).
    LineName split = splitLineName(line);
    auto found = profile.functions.find(split.isWait() || split.isPath() ? split.location() : line);
    if (found != profile.functions.end())
      analysis.labels[line].function = found->second;
  });
}

void addSourceText(Analysis &analysis, size_t maxChars) {
  SourceFiles files(maxChars);
  std::vector<std::string> lines;
  forEachLine(analysis, [&](const std::string &line) { lines.push_back(line); });
  for (const std::string &line : lines) {
    std::string text = files.text(line);
    if (!text.empty())
      analysis.labels[line].source = std::move(text);
  }
}

void addSourceText(std::vector<LineSamples> &lines, size_t maxChars) {
  SourceFiles files(maxChars);
  for (LineSamples &line : lines)
    line.label.source = files.text(line.location);
}

void estimateShortfalls(Analysis &analysis, const Profile &profile,
                        const AnalysisOptions &options) {
  double runSeconds =
      analysis.runtimeNs > 0 ? analysis.runtimeNs / 1e9 : analysis.experimentTimeNs / 1e9;
  for (NotEnoughData &entry : analysis.notEnoughData) {
    if (auto found = profile.samples.find(entry.line); found != profile.samples.end())
      entry.samples = found->second.all;
    // More experiments of this line it needs, of any speedup.
    double moreExperiments = NAN;
    switch (entry.reason) {
    case Shortfall::None:
      continue;
    case Shortfall::NoBaseline:
      entry.lacking = "a 0% (baseline) experiment";
      moreExperiments = 1 / (1 - kAboveZeroShare);
      break;
    case Shortfall::BaselineTooFewVisits:
      // Visits per experiment do not grow with the run; more baselines add
      // them: as many again as it has.
      entry.lacking = "visits of " + entry.point + " in its 0% experiments (fewer than " +
                      std::to_string(std::lround(options.minVisits)) + ")";
      moreExperiments = std::max<double>(entry.experiments, 1);
      break;
    case Shortfall::InvalidBaseline:
      entry.lacking =
          "progress of " + entry.point + " in its 0% experiments (a longer run may not help)";
      break;
    case Shortfall::TooFewSpeedups: {
      size_t wanted = std::max<size_t>(options.minSpeedups, 2);
      size_t missing = wanted > entry.distinctSpeedups ? wanted - entry.distinctSpeedups : 1;
      entry.lacking = plural(double(missing), "more distinct speedup");
      // Each experiment above 0 draws one of CAUSAL_SPEEDUP_DIVISIONS speedups.
      moreExperiments = double(missing) / kAboveZeroShare;
      break;
    }
    case Shortfall::TooLittleEvidence: {
      double missingExperiments = options.minExperiments > entry.evidenceExperiments
                                      ? double(options.minExperiments - entry.evidenceExperiments)
                                      : 0;
      double missingVisits = std::max(0.0, options.minEvidenceVisits - entry.evidenceVisits);
      std::string what;
      if (missingExperiments > 0)
        what = plural(missingExperiments, "more experiment") + " at speedups above 0%";
      if (missingVisits > 0)
        what += (what.empty() ? "" : " and ") + plural(missingVisits, "more visit") + " of " +
                entry.point + " in them";
      entry.lacking = what;
      double aboveNeeded = missingExperiments;
      if (missingVisits > 0 && entry.evidenceVisits > 0 && entry.evidenceExperiments > 0)
        aboveNeeded = std::max(aboveNeeded, missingVisits * double(entry.evidenceExperiments) /
                                                entry.evidenceVisits);
      else if (missingVisits > 0)
        aboveNeeded = NAN; // no visit seen yet: no rate to scale
      double share = entry.experiments && entry.evidenceExperiments
                         ? double(entry.evidenceExperiments) / double(entry.experiments)
                         : kAboveZeroShare;
      moreExperiments = aboveNeeded / share;
      break;
    }
    }
    if (std::isnan(moreExperiments) || entry.experiments == 0 || runSeconds <= 0)
      continue;
    double perSecond = double(entry.experiments) / runSeconds;
    entry.moreSeconds = moreExperiments / perSecond;
  }
}

} // namespace causal::profile
