//===- PathsReaderFuzzer.cpp - libFuzzer target for the paths sidecar -----===//
//
// Feeds arbitrary bytes to the paths sidecar reader; what it accepts goes
// through the trees (both directions, every metric, limits, folded lines)
// and every renderer. Any crash, sanitizer report or leak is a bug. Seeds:
// test/fuzz/paths-corpus, written by test/lit/paths/Inputs/make_paths.py
// seeds.
//
//===----------------------------------------------------------------------===//
#include "PathTree.h"
#include "PathsReader.h"
#include "Report.h"

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace causal;
  std::string_view bytes(reinterpret_cast<const char *>(data), size);
  (void)profile::startsLikePathsFile(bytes);
  profile::PathsFile file;
  std::string error;
  if (!profile::readPathsData(bytes, "fuzz.paths", file, error))
    return 0;
  for (profile::PathMetric metric : {profile::PathMetric::Calls, profile::PathMetric::WallNs}) {
    profile::PathsAnalysisOptions options;
    options.metric = metric;
    profile::PathsAnalysis analysis = profile::analyzePaths(file, options);
    std::ostringstream out;
    for (bool topDown : {false, true}) {
      report::PathsViewOptions view;
      view.topDown = topDown;
      view.limits.maxDepth = topDown ? 2 : 0;
      view.limits.minShare = topDown ? 0.1 : 0;
      report::renderPathsText(out, analysis, file, view);
      report::renderPathsJson(out, analysis, file, view);
      view.withLocation = !topDown;
      report::renderPathsFolded(out, analysis, view);
    }
    out << report::pathsHtmlSection(&analysis, &file, "");
  }
  return 0;
}
