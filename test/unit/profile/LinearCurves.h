//===- test/unit/profile/LinearCurves.h - Profiles of known straight curves -===//
//
// The analysis tests' synthetic profile: one causal run whose lines each have
// a straight curve (program speedup = slope x line speedup, 21 speedups, two
// experiments each, 1000 visits and 1000 selected samples per experiment),
// then whatever records the test adds (the run's runtime and samples, more
// runs). The lines are named as the test wants: CPU lines, wait targets,
// lines in a calling context.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_TEST_UNIT_PROFILE_LINEARCURVES_H
#define CAUSAL_TEST_UNIT_PROFILE_LINEARCURVES_H

#include "Analysis.h"
#include "ProfileReader.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace causal::test {

/// |lines|: (name, slope); |more| follows the experiments (records of the
/// same run first: runtime, samples; then other runs).
inline profile::Profile
linearCurvesProfile(const std::vector<std::pair<std::string, double>> &lines,
                    const std::string &more, const char *file = "curves.coz") {
  std::ostringstream text;
  text << "startup\ttime=1\tprofiler=causal\tsample-period=1000000\n";
  for (int k = 0; k <= 20; ++k)
    for (int c = 0; c < 2; ++c)
      for (const auto &[line, slope] : lines)
        text << "experiment\tselected=" << line << "\tspeedup=" << k / 20.0
             << "\tduration=" << std::llround(1e9 * (1 - slope * k / 20.0))
             << "\tselected-samples=1000\nthroughput-point\tname=tp\tdelta=1000\n";
  text << more;
  profile::Profile profile;
  std::string error;
  EXPECT_TRUE(readProfileText(text.str(), file, profile, profile::ReadOptions(), error)) << error;
  return profile;
}

/// The profile analysed with the default options but a short bootstrap.
inline profile::Analysis analyzeCurves(const profile::Profile &profile) {
  profile::AnalysisOptions options;
  options.bootstrapRounds = 50;
  return profile::analyze(profile, options);
}

/// The analysis's result for the line named |name|, or null.
inline const profile::LineResult *lineNamed(const profile::Analysis &analysis,
                                            const std::string &name) {
  for (const profile::LineResult &line : analysis.lines)
    if (line.line == name)
      return &line;
  return nullptr;
}

} // namespace causal::test

#endif
