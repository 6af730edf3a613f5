//===- WaitsReaderFuzzer.cpp - libFuzzer target for the waits sidecar -----===//
//
// Feeds arbitrary bytes to the waits sidecar reader; what it accepts goes
// through the analysis (graph, cascade, knots) and every renderer. Any
// crash, sanitizer report or leak is a bug. Seeds: test/fuzz/waits-corpus,
// written by test/lit/waits/Inputs/make_waits.py seeds.
//
//===----------------------------------------------------------------------===//
#include "Report.h"
#include "WaitGraph.h"
#include "WaitsReader.h"

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace causal;
  std::string_view bytes(reinterpret_cast<const char *>(data), size);
  // The output check's test of an existing file (report::outputProblem).
  (void)profile::startsLikeWaitsFile(bytes);
  profile::WaitsFile waits;
  std::string error;
  if (!profile::readWaitsData(bytes, "fuzz.waits", waits, error))
    return 0;
  for (bool merge : {false, true}) {
    profile::WaitAnalysisOptions options;
    options.mergeRoles = merge;
    profile::WaitAnalysis analysis = profile::analyzeWaits(waits, options);
    report::WaitsContext context;
    context.sidecar = "fuzz.waits";
    std::ostringstream out;
    report::renderWaitsText(out, analysis, context, report::WaitsTextOptions{});
    report::renderWaitsJson(out, analysis, context);
    report::renderWaitsDot(out, analysis, context);
    out << report::waitsHtmlSection(analysis, "");
  }
  std::ostringstream out;
  report::renderEpisodesJson(out, waits);
  return 0;
}
