//===- PathsTest.cpp - The paths sidecar reader and the call-path trees ---===//
//
// Synthetic sidecars (PathsTestWriter.h) with known answers: the reader's
// round trip, its errors, several and re-written runs, the CPU estimate; the
// trees (merging, both directions, shares, limits) and the folded lines of a
// helper called from three callers in the ratio 1:2:7.
//
//===----------------------------------------------------------------------===//
#include "PathTree.h"
#include "PathsReader.h"
#include "PathsTestWriter.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

using namespace causal::profile;
using causal::test::Frame;
using causal::test::PathsWriter;
using causal::test::PathValues;
namespace pf = causal::paths_format;

namespace {

constexpr uint64_t kRun = 0xABC;
constexpr uint64_t kOtherRun = 0xDEF;

PathsFile readOk(const std::string &bytes) {
  PathsFile file;
  std::string error;
  EXPECT_TRUE(readPathsData(bytes, "p.coz.paths", file, error)) << error;
  return file;
}

std::string readError(const std::string &bytes) {
  PathsFile file;
  std::string error;
  EXPECT_FALSE(readPathsData(bytes, "p.coz.paths", file, error));
  return error;
}

PathValues calls(uint64_t n, uint64_t wallNs = 0, uint64_t samples = 0) {
  PathValues v;
  v.calls = n;
  v.wallNs = wallNs;
  v.samples = samples;
  return v;
}

/// helper() called from c1, c2 and c3 (1, 2 and 7 calls), each called from
/// its own line of main. Wall times: c1 1000 ns, c2 200 ns, c3 700 ns (by
/// wall time: c1, c3, c2). Samples: c2 only (4). All times \p scale.
void threeCallers(PathsWriter &w, uint64_t run, uint64_t scale = 1) {
  w.function(run, 7, "_Z6helperv", "helper()");
  w.path(run, 1, 7, {{"main", "main.c:40"}, {"c1", "main.c:10"}, {"helper()", "helper.c:3"}},
         calls(1 * scale, 1000 * scale));
  w.path(run, 2, 7, {{"main", "main.c:41"}, {"c2", "main.c:20"}, {"helper()", "helper.c:3"}},
         calls(2 * scale, 200 * scale, 4 * scale));
  w.path(run, 3, 7, {{"main", "main.c:42"}, {"c3", "main.c:30"}, {"helper()", "helper.c:3"}},
         calls(7 * scale, 700 * scale));
}

std::string threeCallersFile() {
  PathsWriter w;
  w.begin(kRun, pf::kCpuClock, 1000000, 100, "./prog");
  threeCallers(w, kRun);
  w.end(kRun, 3);
  return w.bytes;
}

std::vector<std::string> childLabels(const PathNode &node) {
  std::vector<std::string> labels;
  for (const PathNode &child : node.children)
    labels.push_back(child.label());
  return labels;
}

// ---- The reader -------------------------------------------------------------

TEST(PathsReader, RoundTrip) {
  PathsWriter w;
  w.begin(kRun, pf::kCpuClock, 250000, 4242, "/bin/prog");
  w.function(kRun, 1, "_Z3fooi", "foo(int)");
  w.function(kRun, 2, "bar", "", /*enabled=*/false);
  PathValues v;
  v.calls = 3;
  v.recursiveCalls = 1;
  v.cpuNs = 30;
  v.wallNs = 40;
  v.blockedNs = 5;
  v.samples = 2;
  v.threads = 2;
  w.path(kRun, 9, 1, {{"main", "m.c:5"}, {"", ""}, {"foo(int)", "f.c:1"}}, v, pf::kPathTruncated);
  w.end(kRun, 1, 0, 1);
  PathsFile file = readOk(w.bytes);
  EXPECT_EQ(file.path, "p.coz.paths");
  EXPECT_EQ(file.version, pf::kVersion);
  ASSERT_EQ(file.runs.size(), 1u);
  const PathRun &run = file.runs[0];
  EXPECT_EQ(run.id, kRun);
  EXPECT_EQ(run.pid, 4242u);
  EXPECT_EQ(run.program, "/bin/prog");
  EXPECT_EQ(run.samplePeriodNs, 250000u);
  EXPECT_FALSE(run.cpuEstimated);
  EXPECT_TRUE(run.hasEnd);
  EXPECT_EQ(run.writes, 1u);
  EXPECT_EQ(run.truncatedWalks, 1u);
  ASSERT_EQ(run.functions.size(), 2u);
  EXPECT_EQ(run.functions.at(1).name, "foo(int)");
  EXPECT_EQ(run.functions.at(1).symbol, "_Z3fooi");
  EXPECT_TRUE(run.functions.at(1).enabled);
  EXPECT_FALSE(run.functions.at(2).enabled);
  EXPECT_EQ(run.functions.at(2).displayName(), "bar"); // no demangled name: the symbol
  ASSERT_EQ(run.paths.size(), 1u);
  const PathRecord &p = run.paths[0];
  EXPECT_EQ(p.id, 9u);
  EXPECT_EQ(p.function, 1u);
  EXPECT_TRUE(p.truncated);
  ASSERT_EQ(p.frames.size(), 3u);
  EXPECT_EQ(p.frames[0], (PathFrame{"main", "m.c:5"}));
  EXPECT_EQ(p.frames[1], (PathFrame{"", ""})); // unknown function and location
  EXPECT_EQ(p.frames[2], (PathFrame{"foo(int)", "f.c:1"}));
  EXPECT_EQ(p.calls, 3u);
  EXPECT_EQ(p.recursiveCalls, 1u);
  EXPECT_EQ(p.cpuNs, 30u); // measured: as recorded
  EXPECT_EQ(p.wallNs, 40u);
  EXPECT_EQ(p.blockedNs, 5u);
  EXPECT_EQ(p.samples, 2u);
  EXPECT_EQ(p.threads, 2u);
  EXPECT_TRUE(file.warnings.empty()) << file.warnings[0];
}

TEST(PathsReader, CpuEstimatedFromSamplesWithoutTheCpuClock) {
  PathsWriter w;
  w.begin(kRun, /*flags=*/0, /*samplePeriodNs=*/1000000);
  w.function(kRun, 1, "f", "f");
  PathValues v = calls(1, 50000000, 7);
  v.cpuNs = 123; // not measured: ignored
  w.path(kRun, 1, 1, {{"main", ""}, {"f", ""}}, v);
  w.end(kRun, 1);
  PathsFile file = readOk(w.bytes);
  ASSERT_EQ(file.runs.size(), 1u);
  EXPECT_TRUE(file.runs[0].cpuEstimated);
  EXPECT_EQ(file.runs[0].paths[0].cpuNs, 7000000u); // 7 samples x 1 ms
}

TEST(PathsReader, SeveralRunsAppended) {
  PathsWriter w;
  w.begin(kRun, 0, 1000, 1);
  w.begin(kOtherRun, pf::kCpuClock, 1000, 2);
  threeCallers(w, kRun);
  threeCallers(w, kOtherRun, 10);
  w.end(kOtherRun, 3);
  w.end(kRun, 3);
  PathsFile file = readOk(w.bytes);
  ASSERT_EQ(file.runs.size(), 2u);
  EXPECT_EQ(file.runs[0].pid, 1u);
  EXPECT_EQ(file.runs[1].pid, 2u);
  EXPECT_EQ(file.runs[0].paths.size(), 3u);
  EXPECT_EQ(file.runs[1].paths[2].calls, 70u);
  EXPECT_TRUE(file.runs[0].cpuEstimated);
  EXPECT_FALSE(file.runs[1].cpuEstimated);
}

TEST(PathsReader, ARunWrittenAgainKeepsItsLastState) {
  // The periodic flush: the run's state is written whole three times; a
  // second run ends between the writes. The run keeps its place (first)
  // and only what followed its last RunBegin.
  PathsWriter w;
  w.begin(kRun, pf::kCpuClock, 1000, 7);
  threeCallers(w, kRun);
  w.end(kRun, 3);
  w.begin(kOtherRun, pf::kCpuClock, 1000, 8);
  w.function(kOtherRun, 1, "g", "g");
  w.end(kOtherRun, 0);
  w.begin(kRun, pf::kCpuClock, 1000, 7);
  threeCallers(w, kRun, 2);
  w.end(kRun, 3);
  w.begin(kRun, pf::kCpuClock, 1000, 7);
  threeCallers(w, kRun, 5);
  // No RunEnd after the last write: the process died during its last part.
  PathsFile file = readOk(w.bytes);
  ASSERT_EQ(file.runs.size(), 2u);
  const PathRun &run = file.runs[0];
  EXPECT_EQ(run.pid, 7u);
  EXPECT_EQ(run.writes, 3u);
  ASSERT_EQ(run.paths.size(), 3u);
  EXPECT_EQ(run.paths[0].calls, 5u);
  EXPECT_EQ(run.paths[2].calls, 35u);
  EXPECT_FALSE(run.hasEnd);
  EXPECT_EQ(file.runs[1].pid, 8u);
  ASSERT_EQ(file.warnings.size(), 1u);
  EXPECT_NE(file.warnings[0].find("run 1 (pid 7) has no RunEnd"), std::string::npos)
      << file.warnings[0];
}

/// A directory of its own under $TMPDIR, removed with what it holds.
struct TempDir {
  std::string path;
  TempDir() {
    std::string pattern =
        (getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp") + std::string("/pathsXXXXXX");
    path = mkdtemp(&pattern[0]) ? pattern : "";
  }
  ~TempDir() {
    if (!path.empty())
      std::system(("rm -rf '" + path + "'").c_str());
  }
  void write(const std::string &name, const std::string &bytes) const {
    std::ofstream(path + "/" + name, std::ios::binary) << bytes;
  }
};

// A run's part files (the periodic flush, live control: causal/
// paths_format.h): a run comes from PROFILE.paths when its write there has
// its RunEnd, else from its part file; runs only in part files (still going,
// or killed) come after; a .tmp part is being written and is not read; a
// damaged part file is a warning.
TEST(PathsReader, PartFilesOfRunsStillGoingOrKilled) {
  TempDir dir;
  ASSERT_FALSE(dir.path.empty());
  const uint64_t kCutRun = 0x123, kLiveRun = 0x456;
  PathsWriter main;
  main.begin(kRun, 0, 1000, 1); // ended: its part file is stale
  threeCallers(main, kRun);
  main.end(kRun, 3);
  main.begin(kCutRun, 0, 1000, 2); // its append was cut off
  threeCallers(main, kCutRun);
  dir.write("p.coz.paths", main.bytes);
  auto part = [](uint64_t run, uint32_t pid, uint64_t scale) {
    PathsWriter w;
    w.begin(run, 0, 1000, pid);
    threeCallers(w, run, scale);
    w.end(run, 3);
    return w.bytes;
  };
  dir.write("p.coz.paths.part-abc", part(kRun, 1, 100));
  dir.write("p.coz.paths.part-123", part(kCutRun, 2, 10));
  dir.write("p.coz.paths.part-456", part(kLiveRun, 3, 5));
  dir.write("p.coz.paths.part-789.tmp", "half a file");
  dir.write("p.coz.paths.part-999", "not a sidecar");
  dir.write("q.coz.paths.part-456", part(kOtherRun, 4, 1)); // another profile's

  EXPECT_EQ(pathsPartFiles(dir.path + "/p.coz.paths").size(), 4u);
  PathsFile file;
  std::string error;
  ASSERT_TRUE(readPathsFile(dir.path + "/p.coz.paths", file, error)) << error;
  ASSERT_EQ(file.runs.size(), 3u);
  EXPECT_EQ(file.runs[0].pid, 1u);
  EXPECT_EQ(file.runs[0].paths[2].calls, 7u) << "PROFILE.paths's end is the newer";
  EXPECT_EQ(file.runs[1].pid, 2u);
  EXPECT_TRUE(file.runs[1].hasEnd);
  EXPECT_EQ(file.runs[1].paths[2].calls, 70u) << "the part file is whole, the append was not";
  EXPECT_EQ(file.runs[2].pid, 3u);
  EXPECT_EQ(file.runs[2].paths[2].calls, 35u);
  std::string warnings;
  for (const std::string &warning : file.warnings)
    warnings += warning + "\n";
  EXPECT_NE(warnings.find("p.coz.paths.part-999: "), std::string::npos) << warnings;
  EXPECT_NE(warnings.find("(a part file: left out)"), std::string::npos) << warnings;
  EXPECT_EQ(warnings.find(".tmp"), std::string::npos) << warnings;

  // No PROFILE.paths yet (every process still runs): the part files alone.
  TempDir live;
  live.write("p.coz.paths.part-456", part(kLiveRun, 3, 5));
  PathsFile only;
  ASSERT_TRUE(readPathsFile(live.path + "/p.coz.paths", only, error)) << error;
  ASSERT_EQ(only.runs.size(), 1u);
  EXPECT_EQ(only.runs[0].pid, 3u);
  EXPECT_EQ(only.version, pf::kVersion);
  // Neither: the missing file is named.
  PathsFile none;
  EXPECT_FALSE(readPathsFile(live.path + "/q.coz.paths", none, error));
  EXPECT_NE(error.find("q.coz.paths: No such file"), std::string::npos) << error;
}

TEST(PathsReader, UnknownChunkTypesAreSkipped) {
  PathsWriter w;
  w.begin(kRun, pf::kCpuClock);
  w.chunk(99, kRun, std::string(12, 'x'));
  threeCallers(w, kRun);
  w.chunk(99, kRun, "");
  w.end(kRun, 3);
  PathsFile file = readOk(w.bytes);
  ASSERT_EQ(file.runs.size(), 1u);
  EXPECT_EQ(file.runs[0].paths.size(), 3u);
  ASSERT_EQ(file.warnings.size(), 1u); // once per type
  EXPECT_EQ(file.warnings[0], "p.coz.paths: skipped chunks of unknown type 99 (first at offset 80; "
                              "written by a newer causal?)");
}

TEST(PathsReader, DroppedEntriesAreAWarning) {
  PathsWriter w;
  w.begin(kRun, pf::kCpuClock);
  threeCallers(w, kRun);
  w.end(kRun, 3, /*dropped=*/12);
  PathsFile file = readOk(w.bytes);
  ASSERT_EQ(file.warnings.size(), 1u);
  EXPECT_NE(file.warnings[0].find("12 entries were not recorded"), std::string::npos);
}

TEST(PathsReader, Errors) {
  EXPECT_EQ(readError(""), "p.coz.paths: offset 0: the file is empty: the program recorded no "
                           "paths (was it run with `causal run --paths`?)");
  EXPECT_EQ(readError("CAUSALP"),
            "p.coz.paths: offset 0: too short for a paths sidecar header (7 bytes)");
  {
    PathsWriter w;
    w.bytes[6] = 'W';
    EXPECT_EQ(readError(w.bytes),
              "p.coz.paths: offset 0: not a paths sidecar (bad magic; expected \"CAUSALP\")");
  }
  EXPECT_EQ(readError(PathsWriter(pf::kVersion + 1).bytes),
            "p.coz.paths: offset 8: written in format version 3, newer than this reader's 2: "
            "read it with the causal that recorded it");
  EXPECT_EQ(readError(PathsWriter(0).bytes),
            "p.coz.paths: offset 8: format version 0 does not exist");
  {
    // Truncated: the file ends inside the last chunk, and inside a header.
    std::string whole = threeCallersFile();
    EXPECT_NE(readError(whole.substr(0, whole.size() - 3))
                  .find("truncated chunk: it says 32 bytes follow, the file has 29"),
              std::string::npos);
    EXPECT_NE(readError(whole.substr(0, whole.size() - 40)).find("truncated chunk header"),
              std::string::npos);
  }
  {
    PathsWriter w;
    w.function(kRun, 1, "", "");
    EXPECT_EQ(readError(w.bytes), "p.coz.paths: offset 16: Function chunk of run 0xabc, which no "
                                  "RunBegin chunk before it opened");
  }
  {
    // A frame naming string id 77, never defined.
    PathsWriter w;
    w.begin(kRun);
    w.function(kRun, 1, "f", "f");
    w.pathRaw(kRun, 4, 1, 2, {{w.text(kRun, "main"), 0}, {77, 0}}, calls(1));
    size_t at = w.bytes.size() - (16 + 72 + 16); // the Path chunk, the last
    EXPECT_EQ(readError(w.bytes), "p.coz.paths: offset " + std::to_string(at) +
                                      ": path 4 (frame 1) uses string id 77, which no String "
                                      "chunk of its run defined before");
  }
  {
    PathsWriter w;
    w.begin(kRun);
    w.function(kRun, 1, "f", "f");
    w.path(kRun, 4, 2, {{"f", ""}}, calls(1));
    EXPECT_NE(readError(w.bytes).find(": path 4 is of function id 2, which no Function chunk of "
                                      "its run defined before"),
              std::string::npos);
  }
  {
    PathsWriter w;
    w.begin(kRun);
    w.function(kRun, 1, "f", "f");
    w.pathRaw(kRun, 4, 1, 0, {}, calls(1));
    EXPECT_NE(readError(w.bytes).find(": path 4 has depth 0"), std::string::npos);
  }
  {
    PathsWriter w;
    w.begin(kRun);
    w.function(kRun, 1, "f", "f");
    uint32_t f = w.text(kRun, "f");
    w.pathRaw(kRun, 4, 1, 3, {{f, 0}, {f, 0}}, calls(1));
    EXPECT_NE(readError(w.bytes).find(": path 4 says depth 3 (24 bytes of frames), its chunk "
                                      "holds 16 bytes of frames"),
              std::string::npos);
  }
  {
    // A depth so large that depth x 8 overflows 32 bits.
    PathsWriter w;
    w.begin(kRun);
    w.function(kRun, 1, "f", "f");
    w.pathRaw(kRun, 4, 1, 0x20000000u, {}, calls(1));
    EXPECT_NE(readError(w.bytes).find("says depth 536870912 (4294967296 bytes of frames)"),
              std::string::npos);
  }
  {
    PathsWriter w;
    w.begin(kRun);
    w.chunk(uint32_t(pf::ChunkType::Path), kRun, std::string(20, '\0'));
    EXPECT_NE(readError(w.bytes).find("Path chunk of 20 bytes; its head alone has 72"),
              std::string::npos);
  }
  {
    PathsWriter w;
    w.begin(kRun);
    w.function(kRun, 1, "f", "f");
    w.path(kRun, 4, 1, {{"f", ""}}, calls(1));
    w.path(kRun, 4, 1, {{"f", ""}}, calls(1));
    EXPECT_NE(readError(w.bytes).find("path id 4 used twice in run 0xabc"), std::string::npos);
  }
  {
    PathsWriter w;
    w.begin(kRun);
    w.chunk(uint32_t(pf::ChunkType::RunEnd), kRun, std::string(8, '\0'));
    EXPECT_NE(readError(w.bytes).find("RunEnd chunk of 8 bytes; it has 32"), std::string::npos);
  }
  {
    PathsWriter w;
    w.begin(kRun);
    w.end(kRun, 0);
    w.end(kRun, 0);
    EXPECT_NE(readError(w.bytes).find("a second RunEnd for run 0xabc"), std::string::npos);
  }
}

// ---- The trees ----------------------------------------------------------------

TEST(PathTree, CallersTreeOfAHelperCalledFromThreeCallers) {
  PathsFile file = readOk(threeCallersFile());
  PathsAnalysis a = analyzePaths(file, {});
  EXPECT_EQ(a.runs, 1u);
  EXPECT_EQ(a.cpu, CpuSource::Measured);
  ASSERT_EQ(a.functions.size(), 1u);
  const FunctionPaths &f = a.functions[0];
  EXPECT_EQ(f.name, "helper()");
  EXPECT_EQ(f.symbol, "_Z6helperv");
  EXPECT_EQ(f.total.calls, 10u);
  EXPECT_EQ(f.total.wallNs, 1900u);
  EXPECT_EQ(f.paths.size(), 3u);
  // Root: the function itself, at its entry's location.
  EXPECT_EQ(f.callers.label(), "helper() (helper.c:3)");
  EXPECT_EQ(f.callers.metrics.calls, 10u);
  EXPECT_EQ(childLabels(f.callers),
            (std::vector<std::string>{"c3 (main.c:30)", "c2 (main.c:20)", "c1 (main.c:10)"}));
  const PathNode &c3 = f.callers.children[0];
  EXPECT_EQ(c3.metrics.calls, 7u);
  EXPECT_DOUBLE_EQ(f.share(c3.metrics, PathMetric::Calls), 0.7);
  EXPECT_DOUBLE_EQ(f.share(f.callers.children[1].metrics, PathMetric::Calls), 0.2);
  EXPECT_DOUBLE_EQ(f.share(f.callers.children[2].metrics, PathMetric::Calls), 0.1);
  EXPECT_DOUBLE_EQ(f.share(c3.metrics, PathMetric::WallNs), 700.0 / 1900);
  EXPECT_DOUBLE_EQ(f.share(c3.metrics, PathMetric::Samples), 0); // c2 has all 4 samples
  EXPECT_EQ(childLabels(c3), (std::vector<std::string>{"main (main.c:42)"}));
  EXPECT_TRUE(c3.children[0].children.empty());
}

TEST(PathTree, TopDownTree) {
  PathsAnalysis a = analyzePaths(readOk(threeCallersFile()), {});
  const FunctionPaths &f = a.functions[0];
  EXPECT_EQ(f.topDown.metrics.calls, 10u);
  // Three mains (their call lines differ), each with its caller, then helper.
  EXPECT_EQ(childLabels(f.topDown),
            (std::vector<std::string>{"main (main.c:42)", "main (main.c:41)", "main (main.c:40)"}));
  const PathNode &main42 = f.topDown.children[0];
  EXPECT_EQ(childLabels(main42), (std::vector<std::string>{"c3 (main.c:30)"}));
  EXPECT_EQ(childLabels(main42.children[0]), (std::vector<std::string>{"helper() (helper.c:3)"}));
  EXPECT_EQ(main42.children[0].children[0].metrics.calls, 7u);
}

TEST(PathTree, SameFramesMergeAcrossPathsAndRuns) {
  // Two runs of the same program: the same paths sum. Within a run, c1 and
  // c2 are called from one line of main: main merges in the callers tree
  // under each caller and at the top-down root.
  PathsWriter w;
  for (uint64_t run : {kRun, kOtherRun}) {
    w.begin(run, pf::kCpuClock);
    w.function(run, 3, "_Z6helperv", "helper()");
    w.path(run, 1, 3, {{"main", "m.c:9"}, {"c1", "m.c:1"}, {"helper()", "h.c:3"}}, calls(1));
    w.path(run, 2, 3, {{"main", "m.c:9"}, {"c2", "m.c:2"}, {"helper()", "h.c:3"}}, calls(4));
    w.end(run, 2);
  }
  PathsAnalysis a = analyzePaths(readOk(w.bytes), {});
  EXPECT_EQ(a.runs, 2u);
  ASSERT_EQ(a.functions.size(), 1u);
  const FunctionPaths &f = a.functions[0];
  EXPECT_EQ(f.total.calls, 10u);
  EXPECT_EQ(f.paths.size(), 2u); // the runs' paths merged
  ASSERT_EQ(f.topDown.children.size(), 1u);
  EXPECT_EQ(f.topDown.children[0].label(), "main (m.c:9)");
  EXPECT_EQ(f.topDown.children[0].metrics.calls, 10u);
  EXPECT_EQ(f.topDown.children[0].paths, 2u);
  EXPECT_EQ(childLabels(f.callers), (std::vector<std::string>{"c2 (m.c:2)", "c1 (m.c:1)"}));
  EXPECT_EQ(f.callers.children[0].metrics.calls, 8u);

  // Only the second run.
  PathsAnalysisOptions second;
  second.runs = {1};
  PathsAnalysis b = analyzePaths(readOk(w.bytes), second);
  EXPECT_EQ(b.runs, 1u);
  EXPECT_EQ(b.functions[0].total.calls, 5u);
  second.runs = {5};
  EXPECT_EQ(analyzePaths(readOk(w.bytes), second).badRuns, (std::vector<std::string>{"6"}));
}

TEST(PathTree, MetricSortsTreesAndFunctions) {
  PathsWriter w;
  w.begin(kRun, pf::kCpuClock);
  threeCallers(w, kRun);
  w.function(kRun, 8, "_Z4tinyv", "tiny()");
  w.path(kRun, 10, 8, {{"main", "main.c:50"}, {"tiny()", "t.c:1"}}, calls(100, 5));
  w.end(kRun, 4);
  PathsFile file = readOk(w.bytes);
  PathsAnalysisOptions options;
  PathsAnalysis byCalls = analyzePaths(file, options);
  ASSERT_EQ(byCalls.functions.size(), 2u);
  EXPECT_EQ(byCalls.functions[0].name, "tiny()");
  options.metric = PathMetric::WallNs;
  PathsAnalysis byWall = analyzePaths(file, options);
  EXPECT_EQ(byWall.metric, PathMetric::WallNs);
  EXPECT_EQ(byWall.functions[0].name, "helper()");
  EXPECT_EQ(childLabels(byWall.functions[0].callers),
            (std::vector<std::string>{"c1 (main.c:10)", "c3 (main.c:30)", "c2 (main.c:20)"}));
  options.metric = PathMetric::Samples; // helper has 4, tiny none; ties (0) sorted by label
  PathsAnalysis bySamples = analyzePaths(file, options);
  EXPECT_EQ(bySamples.functions[0].name, "helper()");
  EXPECT_EQ(childLabels(bySamples.functions[0].callers),
            (std::vector<std::string>{"c2 (main.c:20)", "c1 (main.c:10)", "c3 (main.c:30)"}));
}

TEST(PathTree, FunctionPatterns) {
  PathsWriter w;
  w.begin(kRun, pf::kCpuClock);
  threeCallers(w, kRun);
  w.function(kRun, 8, "_Z4tinyv", "tiny()", /*enabled=*/false);
  w.end(kRun, 3);
  PathsFile file = readOk(w.bytes);
  PathsAnalysisOptions options;
  options.functions = {"help*"};
  PathsAnalysis a = analyzePaths(file, options);
  ASSERT_EQ(a.functions.size(), 1u);
  EXPECT_EQ(a.functions[0].name, "helper()");
  options.functions = {"_Z4tiny*", "nothing"}; // the linkage name matches too
  a = analyzePaths(file, options);
  ASSERT_EQ(a.functions.size(), 1u);
  EXPECT_EQ(a.functions[0].name, "tiny()");
  EXPECT_FALSE(a.functions[0].enabled);
  EXPECT_TRUE(a.functions[0].paths.empty());
  EXPECT_EQ(a.functions[0].cpu, CpuSource::None);
  EXPECT_EQ(a.unmatchedPatterns, (std::vector<std::string>{"nothing"}));
}

TEST(PathTree, TruncatedPathsGetAPseudoFrame) {
  PathsWriter w;
  w.begin(kRun, pf::kCpuClock);
  w.function(kRun, 1, "f", "f");
  w.path(kRun, 1, 1, {{"g", "g.c:2"}, {"f", "f.c:1"}}, calls(3), pf::kPathTruncated);
  w.path(kRun, 2, 1, {{"g", "g.c:2"}, {"f", "f.c:1"}}, calls(1));
  w.end(kRun, 2, 0, 3);
  PathsAnalysis a = analyzePaths(readOk(w.bytes), {});
  const FunctionPaths &f = a.functions[0];
  EXPECT_EQ(f.truncatedPaths, 1u);
  EXPECT_EQ(a.truncatedWalks, 3u);
  EXPECT_EQ(childLabels(f.topDown), (std::vector<std::string>{"[truncated]", "g (g.c:2)"}));
  ASSERT_EQ(f.callers.children.size(), 1u); // g merges; the pseudo-frame is above it
  EXPECT_EQ(childLabels(f.callers.children[0]), (std::vector<std::string>{"[truncated]"}));
  EXPECT_EQ(
      foldedLines(f, PathMetric::Calls, true),
      (std::vector<std::string>{"[truncated];g (g.c:2);f (f.c:1) 3", "g (g.c:2);f (f.c:1) 1"}));
}

TEST(PathTree, VeryDeepPathsKeepTheirInnermostFrames) {
  // 100,000 frames: the tree keeps the innermost kMaxTreeDepth under the
  // pseudo-frame, and walking it (JSON, text, HTML) stays shallow.
  PathsWriter w;
  w.begin(kRun, pf::kCpuClock);
  w.function(kRun, 1, "f", "f");
  std::vector<Frame> frames;
  for (int i = 0; i < 100000; ++i)
    frames.push_back({"r", "r.c:" + std::to_string(i % 3)});
  frames.push_back({"f", "f.c:1"});
  w.path(kRun, 1, 1, frames, calls(1));
  PathsFile file = readOk(w.bytes);
  ASSERT_EQ(file.runs[0].paths[0].frames.size(), 100001u);
  PathsAnalysis a = analyzePaths(file, {});
  const FunctionPaths &f = a.functions[0];
  EXPECT_EQ(f.truncatedPaths, 1u);
  ASSERT_EQ(f.paths.size(), 1u);
  ASSERT_EQ(f.paths[0].frames.size(), kMaxTreeDepth + 1);
  EXPECT_EQ(f.paths[0].frames.front().function, "[truncated]");
  EXPECT_EQ(f.paths[0].frames.back(), (PathFrame{"f", "f.c:1"}));
  EXPECT_EQ(f.paths[0].frames[1], (PathFrame{"r", "r.c:" + std::to_string((100000 - 1023) % 3)}));
  size_t depth = 0;
  for (const PathNode *node = &f.callers; !node->children.empty(); node = &node->children[0])
    ++depth;
  EXPECT_EQ(depth, kMaxTreeDepth); // 1023 callers and the pseudo-frame
}

TEST(PathTree, CpuSourceOverRuns) {
  PathsWriter w;
  w.begin(kRun, 0, 2000);
  threeCallers(w, kRun);
  w.begin(kOtherRun, pf::kCpuClock, 1000);
  threeCallers(w, kOtherRun);
  PathsFile file = readOk(w.bytes);
  EXPECT_EQ(analyzePaths(file, {}).cpu, CpuSource::Mixed);
  EXPECT_EQ(analyzePaths(file, {}).functions[0].cpu, CpuSource::Mixed);
  EXPECT_EQ(analyzePaths(file, {}).samplePeriodNs, 2000u);
  PathsAnalysisOptions first;
  first.runs = {0};
  PathsAnalysis a = analyzePaths(file, first);
  EXPECT_EQ(a.cpu, CpuSource::Estimated);
  EXPECT_EQ(a.functions[0].total.cpuNs, 4u * 2000); // 4 samples x 2 us
}

TEST(PathTree, ShownChildrenByShareAndDepth) {
  PathsAnalysis a = analyzePaths(readOk(threeCallersFile()), {});
  const FunctionPaths &f = a.functions[0];
  TreeLimits limits;
  limits.minShare = 0.15; // c1 (10 %) hidden
  ShownChildren shown = shownChildren(f, f.callers, 0, PathMetric::Calls, limits);
  ASSERT_EQ(shown.shown.size(), 2u);
  EXPECT_EQ(shown.shown[1]->label(), "c2 (main.c:20)");
  EXPECT_EQ(shown.hidden, 1u);
  EXPECT_EQ(shown.hiddenSum.calls, 1u);
  limits = TreeLimits();
  limits.maxDepth = 1; // the callers, not theirs
  EXPECT_EQ(shownChildren(f, f.callers, 0, PathMetric::Calls, limits).shown.size(), 3u);
  shown = shownChildren(f, f.callers.children[0], 1, PathMetric::Calls, limits);
  EXPECT_TRUE(shown.shown.empty());
  EXPECT_EQ(shown.hidden, 1u);
}

// ---- Folded lines -------------------------------------------------------------

TEST(PathTree, FoldedLinesExact) {
  PathsAnalysis a = analyzePaths(readOk(threeCallersFile()), {});
  const FunctionPaths &f = a.functions[0];
  EXPECT_EQ(foldedLines(f, PathMetric::Calls, true),
            (std::vector<std::string>{
                "main (main.c:40);c1 (main.c:10);helper() (helper.c:3) 1",
                "main (main.c:41);c2 (main.c:20);helper() (helper.c:3) 2",
                "main (main.c:42);c3 (main.c:30);helper() (helper.c:3) 7",
            }));
  EXPECT_EQ(foldedLines(f, PathMetric::WallNs, false),
            (std::vector<std::string>{"main;c1;helper() 1000", "main;c2;helper() 200",
                                      "main;c3;helper() 700"}));
  // Lines whose value is 0 are left out: only c2 has samples.
  EXPECT_EQ(foldedLines(f, PathMetric::Samples, false),
            (std::vector<std::string>{"main;c2;helper() 4"}));
  EXPECT_TRUE(foldedLines(f, PathMetric::BlockedNs, true).empty());
}

TEST(PathTree, FoldedLinesWithoutLocationsMerge) {
  PathsWriter w;
  w.begin(kRun, pf::kCpuClock);
  w.function(kRun, 1, "f", "f");
  w.path(kRun, 1, 1, {{"main", "m.c:1"}, {"f", "f.c:1"}}, calls(2));
  w.path(kRun, 2, 1, {{"main", "m.c:2"}, {"f", "f.c:1"}}, calls(3));
  PathsAnalysis a = analyzePaths(readOk(w.bytes), {});
  EXPECT_EQ(foldedLines(a.functions[0], PathMetric::Calls, false),
            (std::vector<std::string>{"main;f 5"}));
}

TEST(PathTree, FoldedFrameEscapes) {
  EXPECT_EQ(foldedFrame({"operator()<a;b>", "x;y.c:3"}, true), "operator()<a:b> (x:y.c:3)");
  EXPECT_EQ(foldedFrame({"two\nlines\tand tab", ""}, true), "two lines and tab");
  EXPECT_EQ(foldedFrame({"", "a.c:1"}, true), "[unknown] (a.c:1)");
  EXPECT_EQ(foldedFrame({"", "a.c:1"}, false), "[unknown]");
}

TEST(PathTree, MetricNames) {
  for (PathMetric m : {PathMetric::Calls, PathMetric::CpuNs, PathMetric::WallNs,
                       PathMetric::BlockedNs, PathMetric::Samples}) {
    PathMetric parsed = PathMetric::Calls;
    EXPECT_TRUE(parsePathMetric(pathMetricName(m), parsed));
    EXPECT_EQ(parsed, m);
  }
  PathMetric parsed;
  EXPECT_FALSE(parsePathMetric("cpu", parsed));
}

} // namespace
