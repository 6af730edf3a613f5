//===- test/unit/runtime/ProfileWriterTest.cpp ----------------------------===//

#include "ProfileWriter.h"
#include "ModuleRegistry.h"
#include "ProfileParse.h"
#include "TestLineTable.h"

#include <gtest/gtest.h>

#include <memory>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

using causal::rt::ModuleRegistry;
using causal::rt::ResolvedAddress;
using causal::rt::TextBuffer;
using causal::test::InMemoryLineTable;
using causal::test::LineTableSpec;
using causal::test::parseProfile;
using causal::test::ProfileRecord;

namespace {

__attribute__((noinline)) int someCode(int x) { return x + 1; }

std::string temporaryPath(const char *name) {
  std::string dir = ::testing::TempDir();
  if (dir.empty() || dir.back() != '/')
    dir += '/';
  std::string path = dir + name + "." + std::to_string(getpid());
  unlink(path.c_str());
  return path;
}

TEST(ProfileWriterTest, RendersStartupRuntimeAndNonZeroSamples) {
  auto registry = std::make_unique<ModuleRegistry>();
  uintptr_t code = reinterpret_cast<uintptr_t>(&someCode);
  LineTableSpec spec;
  spec.code_vaddr = code;
  spec.rows = {{0, 0}, {8, 1}, {16, 2}, {24, CAUSAL_NO_LINE}};
  spec.lines = {{0, 11}, {1, 22}, {0, 33}};
  spec.files = {"/src/main.cpp", "/src/util.h"};
  InMemoryLineTable table(spec);
  ASSERT_EQ(registry->registerModule(table.start(), table.stop(), "exe"),
            ModuleRegistry::RegisterResult::Registered);
  ResolvedAddress r;
  ASSERT_TRUE(registry->resolve(code + 0, &r));
  registry->addSamples(r, 7);
  ASSERT_TRUE(registry->resolve(code + 17, &r));
  registry->addSamples(r, 1);
  registry->addSamples(r, 2);

  TextBuffer out;
  causal::rt::ProfileBlock block;
  block.startup_realtime_ns = 1234567890123ull;
  block.runtime_ns = 4500000000ull;
  block.sample_period_ns = 250000;
  causal::rt::renderProfile(*registry, block, &out);
  std::vector<std::string> malformed;
  std::vector<ProfileRecord> records = parseProfile(out.data(), &malformed);
  EXPECT_TRUE(malformed.empty()) << malformed.front();
  ASSERT_EQ(records.size(), 4u) << out.data(); // line 22 has no samples: no record
  EXPECT_EQ(records[0].type, "startup");
  EXPECT_EQ(records[0].fields["time"], "1234567890123");
  // The report needs the period for each line's physical bound.
  EXPECT_EQ(records[0].fields["sample-period"], "250000");
  EXPECT_EQ(records[1].type, "runtime");
  EXPECT_EQ(records[1].fields["time"], "4500000000");
  EXPECT_EQ(causal::test::samplesAt(records, "/src/main.cpp:11"), 7u);
  EXPECT_EQ(causal::test::samplesAt(records, "/src/main.cpp:33"), 3u);
  EXPECT_EQ(causal::test::samplesAt(records, "/src/util.h:22"), 0u);
  // Exact syntax of one record (Coz's legacy format).
  EXPECT_NE(std::string(out.data()).find("samples\tlocation=/src/main.cpp:11\tcount=7\n"),
            std::string::npos);
  // A run written whole names no run and has no shutdown record.
  EXPECT_EQ(std::string(out.data()).find("run="), std::string::npos);
  EXPECT_EQ(std::string(out.data()).find("shutdown"), std::string::npos);
  registry->destroyForTesting();
}

// The periodic flush: each part holds the lines whose count changed since
// the last part (cumulative counts); a part that could not be written makes
// the next one write every line again.
TEST(ProfileWriterTest, LaterPartsHoldTheLinesWhoseCountChanged) {
  auto registry = std::make_unique<ModuleRegistry>();
  uintptr_t code = reinterpret_cast<uintptr_t>(&someCode);
  LineTableSpec spec;
  spec.code_vaddr = code;
  spec.rows = {{0, 0}, {8, 1}, {16, CAUSAL_NO_LINE}};
  spec.lines = {{0, 11}, {0, 22}};
  spec.files = {"/src/main.cpp"};
  InMemoryLineTable table(spec);
  ASSERT_EQ(registry->registerModule(table.start(), table.stop(), "exe"),
            ModuleRegistry::RegisterResult::Registered);
  ResolvedAddress first, second;
  ASSERT_TRUE(registry->resolve(code + 0, &first));
  ASSERT_TRUE(registry->resolve(code + 8, &second));
  registry->addSamples(first, 5);
  registry->addSamples(second, 1);

  causal::rt::ProfileBlock block;
  block.startup_realtime_ns = 99;
  block.runtime_ns = 1000;
  block.run_id = "7-99";
  block.last = false;
  TextBuffer part1;
  causal::rt::renderProfile(*registry, block, &part1);
  EXPECT_STREQ(part1.data(), "startup\ttime=99\tprofiler=causal\trun=7-99\n"
                             "runtime\ttime=1000\tsamples-expected=0\tsamples-arrived=0\n"
                             "samples\tlocation=/src/main.cpp:11\tcount=5\n"
                             "samples\tlocation=/src/main.cpp:22\tcount=1\n");

  registry->addSamples(first, 2);
  block.first = false;
  block.runtime_ns = 2000;
  TextBuffer part2;
  causal::rt::renderProfile(*registry, block, &part2);
  EXPECT_STREQ(part2.data(), "runtime\ttime=2000\tsamples-expected=0\tsamples-arrived=0\trun=7-99\n"
                             "samples\tlocation=/src/main.cpp:11\tcount=7\n");

  registry->forgetWrittenCounts(); // part2 was not written after all
  block.runtime_ns = 3000;
  block.samples_attributed = 8;
  block.samples_expected = 9;
  block.samples_arrived = 8;
  block.last = true;
  TextBuffer part3;
  causal::rt::renderProfile(*registry, block, &part3);
  EXPECT_STREQ(part3.data(), "runtime\ttime=3000\tsamples-expected=9\tsamples-arrived=8\trun=7-99\n"
                             "samples\tlocation=/src/main.cpp:11\tcount=7\n"
                             "samples\tlocation=/src/main.cpp:22\tcount=1\n"
                             "shutdown\ttime=3000\tsamples=8\n");
  registry->destroyForTesting();
}

TEST(ProfileWriterTest, NamesAWaitTargetByItsLineAndKind) {
  TextBuffer text;
  causal::rt::records::Experiment experiment;
  experiment.selected = {"/src/app.c", 42, "timer"};
  experiment.speedup = 0.5;
  experiment.duration = 1000;
  causal::rt::writeRecord(text, experiment);
  causal::rt::records::Experiment line;
  line.selected = {"/src/app.c", 42};
  causal::rt::writeRecord(text, line);
  std::string written(text.data(), text.size());
  EXPECT_NE(written.find("experiment\tselected=/src/app.c:42 (timer wait)\tspeedup=0.50"),
            std::string::npos)
      << written;
  EXPECT_NE(written.find("experiment\tselected=/src/app.c:42\t"), std::string::npos) << written;
}

TEST(ProfileWriterTest, NamesALineInACallingContextByItsCaller) {
  TextBuffer text;
  causal::rt::records::Experiment experiment;
  experiment.selected = {"/src/app.c", 42, nullptr, "ns::f(int)\tx"};
  experiment.speedup = 0.5;
  causal::rt::writeRecord(text, experiment);
  std::string written(text.data(), text.size());
  // The caller is escaped as any text is: the record stays one line of fields.
  EXPECT_NE(written.find("experiment\tselected=/src/app.c:42 (via ns::f(int)\\tx)\tspeedup=0.50"),
            std::string::npos)
      << written;
}

TEST(ProfileWriterTest, ChunksEndAtLineBoundaries) {
  std::string path = temporaryPath("chunks.coz");
  std::string text;
  for (int i = 0; i < 200; ++i)
    text += "samples\tlocation=/some/file.cpp:" + std::to_string(i) + "\tcount=1\n";
  // Chunks of at most 100 bytes: each write() must still end at a '\n'.
  ASSERT_EQ(causal::rt::appendToFile(path.c_str(), text.data(), text.size(), 100), 0);
  ASSERT_EQ(causal::rt::appendToFile(path.c_str(), text.data(), text.size(), 100), 0);
  EXPECT_EQ(causal::test::readFile(path), text + text);
  unlink(path.c_str());
}

TEST(ProfileWriterTest, ReportsUnwritablePath) {
  EXPECT_NE(causal::rt::appendToFile("/nonexistent-dir/x/profile.coz", "a\n", 2), 0);
}

TEST(ProfileWriterTest, ConcurrentAppendsFromTwoProcessesStayLineWhole) {
  std::string path = temporaryPath("concurrent.coz");
  // Each process appends 200 blocks of ~20 KB (a large profile block).
  auto writer = [&](const char *tag) {
    std::string block = "startup\ttime=1\tprofiler=causal\n"
                        "runtime\ttime=2\tsamples-expected=0\tsamples-arrived=0\n";
    for (int i = 0; i < 400; ++i)
      block += std::string("samples\tlocation=/") + tag + "/file.cpp:" + std::to_string(i) +
               "\tcount=" + std::to_string(i + 1) + "\n";
    for (int round = 0; round < 200; ++round)
      if (causal::rt::appendToFile(path.c_str(), block.data(), block.size()) != 0)
        return 1;
    return 0;
  };
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0)
    _exit(writer("child"));
  int parent_result = writer("parent");
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(parent_result, 0);

  std::vector<std::string> malformed;
  std::vector<ProfileRecord> records = parseProfile(causal::test::readFile(path), &malformed);
  EXPECT_TRUE(malformed.empty()) << malformed.size() << " torn lines, e.g. " << malformed[0];
  EXPECT_EQ(records.size(), 2u * 200u * 402u);
  // Every block stayed contiguous: after each startup record come exactly
  // one runtime and 400 samples records of one writer.
  size_t blocks = 0;
  for (size_t i = 0; i + 401 < records.size(); i += 402, ++blocks) {
    ASSERT_EQ(records[i].type, "startup") << "block " << blocks;
    std::string location = records[i + 2].fields["location"];
    std::string writer_dir = location.substr(0, location.find("/file.cpp"));
    for (size_t j = 2; j < 402; ++j)
      ASSERT_EQ(records[i + j].fields["location"].rfind(writer_dir, 0), 0u) << "block " << blocks;
  }
  EXPECT_EQ(blocks, 400u);
  unlink(path.c_str());
}

} // namespace
