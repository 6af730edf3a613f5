//===- ProfileReaderTest.cpp - Reading causal and Coz profiles ------------===//
#include "ProfileReader.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <stdlib.h>
#include <string>
#include <unistd.h>
#include <vector>

using namespace causal::profile;

namespace {

Profile readOk(const std::string &text, bool lenient = false) {
  Profile profile;
  std::string error;
  ReadOptions options;
  options.lenient = lenient;
  EXPECT_TRUE(readProfileText(text, "p.coz", profile, options, error)) << error;
  return profile;
}

std::string readError(const std::string &text) {
  Profile profile;
  std::string error;
  EXPECT_FALSE(readProfileText(text, "p.coz", profile, ReadOptions(), error));
  return error;
}

const char *const kTabs = "startup\ttime=100\tprofiler=causal\n"
                          "experiment\tselected=a.c:3\tspeedup=0.35\tduration=2000\t"
                          "selected-samples=7\tdelay=30\n"
                          "throughput-point\tname=done\tdelta=12\n"
                          "latency-point\tname=req\tarrivals=9\tdepartures=8\tdifference=2.5\n"
                          "runtime\ttime=5000\n"
                          "samples\tlocation=a.c:3\tcount=40\n";

const char *const kJson =
    "{\"type\":\"startup\",\"time\":100,\"profiler\":\"causal\"}\n"
    "{\"type\":\"experiment\",\"selected\":\"a.c:3\",\"speedup\":0.35,\"duration\":2000,"
    "\"selected_samples\":7,\"delay\":30}\n"
    "{\"type\":\"throughput_point\",\"name\":\"done\",\"delta\":12}\n"
    "{\"type\":\"latency_point\",\"name\":\"req\",\"arrivals\":9,\"departures\":8,"
    "\"difference\":2.5}\n"
    "{\"type\":\"runtime\",\"time\":5000}\n"
    "{\"type\":\"samples\",\"location\":\"a.c:3\",\"count\":40}\n";

void expectExample(const Profile &profile) {
  ASSERT_EQ(profile.runs.size(), 1u);
  EXPECT_TRUE(profile.runs[0].writtenByCausal);
  EXPECT_EQ(profile.runs[0].runtimeNs, 5000);
  EXPECT_EQ(profile.samples.at("a.c:3").all, 40);
  EXPECT_EQ(profile.runs[0].sampledLines, 1u);
  ASSERT_EQ(profile.experiments.size(), 1u);
  const Experiment &e = profile.experiments[0];
  EXPECT_EQ(e.selected, "a.c:3");
  EXPECT_DOUBLE_EQ(e.speedup, 0.35);
  EXPECT_EQ(e.durationNs, 2000);
  EXPECT_EQ(e.selectedSamples, 7);
  EXPECT_EQ(e.delayNs, 30);
  ASSERT_EQ(e.points.size(), 2u);
  EXPECT_EQ(e.points[0].name, "done");
  EXPECT_EQ(e.points[0].kind, PointKind::Throughput);
  EXPECT_EQ(e.points[0].delta, 12);
  EXPECT_EQ(e.points[1].kind, PointKind::Latency);
  EXPECT_EQ(e.points[1].arrivals, 9);
  EXPECT_EQ(e.points[1].departures, 8);
  EXPECT_DOUBLE_EQ(e.points[1].difference, 2.5);
}

} // namespace

TEST(ProfileReader, ReadsTabSeparatedRecords) {
  Profile profile = readOk(kTabs);
  expectExample(profile);
  EXPECT_EQ(profile.tabRecords, 6u);
  EXPECT_EQ(profile.jsonRecords, 0u);
}

TEST(ProfileReader, ReadsJsonLinesAsNewerCozWritesThem) {
  Profile profile = readOk(kJson);
  expectExample(profile);
  EXPECT_EQ(profile.jsonRecords, 6u);
}

TEST(ProfileReader, ReadsOldProgressPointSpelling) {
  Profile profile = readOk("startup\ttime=1\n"
                           "experiment\tselected=x.c:1\tspeedup=0.00\tduration=10\t"
                           "selected-samples=0\n"
                           "progress-point\tname=x.c:9\ttype=source\tdelta=86\n"
                           "shutdown\ttime=9\tsamples=348580\n");
  ASSERT_EQ(profile.experiments.size(), 1u);
  ASSERT_EQ(profile.experiments[0].points.size(), 1u);
  EXPECT_EQ(profile.experiments[0].points[0].kind, PointKind::Throughput);
  EXPECT_EQ(profile.experiments[0].points[0].delta, 86);
  EXPECT_EQ(profile.runs[0].shutdownSamples, 348580);
}

TEST(ProfileReader, SeparatesAppendedRunsAndKeepsLastCumulativeSamples) {
  Profile profile = readOk("startup\ttime=1\n"
                           "experiment\tselected=a.c:1\tspeedup=0\tduration=10\n"
                           "throughput-point\tname=p\tdelta=5\n"
                           "runtime\ttime=100\n"
                           "samples\tlocation=a.c:1\tcount=3\n"
                           "experiment\tselected=a.c:1\tspeedup=0.5\tduration=10\n"
                           "throughput-point\tname=p\tdelta=6\n"
                           "runtime\ttime=250\n"
                           "samples\tlocation=a.c:1\tcount=8\n"
                           "startup\ttime=2\n"
                           "experiment\tselected=b.c:2\tspeedup=0\tduration=10\n"
                           "throughput-point\tname=p\tdelta=7\n"
                           "samples\tlocation=a.c:1\tcount=4\n"
                           "startup\ttime=3\tsample-period=500\n"
                           "experiment\tselected=a.c:1\tspeedup=0\tduration=10\tab-speedup=0.5\n"
                           "runtime\ttime=90\n"
                           "samples\tlocation=a.c:1\tcount=2\n"
                           "startup\ttime=4\tsample-period=500\n"
                           "runtime\ttime=90\n"
                           "samples\tlocation=a.c:1\tcount=1\n"
                           "samples\tlocation=b.c:2\tcount=5\n");
  ASSERT_EQ(profile.runs.size(), 4u);
  EXPECT_EQ(profile.runs[0].runtimeNs, 250);
  EXPECT_EQ(profile.runs[1].runtimeNs, -1);
  EXPECT_FALSE(profile.runs[0].abRun);
  EXPECT_TRUE(profile.runs[2].abRun);
  ASSERT_EQ(profile.experiments.size(), 4u);
  EXPECT_EQ(profile.experiments[0].run, 0u);
  EXPECT_EQ(profile.experiments[1].run, 0u);
  EXPECT_EQ(profile.experiments[2].run, 1u);
  // Each run's last cumulative count (8, not 3 + 8), summed over runs: all
  // of them; the ordinary ones (not the A/B run); those with a runtime
  // record, and their samples times the run's period (1 ms where unwritten).
  const SampleTotals &a = profile.samples.at("a.c:1");
  EXPECT_EQ(a.all, 8 + 4 + 2 + 1);
  EXPECT_EQ(a.ordinary, 8 + 4 + 1);
  EXPECT_EQ(a.ordinaryTimed, 8 + 1);
  EXPECT_EQ(a.ordinaryTimedNs, 8 * 1e6 + 1 * 500);
  EXPECT_EQ(profile.samples.at("b.c:2").all, 5);
  EXPECT_EQ(profile.runs[3].sampledLines, 2u);
}

// The points of an experiment stay side by side and keep their values
// whatever the store does: an experiment of more points than a block holds,
// points added to an experiment that is not the newest, and blocks filling.
TEST(PointStore, KeepsEachExperimentsPointsTogether) {
  PointStore store;
  PointSpan a, b, many;
  auto point = [](double delta) {
    PointMeasurement p;
    p.delta = delta;
    return p;
  };
  for (int i = 0; i < 3; ++i)
    store.append(a, point(i));
  store.append(b, point(100));
  store.append(a, point(3)); // a no longer ends where the next point goes
  for (int i = 0; i < 10000; ++i)
    store.append(many, point(1000 + i));
  store.append(b, point(101));
  ASSERT_EQ(a.size(), 4u);
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_EQ(a[i].delta, double(i));
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0].delta, 100);
  EXPECT_EQ(b[1].delta, 101);
  ASSERT_EQ(many.size(), 10000u);
  double expected = 1000;
  for (const PointMeasurement &p : many)
    EXPECT_EQ(p.delta, expected++);
}

// Many experiments with one or two points each, as the reader stores them.
TEST(ProfileReader, KeepsThePointsOfManyExperiments) {
  std::string text = "startup\ttime=1\n";
  for (int i = 0; i < 20000; ++i) {
    text +=
        "experiment\tselected=a.c:" + std::to_string(i % 7 + 1) + "\tspeedup=0\tduration=1000\n";
    text += "throughput-point\tname=p\tdelta=" + std::to_string(i) + "\n";
    if (i % 3 == 0)
      text +=
          "latency-point\tname=q\tarrivals=" + std::to_string(i) + "\tdepartures=1\tdifference=0\n";
  }
  Profile profile;
  std::string error;
  ASSERT_TRUE(readProfileText(text, "p.coz", profile, ReadOptions{}, error)) << error;
  ASSERT_EQ(profile.experiments.size(), 20000u);
  size_t index = 0;
  for (const Experiment &e : profile.experiments) {
    ASSERT_EQ(e.points.size(), index % 3 == 0 ? 2u : 1u) << index;
    EXPECT_EQ(e.points[0].delta, double(index));
    if (index % 3 == 0)
      EXPECT_EQ(e.points[1].arrivals, double(index));
    ++index;
  }
}

TEST(ProfileReader, SeveralFilesAccumulate) {
  Profile profile;
  std::string error;
  ASSERT_TRUE(readProfileText(kTabs, "a.coz", profile, ReadOptions(), error)) << error;
  ASSERT_TRUE(readProfileText(kJson, "b.coz", profile, ReadOptions(), error)) << error;
  EXPECT_EQ(profile.runs.size(), 2u);
  EXPECT_EQ(profile.experiments.size(), 2u);
  EXPECT_EQ(profile.runs[1].place.file, "b.coz");
  EXPECT_EQ(profile.experiments[1].run, 1u);
}

TEST(ProfileReader, ToleratesUnknownKeysAndCarriageReturns) {
  Profile profile = readOk("experiment\tselected=a.c:1\tspeedup=0.1\tduration=5\tfuture=x\r\n"
                           "throughput-point\tname=p\tdelta=5\tcolour=blue\r\n"
                           "{\"type\":\"runtime\",\"time\":9,\"extra\":{\"a\":[1,2,\"}\"]}}\n");
  ASSERT_EQ(profile.experiments.size(), 1u);
  EXPECT_EQ(profile.runs.size(), 1u);
  EXPECT_FALSE(profile.runs[0].hasStartup);
  EXPECT_EQ(profile.runs[0].runtimeNs, 9);
}

TEST(ProfileReader, ErrorsNameFileLineAndProblem) {
  EXPECT_EQ(readError("startup\ttime=1\nexperiment\tselected=a.c:1\tspeedup=0\tduration=1\n"
                      "throughput-point\tname=p\tdelta=12x\n"),
            "p.coz:3: field 'delta' has value '12x', which is not a number");
  EXPECT_EQ(readError("startup\ttime=1\nbogus\ta=1\n"), "p.coz:2: unknown record type 'bogus'");
  EXPECT_EQ(readError("throughput-point\tname=p\tdelta=1\n"),
            "p.coz:1: throughput-point record before any experiment record");
  EXPECT_EQ(readError("experiment\tselected=a.c:1\tspeedup=1.5\tduration=1\n"),
            "p.coz:1: experiment speedup 1.5 is outside 0..1");
  EXPECT_EQ(readError("experiment\tspeedup=0.5\tduration=1\n"),
            "p.coz:1: experiment record has no 'selected' field");
  // A last line cut off mid-record is skipped with a warning, strict or not.
  Profile truncated = readOk("startup\ttime=1\nexperiment\tselected=a.c:1\tspee");
  ASSERT_EQ(truncated.warnings.size(), 1u);
  EXPECT_NE(truncated.warnings[0].find("p.coz:2:"), std::string::npos) << truncated.warnings[0];
  EXPECT_NE(truncated.warnings[0].find("a record cut off"), std::string::npos);
  EXPECT_EQ(truncated.runs.size(), 1u);
  EXPECT_TRUE(truncated.experiments.empty());
  std::string json =
      readError("{\"type\":\"experiment\",\"selected\":\"a.c:1\",\"speedup\":0.5,\n");
  EXPECT_NE(json.find("p.coz:1: malformed JSON record"), std::string::npos) << json;
  EXPECT_NE(readError("{\"time\":1}\n").find("no \"type\" member"), std::string::npos);
  const char withNul[] = "startup\ttime=1\nexperiment\tselected=a\0b\n";
  EXPECT_NE(
      readError(std::string(withNul, sizeof withNul - 1)).find("p.coz:2: line contains a NUL"),
      std::string::npos);
}

TEST(ProfileReader, LenientSkipsBadLinesWithWarnings) {
  Profile profile = readOk("startup\ttime=1\n"
                           "experiment\tselected=a.c:1\tspeedup=0\tduration=10\n"
                           "throughput-point\tname=p\tdelta=oops\n"
                           "bogus\n"
                           "throughput-point\tname=q\tdelta=5\n",
                           /*lenient=*/true);
  ASSERT_EQ(profile.warnings.size(), 2u);
  EXPECT_EQ(profile.warnings[0].rfind("p.coz:3: ", 0), 0u) << profile.warnings[0];
  EXPECT_EQ(profile.warnings[1].rfind("p.coz:4: ", 0), 0u) << profile.warnings[1];
  ASSERT_EQ(profile.experiments.size(), 1u);
  ASSERT_EQ(profile.experiments[0].points.size(), 1u);
  EXPECT_EQ(profile.experiments[0].points[0].name, "q");
}

TEST(ProfileReader, LenientNeverChargesPointsOfASkippedExperimentToAnother) {
  Profile profile = readOk("experiment\tselected=a.c:1\tspeedup=0\tduration=10\n"
                           "throughput-point\tname=p\tdelta=5\n"
                           "experiment\tselected=b.c:2\tspeedup=2\tduration=10\n"
                           "throughput-point\tname=p\tdelta=500\n"
                           "experiment\tselected=c.c:3\tspeedup=0\tduration=10\n"
                           "throughput-point\tname=p\tdelta=7\n",
                           /*lenient=*/true);
  ASSERT_EQ(profile.experiments.size(), 2u);
  ASSERT_EQ(profile.experiments[0].points.size(), 1u);
  EXPECT_EQ(profile.experiments[0].points[0].delta, 5);
  EXPECT_EQ(profile.experiments[1].points[0].delta, 7);
  ASSERT_EQ(profile.warnings.size(), 2u);
  EXPECT_NE(profile.warnings[1].find("p.coz:4: throughput-point record follows a skipped line"),
            std::string::npos)
      << profile.warnings[1];
}

TEST(ProfileReader, ParsesNumbersStrictly) {
  double v = 0;
  EXPECT_TRUE(parseNumber("0.35", v));
  EXPECT_DOUBLE_EQ(v, 0.35);
  EXPECT_TRUE(parseNumber("12", v));
  EXPECT_EQ(v, 12);
  // Coz writes size_t values that wrapped below zero.
  EXPECT_TRUE(parseNumber("18446744073709551615", v));
  EXPECT_EQ(v, -1);
  for (const char *text : {"18446744073709551616", "", "nan", "inf", "1e400", "0x10", "1.2.3", " 1",
                           "-", ".", "-.", "--1", "1-"})
    EXPECT_FALSE(parseNumber(text, v)) << text;
}

// The fast path for [-]DIGITS.DIGITS (at most 15 digits) must give the
// double strtod gives, bit for bit: reports must not change with it.
TEST(ProfileReader, DecimalsReadAsStrtodReadsThem) {
  uint64_t state = 12345;
  auto next = [&state] { // xorshift64
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  std::vector<std::string> texts = {"1.",
                                    ".5",
                                    "-.5",
                                    "-0.0",
                                    "0.1",
                                    "0.30",
                                    "2.8720",
                                    "-7",
                                    "123456789012345",
                                    "1234567890.12345",
                                    "0.000000000000001",
                                    "1234567890123456.5",
                                    "99999999999999999.9"};
  for (int i = 0; i < 20000; ++i) {
    std::string text = next() % 4 == 0 ? "-" : "";
    int digits = 1 + int(next() % 18); // past 15: the strtod path
    int point = int(next() % (digits + 1));
    for (int d = 0; d < digits; ++d) {
      if (d == point)
        text += '.';
      text += char('0' + next() % 10);
    }
    texts.push_back(text);
  }
  for (const std::string &text : texts) {
    double parsed = 0;
    ASSERT_TRUE(parseNumber(text, parsed)) << text;
    double expected = std::strtod(text.c_str(), nullptr);
    EXPECT_EQ(std::memcmp(&parsed, &expected, sizeof parsed), 0)
        << text << ": " << parsed << " against strtod's " << expected;
  }
}

// Fields are looked up in the spec's order first (how writers write them);
// any other order reads the same, and of a key written twice the first
// counts, as it always did.
TEST(ProfileReader, FieldsInAnyOrderAndTheFirstOfADuplicatedKey) {
  Profile shuffled = readOk("startup\tprofiler=causal\ttime=100\n"
                            "experiment\tdelay=30\tduration=2000\tspeedup=0.35\tselected=a.c:3\t"
                            "selected-samples=7\n"
                            "throughput-point\tdelta=12\tname=done\n"
                            "latency-point\tdifference=2.5\tdepartures=8\tarrivals=9\tname=req\n"
                            "runtime\ttime=5000\n"
                            "samples\tcount=40\tlocation=a.c:3\n");
  expectExample(shuffled);
  EXPECT_TRUE(shuffled.warnings.empty()) << shuffled.warnings[0];

  Profile twice =
      readOk("startup\ttime=1\tprofiler=causal\n"
             "experiment\tselected=a.c:1\tspeedup=0.2\tspeedup=0.9\tduration=5\tduration=7\n"
             "experiment\tspeedup=0.3\tselected=b.c:2\tselected=c.c:3\tduration=5\n");
  ASSERT_EQ(twice.experiments.size(), 2u);
  EXPECT_DOUBLE_EQ(twice.experiments[0].speedup, 0.2);
  EXPECT_EQ(twice.experiments[0].durationNs, 5);
  EXPECT_EQ(twice.experiments[1].selected, "b.c:2");
  EXPECT_TRUE(twice.warnings.empty()) << twice.warnings[0];

  // A field unknown to the spec, between known ones, is still found out.
  Profile unknown = readOk("startup\ttime=1\tprofiler=causal\n"
                           "experiment\tselected=a.c:1\tcolour=blue\tspeedup=0.1\tduration=5\n");
  ASSERT_EQ(unknown.warnings.size(), 1u);
  EXPECT_NE(unknown.warnings[0].find("field 'colour' of experiment records is newer"),
            std::string::npos)
      << unknown.warnings[0];
  EXPECT_DOUBLE_EQ(unknown.experiments[0].speedup, 0.1);
}

TEST(ProfileReader, JsonStringEscapesAreDecoded) {
  Profile profile =
      readOk("{\"type\":\"experiment\",\"selected\":\"d\\u00e9j\\u00e0 \\\"q\\\".c:1\","
             "\"speedup\":0,\"duration\":5}\n");
  ASSERT_EQ(profile.experiments.size(), 1u);
  EXPECT_EQ(profile.experiments[0].selected, "d\xc3\xa9j\xc3\xa0 \"q\".c:1");
}

// ---- Files that are not profiles fail at once, without filling memory -----

namespace {

struct FileRead {
  bool ok = false;
  std::string error;
  Profile profile;
};

FileRead readFile(const std::string &path, bool lenient = false) {
  FileRead result;
  ReadOptions options;
  options.lenient = lenient;
  result.ok = readProfileFile(path, result.profile, options, result.error);
  return result;
}

std::string writeTemp(const std::string &contents) {
  char path[] = "/tmp/causal-reader-XXXXXX";
  int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(write(fd, contents.data(), contents.size()), ssize_t(contents.size()));
  close(fd);
  return path;
}

} // namespace

TEST(ProfileReaderFile, ReadsAProfileFile) {
  std::string path = writeTemp(kTabs);
  FileRead read = readFile(path);
  unlink(path.c_str());
  ASSERT_TRUE(read.ok) << read.error;
  expectExample(read.profile);
}

TEST(ProfileReaderFile, EndlessZerosAreRefusedAtTheFirstChunk) {
  // /dev/zero never ends: the old reader slurped it until std::bad_alloc.
  FileRead read = readFile("/dev/zero");
  EXPECT_FALSE(read.ok);
  EXPECT_NE(read.error.find("/dev/zero: binary data (a NUL byte at offset 0)"), std::string::npos)
      << read.error;
  EXPECT_NE(read.error.find("not a causal or Coz profile"), std::string::npos);
}

TEST(ProfileReaderFile, DirectoryIsNamed) {
  FileRead read = readFile("/tmp");
  EXPECT_FALSE(read.ok);
  EXPECT_NE(read.error.find("/tmp: is a directory"), std::string::npos) << read.error;
}

TEST(ProfileReaderFile, OverlongLineIsRefused) {
  std::string path = writeTemp(std::string(kTabs) + std::string(3 << 20, 'x'));
  FileRead read = readFile(path, /*lenient=*/true);
  unlink(path.c_str());
  EXPECT_FALSE(read.ok);
  EXPECT_NE(read.error.find(":7: line longer than 1 MiB"), std::string::npos) << read.error;
}

TEST(ProfileReaderFile, TextThatIsNoProfileFailsAtItsFirstLine) {
  std::string path = writeTemp("hello world\nstartup\ttime=1\n");
  FileRead strict = readFile(path);
  EXPECT_FALSE(strict.ok);
  EXPECT_NE(strict.error.find(":1: "), std::string::npos) << strict.error;
  // Lenient reading skips a few bad lines but not a thousand in a row.
  std::string lines;
  for (int i = 0; i < 600; ++i)
    lines += "not a record at all\nword\n"; // "word" parses, as a record of no known type
  std::string manyBad = writeTemp(lines + kTabs);
  FileRead lenient = readFile(manyBad, /*lenient=*/true);
  EXPECT_FALSE(lenient.ok);
  EXPECT_NE(lenient.error.find("no record in the first 1000 lines"), std::string::npos)
      << lenient.error;
  // `yes | causal report -` must not read forever either.
  std::string unknownType = writeTemp("yes\nyes\n");
  FileRead endless = readFile(unknownType);
  unlink(unknownType.c_str());
  EXPECT_FALSE(endless.ok);
  EXPECT_NE(endless.error.find(":1: unknown record type 'yes': not a causal or Coz profile"),
            std::string::npos)
      << endless.error;
  FileRead fewBad = readFile(path, /*lenient=*/true);
  EXPECT_TRUE(fewBad.ok) << fewBad.error;
  unlink(path.c_str());
  unlink(manyBad.c_str());
}

TEST(ProfileReader, ReadsTheSamplePeriodOfARun) {
  Profile profile = readOk("startup\ttime=1\tprofiler=causal\tsample-period=250000\n"
                           "startup\ttime=2\n"
                           "{\"type\":\"startup\",\"time\":3,\"sample_period\":500000}\n");
  ASSERT_EQ(profile.runs.size(), 3u);
  EXPECT_EQ(profile.runs[0].samplePeriodNs, 250000);
  EXPECT_EQ(profile.runs[1].samplePeriodNs, -1); // Coz does not write it
  EXPECT_EQ(profile.runs[2].samplePeriodNs, 500000);
  EXPECT_NE(readError("startup\ttime=1\tsample-period=0\n").find("sample-period"),
            std::string::npos);
}
