//===- LineNameTest.cpp - Wait targets: names, analysis, wait-for edges ---===//
//
// splitLineName on CPU lines, wait targets and malformed names (never a CPU
// line with a garbage number); a wait target and the CPU line of the same
// source line analysed as two lines, the wait's curve not phase corrected;
// and the effect a wait-for edge to a pseudo-thread takes from the analysis.
//
//===----------------------------------------------------------------------===//
#include "LineName.h"
#include "Analysis.h"
#include "WaitEffects.h"

#include "LinearCurves.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

using namespace causal::profile;

namespace {

TEST(LineNameTest, SplitsCpuLines) {
  LineName n = splitLineName("src/app.c:42");
  EXPECT_TRUE(n.valid);
  EXPECT_EQ(n.file, "src/app.c");
  EXPECT_EQ(n.line, 42u);
  EXPECT_EQ(n.wait, WaitTargetKind::None);
  EXPECT_FALSE(n.isWait());
  EXPECT_EQ(n.location(), "src/app.c:42");
}

TEST(LineNameTest, SplitsWaitTargets) {
  struct Case {
    const char *name;
    WaitTargetKind kind;
    const char *word;
  } cases[] = {{"/src/app.c:42 (timer wait)", WaitTargetKind::Timer, "timer"},
               {"/src/app.c:42 (disk wait)", WaitTargetKind::Disk, "disk"},
               {"/src/app.c:42 (network wait)", WaitTargetKind::Network, "network"},
               {"/src/app.c:42 (other wait)", WaitTargetKind::Other, "other"}};
  for (const Case &c : cases) {
    LineName n = splitLineName(c.name);
    EXPECT_TRUE(n.valid) << c.name;
    EXPECT_EQ(n.file, "/src/app.c") << c.name;
    EXPECT_EQ(n.line, 42u) << c.name;
    EXPECT_EQ(n.wait, c.kind) << c.name;
    EXPECT_TRUE(n.isWait()) << c.name;
    EXPECT_EQ(n.location(), "/src/app.c:42") << c.name;
    EXPECT_STREQ(waitTargetKindName(c.kind), c.word);
    EXPECT_EQ(waitTargetName("/src/app.c:42", c.kind), c.name);
  }
  EXPECT_EQ(waitTargetName("a.c:1", WaitTargetKind::None), "a.c:1");
  EXPECT_STREQ(waitTargetKindName(WaitTargetKind::None), "");
}

TEST(LineNameTest, FileNamesWithSpacesColonsAndParentheses) {
  LineName n = splitLineName("my dir/file (copy 2).c:7");
  EXPECT_TRUE(n.valid);
  EXPECT_EQ(n.file, "my dir/file (copy 2).c");
  EXPECT_EQ(n.line, 7u);
  EXPECT_FALSE(n.isWait());

  n = splitLineName("my dir/file (copy 2).c:7 (network wait)");
  EXPECT_TRUE(n.valid);
  EXPECT_EQ(n.file, "my dir/file (copy 2).c");
  EXPECT_EQ(n.line, 7u);
  EXPECT_EQ(n.wait, WaitTargetKind::Network);

  // A file whose own name looks like a wait target: only the end counts.
  n = splitLineName("odd (timer wait).c:3");
  EXPECT_TRUE(n.valid);
  EXPECT_EQ(n.file, "odd (timer wait).c");
  EXPECT_FALSE(n.isWait());

  n = splitLineName("C:/x:y.c:12 (disk wait)");
  EXPECT_TRUE(n.valid);
  EXPECT_EQ(n.file, "C:/x:y.c");
  EXPECT_EQ(n.line, 12u);
  EXPECT_EQ(n.wait, WaitTargetKind::Disk);
}

TEST(LineNameTest, MalformedNamesAreInvalidNeverACpuLine) {
  const char *bad[] = {
      "a.c:12 (wait)",        // no kind
      "a.c:x (timer wait)",   // no number
      "a.c:12 (bogus wait)",  // unknown kind
      "a.c:12 (Timer wait)",  // kinds are lower case
      "a.c:12 ( wait)",       // empty kind
      "a.c:12 (timer wait",   // not closed
      "a.c:12 (timer)",       // not a wait
      "a.c:12  (timer wait)", // two spaces: "12 " is no number
      "a.c:12(timer wait)",   // no space
      "a.c:0 (timer wait)",   // lines start at 1
      "a.c:0",
      "a.c:4294967296", // above 2^32 - 1
      "a.c:99999999999999999999",
      "a.c:-3",
      "a.c:3 ",
      "a.c:",
      ":12",
      ":12 (timer wait)",
      "a.c",
      "",
      " wait)",
      "( wait)",
      "(timer wait)",
      " (timer wait)",
      ":1 (timer wait) (disk wait)",
  };
  for (const char *name : bad) {
    LineName n = splitLineName(name);
    EXPECT_FALSE(n.valid) << name;
    EXPECT_EQ(n.file, "") << name;
    EXPECT_EQ(n.line, 0u) << name;
    EXPECT_EQ(n.wait, WaitTargetKind::None) << name;
    EXPECT_EQ(n.location(), "") << name;
  }
  EXPECT_TRUE(splitLineName("a.c:4294967295").valid);
}

TEST(LineNameTest, NamesOrderByFileLineThenKind) {
  EXPECT_TRUE(lineNameLess("f.c:12", "f.c:100"));
  EXPECT_TRUE(lineNameLess("f.c:12", "f.c:12 (timer wait)"));
  EXPECT_TRUE(lineNameLess("f.c:12 (timer wait)", "f.c:12 (disk wait)"));
  EXPECT_TRUE(lineNameLess("f.c:12 (other wait)", "f.c:13"));
  EXPECT_TRUE(lineNameLess("f.c:99 (network wait)", "g.c:1"));
  EXPECT_TRUE(lineNameLess("z.c:1", "a.c:x")); // invalid names last
  EXPECT_FALSE(lineNameLess("f.c:12", "f.c:12"));
  EXPECT_FALSE(lineNameLess("a.c:x", "a.c:x"));
}

/// A CPU line and a wait target of the same source line, each with a
/// curve: the CPU line 0.2 s, the wait 0.6 s. The run's samples record
/// names the CPU line only (with its function), and a runtime record makes
/// the phase correction apply where it can.
Profile cpuAndWaitProfile() {
  return causal::test::linearCurvesProfile(
      {{"app.c:42", 0.2}, {"app.c:42 (timer wait)", 0.6}},
      "runtime\ttime=84000000000\nsamples\tlocation=app.c:42\tcount=84000\tfunction=worker\n",
      "wait.coz");
}

using causal::test::lineNamed;

TEST(LineNameTest, AWaitTargetIsALineOfItsOwn) {
  Analysis analysis = causal::test::analyzeCurves(cpuAndWaitProfile());
  ASSERT_EQ(analysis.lines.size(), 2u);
  const LineResult *cpu = lineNamed(analysis, "app.c:42");
  const LineResult *wait = lineNamed(analysis, "app.c:42 (timer wait)");
  ASSERT_TRUE(cpu && wait);
  // The wait ranks first (0.6 against 0.2).
  EXPECT_EQ(analysis.lines[0].line, "app.c:42 (timer wait)");
  ASSERT_EQ(wait->points.size(), 1u);
  const PointResult &w = wait->points[0];
  // Not phase corrected (no whole-run blocked time: Eq. 8 would scale it
  // to 0), with a note saying why; its curve is the measured 0.6 s.
  EXPECT_FALSE(w.phaseCorrected);
  EXPECT_NE(w.phaseNote.find("wait target"), std::string::npos) << w.phaseNote;
  EXPECT_NEAR(w.slope, 0.6, 1e-6);
  // Its bound is the in-phase one: selected samples x period / duration.
  EXPECT_TRUE(w.bound.known);
  EXPECT_TRUE(std::isnan(w.bound.b));
  EXPECT_FALSE(w.bound.exceeded());
  // The CPU line is corrected as before (factor 1: its samples rate is the
  // same over the run as in its baselines).
  ASSERT_EQ(cpu->points.size(), 1u);
  EXPECT_TRUE(cpu->points[0].phaseCorrected);
  EXPECT_NEAR(cpu->points[0].slope, 0.2, 1e-6);
  // The wait target's function is its call site's.
  ASSERT_TRUE(analysis.labels.count("app.c:42 (timer wait)"));
  EXPECT_EQ(analysis.labels.at("app.c:42 (timer wait)").function, "worker");
}

TEST(LineNameTest, EdgesToPseudoThreadsTakeTheirWaitTargetsEffect) {
  Analysis analysis = causal::test::analyzeCurves(cpuAndWaitProfile());

  WaitAnalysis waits;
  waits.vertices.resize(4);
  waits.vertices[0].kind = WaitVertexKind::Thread;
  waits.vertices[1].kind = WaitVertexKind::Timer;
  waits.vertices[2].kind = WaitVertexKind::Disk;
  waits.vertices[3].kind = WaitVertexKind::Thread;
  WaitEdge toTimer;
  toTimer.from = 0;
  toTimer.to = 1;
  toTimer.waitLines = {{"app.c:42", 5}, {"", 3}, {"other.c:1", 2}};
  WaitEdge toDisk = toTimer;
  toDisk.to = 2;
  WaitEdge toThread = toTimer;
  toThread.to = 3;

  std::vector<WaitTargetEffect> effects = waitEdgeEffects(waits, toTimer, analysis);
  ASSERT_EQ(effects.size(), 1u);
  EXPECT_EQ(effects[0].line, "app.c:42");
  EXPECT_EQ(effects[0].target, "app.c:42 (timer wait)");
  EXPECT_EQ(effects[0].rank, 1u);
  ASSERT_TRUE(effects[0].point);
  EXPECT_EQ(effects[0].point, &analysis.lines[0].points[0]); // the analysis' own numbers
  ASSERT_TRUE(effects[0].atHalf);
  EXPECT_NEAR(effects[0].atHalf->programSpeedup, 0.3, 1e-6);
  EXPECT_EQ(effects[0].notEnough, nullptr);

  // No disk experiments on that line, and a thread's edge has no target.
  EXPECT_TRUE(waitEdgeEffects(waits, toDisk, analysis).empty());
  EXPECT_TRUE(waitEdgeEffects(waits, toThread, analysis).empty());
  EXPECT_EQ(waitTargetKindOf(WaitVertexKind::Unknown), WaitTargetKind::Other);
  EXPECT_EQ(waitTargetKindOf(WaitVertexKind::Network), WaitTargetKind::Network);
  EXPECT_EQ(waitTargetKindOf(WaitVertexKind::Thread), WaitTargetKind::None);
}

} // namespace
