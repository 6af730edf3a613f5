//===- PathNameTest.cpp - Lines per calling context: names and analysis ---===//
//
// FILE:LINE (via CALLER): splitLineName on awkward files and callers and on
// malformed names, pathLineName, the order of a line, its callers and its
// waits; and a line with two callers analysed as three curves, the
// per-caller ones not phase corrected, with the line's function.
//
//===----------------------------------------------------------------------===//
#include "Analysis.h"
#include "LineName.h"

#include "LinearCurves.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>

using namespace causal::profile;

namespace {

TEST(PathNameTest, SplitsPerCallerLines) {
  LineName n = splitLineName("src/f.c:10 (via main)");
  EXPECT_TRUE(n.valid);
  EXPECT_EQ(n.file, "src/f.c");
  EXPECT_EQ(n.line, 10u);
  EXPECT_EQ(n.caller, "main");
  EXPECT_TRUE(n.isPath());
  EXPECT_FALSE(n.isWait());
  EXPECT_EQ(n.location(), "src/f.c:10");
  EXPECT_EQ(pathLineName("src/f.c:10", "main"), "src/f.c:10 (via main)");
  EXPECT_EQ(pathLineName("src/f.c:10", ""), "src/f.c:10");

  // Neither a CPU line nor a wait target has a caller.
  EXPECT_FALSE(splitLineName("src/f.c:10").isPath());
  EXPECT_FALSE(splitLineName("src/f.c:10 (timer wait)").isPath());
}

TEST(PathNameTest, AwkwardFilesAndCallersRoundTrip) {
  struct Case {
    const char *file;
    uint32_t line;
    const char *caller;
  } cases[] = {
      {"f.c", 10, "Server::handle(int)"},
      {"f.c", 10, "operator()"},
      {"f.c", 10, "std::vector<int, std::allocator<int> >::push_back(int const&)"},
      {"f.c", 10, "(anonymous namespace)::worker(void*)"},
      {"f.c", 10, "main::{lambda()#1}::operator()() const"},
      {"f.c", 10, "*::handle*"},            // a --path glob
      {"f.c", 10, "g (via h)"},             // the separator inside the caller
      {"f.c", 10, "x (timer"},              // a wait kind's start, not its end
      {"f.c", 10, ")"},                     // a lone parenthesis
      {"my dir/file (copy 2).c", 7, "a b"}, // spaces and parentheses in the file
      {"C:/x:y.c", 12, "ns::f"},            // colons in the file
      {"odd (via x).c", 3, "main"},         // the separator inside the file
      {"big.c", 4294967295u, "f(int)"},     // the largest line number
  };
  for (const Case &c : cases) {
    std::string location = std::string(c.file) + ":" + std::to_string(c.line);
    std::string name = pathLineName(location, c.caller);
    LineName n = splitLineName(name);
    EXPECT_TRUE(n.valid) << name;
    EXPECT_EQ(n.caller, c.caller) << name;
    EXPECT_EQ(n.line, c.line) << name;
    EXPECT_EQ(n.location(), location) << name;
    EXPECT_EQ(n.wait, WaitTargetKind::None) << name;
    EXPECT_EQ(n.file, c.file) << name;
  }
  // A file that holds " (via " after something like FILE:LINE cannot be
  // told apart: the first " (via " after a valid FILE:LINE wins.
  LineName n = splitLineName("a.c:5 (via b).c:4294967295 (via f(int))");
  EXPECT_EQ(n.file, "a.c");
  EXPECT_EQ(n.line, 5u);
  EXPECT_EQ(n.caller, "b).c:4294967295 (via f(int)");
}

TEST(PathNameTest, AWaitSuffixOnlyWhereItFollowsAFileLine) {
  // "FILE:LINE (via g (timer wait)": no FILE:LINE before " (timer wait)",
  // so a caller "g (timer wait".
  LineName n = splitLineName("f.c:10 (via g (timer wait)");
  EXPECT_TRUE(n.valid);
  EXPECT_EQ(n.caller, "g (timer wait");
  EXPECT_FALSE(n.isWait());
  // A caller named like a wait's end: still a caller (the wait's location
  // "f.c:10 (via my" is no FILE:LINE).
  n = splitLineName("f.c:10 (via my timer wait)");
  EXPECT_TRUE(n.valid);
  EXPECT_EQ(n.caller, "my timer wait");
  // Where the whole reads as a wait target, it is one.
  n = splitLineName("a.c:1 (via b.c:2 (timer wait)");
  EXPECT_TRUE(n.valid);
  EXPECT_TRUE(n.isWait());
  EXPECT_FALSE(n.isPath());
  EXPECT_EQ(n.file, "a.c:1 (via b.c");
  EXPECT_EQ(n.line, 2u);
}

TEST(PathNameTest, MalformedPerCallerNamesAreInvalid) {
  const char *bad[] = {
      "f.c:10 (via )",      // empty caller
      "f.c:10 (via main",   // no closing parenthesis
      "f.c:10 (via main) ", // something after it
      "f.c:10 (via\tmain)", // no space after "via"
      "f.c:10(via main)",   // no space before it
      "f.c:10  (via main)", // two spaces: "10 " is no number
      "f.c (via main)",     // no FILE:LINE before " (via "
      "f.c:x (via main)",   // no number
      "f.c:0 (via main)",   // lines start at 1
      ":10 (via main)",     // no file
      " (via main)",        // nothing before it
      "(via main)",
      "f.c:10 (via ma\tin)", // a tab in the caller
      "f.c:10 (via ma\nin)", // a newline in the caller
      "f.c:10 (Via main)",   // lower case only
      "f.c:10 (main)",       // no "via"
  };
  for (const char *name : bad) {
    LineName n = splitLineName(name);
    EXPECT_FALSE(n.valid) << name;
    EXPECT_FALSE(n.isPath()) << name;
    EXPECT_EQ(n.caller, "") << name;
    EXPECT_EQ(n.file, "") << name;
    EXPECT_EQ(n.line, 0u) << name;
    EXPECT_EQ(n.location(), "") << name;
  }
}

TEST(PathNameTest, ALineComesBeforeItsCallersBeforeItsWaits) {
  std::vector<std::string> names = {"f.c:10 (timer wait)", "g.c:1",           "f.c:10 (via b)",
                                    "f.c:9 (via z)",       "f.c:10",          "f.c:10 (via a)",
                                    "f.c:10 (via )",       "f.c:100 (via a)", "f.c:10 (disk wait)"};
  std::sort(names.begin(), names.end(),
            [](const std::string &a, const std::string &b) { return lineNameLess(a, b); });
  std::vector<std::string> expected = {"f.c:9 (via z)",       "f.c:10",
                                       "f.c:10 (via a)",      "f.c:10 (via b)",
                                       "f.c:10 (timer wait)", "f.c:10 (disk wait)",
                                       "f.c:100 (via a)",     "g.c:1",
                                       "f.c:10 (via )"}; // invalid: last
  EXPECT_EQ(names, expected);
  EXPECT_FALSE(lineNameLess("f.c:10 (via a)", "f.c:10 (via a)"));
}

/// Experiments on f.c:10 (0.2 s at 100 %), on f.c:10 (via a) (0.6 s) and
/// f.c:10 (via b) (0.1 s), and the run's samples of f.c:10 in all contexts;
/// |more| is appended (records of the run, further runs).
Profile perCallerProfile(const std::string &more = "") {
  return causal::test::linearCurvesProfile(
      {{"f.c:10", 0.2}, {"f.c:10 (via a)", 0.6}, {"f.c:10 (via b)", 0.1}},
      "runtime\ttime=126000000000\nsamples\tlocation=f.c:10\tcount=126000\tfunction=worker\n" +
          more,
      "path.coz");
}

using causal::test::lineNamed;

TEST(PathNameTest, ALineAndItsCallersAreThreeCurves) {
  Analysis analysis = causal::test::analyzeCurves(perCallerProfile());
  ASSERT_EQ(analysis.lines.size(), 3u);
  const LineResult *line = lineNamed(analysis, "f.c:10");
  const LineResult *a = lineNamed(analysis, "f.c:10 (via a)");
  const LineResult *b = lineNamed(analysis, "f.c:10 (via b)");
  ASSERT_TRUE(line && a && b);
  EXPECT_EQ(analysis.lines[0].line, "f.c:10 (via a)");
  EXPECT_EQ(analysis.lines[1].line, "f.c:10");
  EXPECT_EQ(analysis.lines[2].line, "f.c:10 (via b)");
  ASSERT_EQ(a->points.size(), 1u);
  ASSERT_EQ(b->points.size(), 1u);
  ASSERT_EQ(line->points.size(), 1u);
  EXPECT_NEAR(a->points[0].slope, 0.6, 1e-6);
  EXPECT_NEAR(b->points[0].slope, 0.1, 1e-6);
  EXPECT_NEAR(line->points[0].slope, 0.2, 1e-6);
  // No samples were counted per context: a caller's curve is not phase
  // corrected by the line's (every context), and its bound is the in-phase one.
  for (const LineResult *caller : {a, b}) {
    const PointResult &p = caller->points[0];
    EXPECT_FALSE(p.phaseCorrected) << caller->line;
    EXPECT_NE(p.phaseNote.find("calling context"), std::string::npos) << p.phaseNote;
    EXPECT_TRUE(p.bound.known) << caller->line;
    EXPECT_TRUE(std::isnan(p.bound.b)) << caller->line;
    EXPECT_EQ(caller->experiments, 42u);
  }
  EXPECT_TRUE(line->points[0].phaseCorrected);
  // Each caller's function is its line's.
  for (const char *name : {"f.c:10", "f.c:10 (via a)", "f.c:10 (via b)"}) {
    ASSERT_TRUE(analysis.labels.count(name)) << name;
    EXPECT_EQ(analysis.labels.at(name).function, "worker") << name;
  }
}

// With the line's samples per context (causal run --path, --path-experiments),
// a caller's curve is phase corrected by them, over the time of the runs that
// counted them only: here half of its baseline rate, not a quarter (a second
// run of the same length counted no context).
TEST(PathNameTest, ACallersOwnSamplesPhaseCorrectItsCurve) {
  Analysis analysis = causal::test::analyzeCurves(
      perCallerProfile("samples\tlocation=f.c:10 (via a)\tcount=63000\tfunction=worker\n"
                       "startup\ttime=2\tprofiler=causal\tsample-period=1000000\n"
                       "runtime\ttime=126000000000\n"
                       "samples\tlocation=f.c:10\tcount=126000\tfunction=worker\n"));
  const LineResult *a = lineNamed(analysis, "f.c:10 (via a)");
  const LineResult *b = lineNamed(analysis, "f.c:10 (via b)");
  const LineResult *line = lineNamed(analysis, "f.c:10");
  ASSERT_TRUE(a && b && line);
  ASSERT_EQ(a->points.size(), 1u);
  EXPECT_TRUE(a->points[0].phaseCorrected);
  EXPECT_NEAR(a->points[0].phaseFactor, 0.5, 1e-6);
  EXPECT_NEAR(a->points[0].slope, 0.3, 1e-6);
  EXPECT_TRUE(a->points[0].phaseNote.empty()) << a->points[0].phaseNote;
  EXPECT_FALSE(std::isnan(a->points[0].bound.b));
  // b's samples were not counted per context: no correction, as before.
  EXPECT_FALSE(b->points[0].phaseCorrected);
  // The whole line: its samples over both runs, 1000/s as its baseline's.
  EXPECT_NEAR(line->points[0].phaseFactor, 1.0, 1e-6);
  // A line's samples in a context are in its own count already.
  EXPECT_DOUBLE_EQ(analysis.samplesInLines, 252000);
  for (const LineSamples &hot : hottestLines(
           perCallerProfile("samples\tlocation=f.c:10 (via a)\tcount=63000\tfunction=worker\n")))
    EXPECT_EQ(hot.location, "f.c:10");
}

} // namespace
