//===- ProfileReaderFuzzer.cpp - libFuzzer target for the profile reader --===//
//
// Feeds arbitrary bytes to the reader (strict and lenient), analyses what it
// accepted and renders every view. Besides the sanitizers' checks it traps
// when an invariant breaks: a strict failure without a "file:line:" message,
// a lenient read that fails, an interval with low > high, a phase factor
// outside [0, 1], a non-finite slope.
//
//===----------------------------------------------------------------------===//
#include "Analysis.h"
#include "ProfileReader.h"
#include "Report.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

using namespace causal;

namespace {

void check(bool condition) {
  if (!condition)
    __builtin_trap();
}

void checkInterval(const profile::Interval &interval) {
  if (interval.valid)
    check(interval.low <= interval.high && std::isfinite(interval.low) &&
          std::isfinite(interval.high));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > (1u << 16))
    return 0;
  std::string_view text(reinterpret_cast<const char *>(data), size);
  // The output check's test of an existing file (report::outputProblem).
  (void)profile::startsLikeProfile(text);
  for (bool lenient : {false, true}) {
    profile::Profile profile;
    profile::ReadOptions readOptions;
    readOptions.lenient = lenient;
    std::string error;
    bool ok = profile::readProfileText(text, "fuzz.coz", profile, readOptions, error);
    if (!ok) {
      check(!lenient);
      check(error.rfind("fuzz.coz:", 0) == 0);
      continue;
    }
    for (const std::string &warning : profile.warnings)
      check(warning.rfind("fuzz.coz:", 0) == 0);
    profile::AnalysisOptions options;
    options.bootstrapRounds = 16;
    options.minSpeedups = 2;
    options.minVisits = lenient ? 0 : 5;
    profile::Analysis analysis = profile::analyze(profile, options);
    for (const profile::LineResult &line : analysis.lines)
      for (const profile::PointResult &point : line.points) {
        check(std::isfinite(point.slope));
        check(point.phaseFactor >= 0 && point.phaseFactor <= 1);
        checkInterval(point.slopeInterval);
        checkInterval(point.maxImpactInterval);
        for (const profile::CurvePoint &c : point.curve) {
          check(std::isfinite(c.programSpeedup));
          checkInterval(c.interval);
        }
      }
    report::ReportContext context{{"fuzz.coz"}, options};
    std::ostringstream out;
    report::TextOptions textOptions;
    textOptions.top = 0;
    report::renderText(out, analysis, context, textOptions);
    report::renderJson(out, analysis, context);
    report::renderHtml(out, analysis, context);
    std::vector<report::LineChange> changes = report::compareAnalyses(analysis, analysis);
    for (const report::LineChange &change : changes)
      check(change.kind == report::ChangeKind::Unchanged);
    report::renderDiffText(out, changes, analysis, analysis, {"a", "b"}, report::DiffTextOptions());
    report::renderDiffJson(out, changes, analysis, analysis, {"a", "b"});
  }
  return 0;
}
