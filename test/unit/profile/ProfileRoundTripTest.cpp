//===- ProfileRoundTripTest.cpp - The runtime's writer, the tools' reader --===//
//
// Every record type of include/causal/profile_records.def, written by the
// runtime's writer (runtime/ProfileWriter.h) and read back by the tools'
// reader: the values come back, every type and field is covered. And the
// forward-compatibility rule: what a newer causal adds is skipped with one
// warning per name, never an error.
//
//===----------------------------------------------------------------------===//
#include "ModuleRegistry.h"
#include "ProfileReader.h"
#include "ProfileWriter.h"
#include "TestLineTable.h"
#include "causal/profile_schema.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <set>

using namespace causal;
using causal::profile::Profile;
using causal::profile::ReadOptions;

namespace {

__attribute__((noinline)) int someCode(int x) { return x * 3; }

/// A run as the runtime writes it in two parts (renderProfile: startup
/// naming the run, the experiment thread's records, runtime, samples; then
/// runtime naming the run, the samples changed since, shutdown).
std::string writeEveryRecord() {
  rt::TextBuffer experiments;
  rt::records::Experiment experiment;
  experiment.selected = {"/src/a.c", 3};
  experiment.speedup = 0.35;
  experiment.duration = 2000;
  experiment.selected_samples = 7;
  experiment.delay = 30;
  experiment.shared_cpu_delay = 10;
  experiment.cpus = 4;
  experiment.running = 2.5;
  experiment.waiting = 0.25;
  experiment.ab_speedup = 0.5;
  experiment.idle = 1.25;
  rt::writeRecord(experiments, experiment);
  rt::records::ThroughputPoint throughput;
  throughput.name = "done";
  throughput.delta = 12;
  throughput.point_type = "source";
  throughput.span = 1800;
  throughput.gap_squares = 3;
  throughput.timed_visits = 11;
  rt::writeRecord(experiments, throughput);
  rt::records::LatencyPoint latency;
  latency.name = "req";
  latency.arrivals = 9;
  latency.departures = 8;
  latency.difference = 3;
  latency.in_flight = 2.5;
  rt::writeRecord(experiments, latency);

  auto registry = std::make_unique<rt::ModuleRegistry>();
  test::LineTableSpec spec;
  spec.code_vaddr = reinterpret_cast<uintptr_t>(&someCode);
  spec.rows = {{0, 0}, {8, 1}, {16, CAUSAL_NO_LINE}};
  spec.lines = {{0, 3}, {0, 4}};
  spec.files = {"/src/a.c"};
  spec.functions = {"ns::work(int)", ""};
  test::InMemoryLineTable table(spec);
  EXPECT_EQ(registry->registerModule(table.start(), table.stop(), "exe"),
            rt::ModuleRegistry::RegisterResult::Registered);
  rt::ResolvedAddress address;
  EXPECT_TRUE(registry->resolve(spec.code_vaddr, &address));
  registry->addSamples(address, 40);

  rt::TextBuffer out;
  rt::ProfileBlock block;
  block.startup_realtime_ns = 100;
  block.runtime_ns = 5000;
  block.experiments = experiments.data();
  block.experiments_size = experiments.size();
  block.sample_period_ns = 250000;
  block.samples_outside = 6;
  block.samples_expected = 50;
  block.samples_arrived = 46;
  block.run_id = "77-100";
  block.first = true;
  block.last = false;
  rt::renderProfile(*registry, block, &out);
  registry->addSamples(address, 2);
  block.runtime_ns = 6000;
  block.experiments = nullptr;
  block.experiments_size = 0;
  block.samples_attributed = 42;
  block.samples_expected = 60;
  block.samples_arrived = 48;
  block.samples_expected_spread = 7;
  block.timer_samples = 5;
  block.first = false;
  block.last = true;
  rt::renderProfile(*registry, block, &out);
  registry->destroyForTesting();
  return out.data();
}

Profile readStrictly(const std::string &text) {
  Profile profile;
  std::string error;
  EXPECT_TRUE(profile::readProfileText(text, "p.coz", profile, ReadOptions(), error)) << error;
  return profile;
}

TEST(ProfileRoundTrip, EveryRecordTypeAndFieldIsWrittenAndReadBack) {
  std::string text = writeEveryRecord();
  // Every record type and every field of the schema is in the text.
  std::set<std::string> types;
  for (size_t begin = 0; begin < text.size(); begin = text.find('\n', begin) + 1)
    types.insert(text.substr(begin, text.find('\t', begin) - begin));
  for (const profile_schema::RecordSpec &record : profile_schema::kRecords) {
    EXPECT_TRUE(types.count(record.name)) << record.name << " not written:\n" << text;
    EXPECT_LE(record.since, profile_schema::kSchemaVersion);
    for (unsigned i = 0; i < record.numFields; ++i) {
      const profile_schema::FieldSpec &field = record.fields[i];
      EXPECT_NE(text.find(std::string(record.name) + "\t"), std::string::npos);
      EXPECT_NE(text.find(std::string("\t") + field.key + "="), std::string::npos)
          << record.name << " " << field.key << " not written:\n"
          << text;
      EXPECT_LE(field.since, profile_schema::kSchemaVersion);
    }
  }
  // Coz's legacy format, exactly as before the schema.
  EXPECT_NE(text.find("startup\ttime=100\tprofiler=causal\tsample-period=250000\trun=77-100\n"),
            std::string::npos)
      << text;
  EXPECT_NE(
      text.find(
          "runtime\ttime=5000\tsamples-outside=6\tsamples-expected=50\tsamples-arrived=46\n"
          "samples\tlocation=/src/a.c:3\tcount=40\t"
          "function=ns::work(int)\nruntime\ttime=6000\tsamples-outside=6\tsamples-expected=60\t"
          "samples-arrived=48\ttimer-samples=5\trun=77-100\tsamples-expected-spread=7\n"
          "samples\tlocation=/src/"
          "a.c:3\tcount=42\tfunction=ns::work(int)\nshutdown\ttime=6000\tsamples=42\n"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("experiment\tselected=/src/a.c:3\tspeedup=0.35\tduration=2000\t"
                      "selected-samples=7\tdelay=30\tshared-cpu-delay=10\tcpus=4.00\t"
                      "running=2.50\twaiting=0.25\tab-speedup=0.50\tidle=1.25\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("latency-point\tname=req\tarrivals=9\tdepartures=8\tdifference=3.0000\t"
                      "in-flight=2.5000\n"),
            std::string::npos);

  Profile profile = readStrictly(text);
  EXPECT_TRUE(profile.warnings.empty()) << profile.warnings[0];
  EXPECT_TRUE(profile.notes.empty()) << profile.notes[0];
  ASSERT_EQ(profile.runs.size(), 1u);
  const profile::Run &run = profile.runs[0];
  EXPECT_TRUE(run.writtenByCausal);
  EXPECT_EQ(run.samplePeriodNs, 250000);
  EXPECT_EQ(run.runtimeNs, 6000);
  EXPECT_EQ(run.samplesOutside, 6);
  EXPECT_EQ(run.samplesExpected, 60) << "the last runtime record counts";
  EXPECT_EQ(run.samplesArrived, 48);
  EXPECT_EQ(run.samplesExpectedSpread, 7);
  EXPECT_EQ(run.timerSamples, 5);
  EXPECT_EQ(profile.samples.at("/src/a.c:3").all, 42) << "cumulative: the last count";
  EXPECT_EQ(profile.functions.at("/src/a.c:3"), "ns::work(int)");
  EXPECT_EQ(run.shutdownSamples, 42);
  EXPECT_EQ(run.partsId, "77-100");
  EXPECT_TRUE(run.shutdownSeen);
  ASSERT_EQ(profile.experiments.size(), 1u);
  const profile::Experiment &e = profile.experiments[0];
  EXPECT_EQ(e.selected, "/src/a.c:3");
  EXPECT_DOUBLE_EQ(e.speedup, 0.35);
  EXPECT_EQ(e.durationNs, 2000);
  EXPECT_EQ(e.selectedSamples, 7);
  EXPECT_EQ(e.delayNs, 30);
  EXPECT_EQ(e.sharedCpuDelayNs, 10);
  EXPECT_EQ(e.cpus, 4);
  EXPECT_EQ(e.running, 2.5);
  EXPECT_EQ(e.waiting, 0.25);
  EXPECT_EQ(e.abSpeedup, 0.5);
  EXPECT_EQ(e.idle, 1.25);
  ASSERT_EQ(e.points.size(), 2u);
  EXPECT_EQ(e.points[0].name, "done");
  EXPECT_EQ(e.points[0].kind, profile::PointKind::Throughput);
  EXPECT_EQ(e.points[0].delta, 12);
  EXPECT_EQ(e.points[0].spanNs, 1800);
  EXPECT_EQ(e.points[0].gapSquaresUs2, 3);
  EXPECT_EQ(e.points[0].timedVisits, 11);
  EXPECT_EQ(e.points[1].name, "req");
  EXPECT_EQ(e.points[1].kind, profile::PointKind::Latency);
  EXPECT_EQ(e.points[1].arrivals, 9);
  EXPECT_EQ(e.points[1].departures, 8);
  EXPECT_EQ(e.points[1].difference, 2.5) << "in-flight, the exact count, wins over difference";
}

TEST(ProfileRoundTrip, AnyBytesOfANameAreEscapedAndReadBack) {
  // Every byte a program can pass in a name (all but NUL), and names that
  // differ only in what an escape writes.
  std::string all_bytes;
  for (int byte = 1; byte < 256; ++byte)
    all_bytes.push_back(char(byte));
  const std::vector<std::string> names = {"tab\there",    "tab here",
                                          "new\nline",    "cr\r",
                                          "k=v=w",        "back\\",
                                          "\\t",          "\\x41",
                                          "\x01\x7f",     "na\xc3\xafve \xe2\x86\x92",
                                          "\xff\xfe",     "\xe2\x86",
                                          "\xed\xa0\x80", "\xf4\x90\x80\x80",
                                          all_bytes};
  rt::TextBuffer out;
  rt::records::Startup startup;
  startup.profiler = "causal";
  rt::writeRecord(out, startup);
  rt::records::Experiment experiment;
  experiment.selected = {"/src/a\tb.c", 3};
  experiment.speedup = 0.5;
  experiment.duration = 100;
  rt::writeRecord(out, experiment);
  for (size_t i = 0; i < names.size(); ++i) {
    rt::records::ThroughputPoint point;
    point.name = names[i].c_str();
    point.delta = i + 1;
    rt::writeRecord(out, point);
  }
  std::string text = out.data();
  // One record per line, every field key=value: what Coz's viewer splits.
  EXPECT_EQ(size_t(std::count(text.begin(), text.end(), '\n')), names.size() + 2) << text;
  EXPECT_NE(text.find("name=tab\\there\t"), std::string::npos) << text;
  EXPECT_NE(text.find("name=k=v=w\t"), std::string::npos) << text;
  EXPECT_NE(text.find("name=na\xc3\xafve \xe2\x86\x92\t"), std::string::npos) << "UTF-8 as it is";
  EXPECT_NE(text.find("name=\\xff\\xfe\t"), std::string::npos) << "invalid UTF-8 escaped";
  EXPECT_NE(text.find("name=\\xed\\xa0\\x80\t"), std::string::npos) << "a surrogate escaped";
  Profile profile = readStrictly(text);
  ASSERT_EQ(profile.experiments.size(), 1u);
  EXPECT_EQ(profile.experiments[0].selected, "/src/a\tb.c:3");
  const auto &points = profile.experiments[0].points;
  ASSERT_EQ(points.size(), names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(points[i].name, names[i]) << i;
    EXPECT_EQ(points[i].delta, double(i + 1));
  }
  // JSON Lines carry JSON's escapes only: a backslash there is a backslash.
  Profile json = readStrictly("{\"type\":\"startup\"}\n"
                              "{\"type\":\"experiment\",\"selected\":\"a.c:1\",\"speedup\":0,"
                              "\"duration\":5}\n"
                              "{\"type\":\"throughput_point\",\"name\":\"a\\\\tb\",\"delta\":1}\n");
  ASSERT_EQ(json.experiments.size(), 1u);
  ASSERT_EQ(json.experiments[0].points.size(), 1u);
  EXPECT_EQ(json.experiments[0].points[0].name, "a\\tb");
}

// The periodic flush: a run in parts, another process's run in between, the
// last part missing (SIGKILL). Each part's records belong to its run;
// cumulative samples are not summed; the missing end is a note.
TEST(ProfileRoundTrip, RunsInPartsInterleavedAndKilledReadAsTheirParts) {
  const char *text = "startup\ttime=1\tprofiler=causal\trun=10-1\n"
                     "experiment\tselected=a.c:1\tspeedup=0.50\tduration=10\n"
                     "throughput-point\tname=p\tdelta=5\n"
                     "runtime\ttime=100\n"
                     "samples\tlocation=a.c:1\tcount=3\n"
                     "startup\ttime=2\tprofiler=causal\trun=11-2\n"
                     "runtime\ttime=50\n"
                     "samples\tlocation=b.c:1\tcount=9\n"
                     "runtime\ttime=200\trun=10-1\n"
                     "experiment\tselected=a.c:1\tspeedup=0.00\tduration=10\n"
                     "throughput-point\tname=p\tdelta=4\n"
                     "samples\tlocation=a.c:1\tcount=7\n"
                     "runtime\ttime=300\trun=11-2\n"
                     "samples\tlocation=b.c:1\tcount=12\n"
                     "shutdown\ttime=300\tsamples=12\n";
  Profile profile = readStrictly(text);
  EXPECT_TRUE(profile.warnings.empty()) << profile.warnings[0];
  ASSERT_EQ(profile.runs.size(), 2u);
  EXPECT_EQ(profile.runs[0].runtimeNs, 200);
  EXPECT_EQ(profile.samples.at("a.c:1").all, 7) << "cumulative: the last count of its run";
  EXPECT_FALSE(profile.runs[0].shutdownSeen);
  EXPECT_EQ(profile.runs[1].runtimeNs, 300);
  EXPECT_EQ(profile.samples.at("b.c:1").all, 12);
  EXPECT_EQ(profile.runs[0].sampledLines, 1u);
  EXPECT_EQ(profile.runs[1].sampledLines, 1u);
  EXPECT_TRUE(profile.runs[1].shutdownSeen);
  ASSERT_EQ(profile.experiments.size(), 2u);
  EXPECT_EQ(profile.experiments[0].run, 0u);
  EXPECT_EQ(profile.experiments[1].run, 0u);
  ASSERT_EQ(profile.experiments[1].points.size(), 1u);
  EXPECT_EQ(profile.experiments[1].points[0].delta, 4);
  ASSERT_EQ(profile.notes.size(), 1u);
  EXPECT_NE(profile.notes[0].find("p.coz:1: the run of process 10 has no end record"),
            std::string::npos)
      << profile.notes[0];
  EXPECT_NE(profile.notes[0].find("0.0 s into the run"), std::string::npos) << profile.notes[0];
}

TEST(ProfileRoundTrip, APartOfARunWithoutItsFirstPartIsARunOfItsOwn) {
  Profile profile = readStrictly("startup\ttime=1\tprofiler=causal\n"
                                 "runtime\ttime=5\n"
                                 "runtime\ttime=200\trun=10-1\n"
                                 "samples\tlocation=a.c:1\tcount=7\n"
                                 "shutdown\ttime=200\tsamples=7\n");
  ASSERT_EQ(profile.runs.size(), 2u);
  EXPECT_EQ(profile.runs[0].runtimeNs, 5);
  EXPECT_EQ(profile.samples.at("a.c:1").all, 7);
  EXPECT_EQ(profile.runs[1].sampledLines, 1u);
  ASSERT_EQ(profile.warnings.size(), 1u);
  EXPECT_NE(profile.warnings[0].find("whose first part (its startup record) is not in this file"),
            std::string::npos)
      << profile.warnings[0];
  EXPECT_TRUE(profile.notes.empty());
}

TEST(ProfileRoundTrip, OptionalFieldsLeftUnsetAreNotWritten) {
  rt::TextBuffer out;
  rt::records::Startup startup;
  startup.time = 1;
  startup.profiler = "causal";
  rt::writeRecord(out, startup);
  EXPECT_STREQ(out.data(), "startup\ttime=1\tprofiler=causal\n");
}

// ---- Forward compatibility ---------------------------------------------------

const char *const kCausalRun = "startup\ttime=1\tprofiler=causal\n"
                               "experiment\tselected=a.c:1\tspeedup=0.50\tduration=10\n"
                               "throughput-point\tname=p\tdelta=5\n"
                               "runtime\ttime=100\n";

TEST(ProfileForwardCompatibility, NewerRecordsAndFieldsWarnOncePerNameAndFile) {
  std::string newer = "startup\ttime=1\tprofiler=causal\tclock=mono\n"
                      "experiment\tselected=a.c:1\tspeedup=0.50\tduration=10\tcolour=blue\n"
                      "waits\tlock=m\tns=5\n"
                      "throughput-point\tname=p\tdelta=5\n"
                      "waits\tlock=n\tns=6\n"
                      "{\"type\":\"experiment\",\"selected\":\"a.c:1\",\"speedup\":0,"
                      "\"duration\":10,\"colour\":\"red\"}\n"
                      "throughput-point\tname=p\tdelta=5\n"
                      "runtime\ttime=100\n";
  Profile profile = readStrictly(newer);
  ASSERT_EQ(profile.warnings.size(), 3u);
  EXPECT_EQ(profile.warnings[0], "p.coz:1: field 'clock' of startup records is newer than this "
                                 "reader (profile schema " +
                                     std::to_string(profile_schema::kSchemaVersion) +
                                     "): it is ignored");
  EXPECT_EQ(profile.warnings[1].rfind("p.coz:2: field 'colour' of experiment records", 0), 0u)
      << profile.warnings[1];
  EXPECT_EQ(profile.warnings[2], "p.coz:3: record type 'waits' is newer than this reader "
                                 "(profile schema " +
                                     std::to_string(profile_schema::kSchemaVersion) +
                                     "): such records are skipped");
  // The unknown record does not end the experiment: its point still counts.
  ASSERT_EQ(profile.experiments.size(), 2u);
  EXPECT_EQ(profile.experiments[0].points.size(), 1u);
  EXPECT_EQ(profile.experiments[1].points.size(), 1u);

  // Once per file: a second file warns again.
  std::string error;
  ASSERT_TRUE(profile::readProfileText(newer, "q.coz", profile, ReadOptions(), error)) << error;
  EXPECT_EQ(profile.warnings.size(), 6u);
  // Lenient reading says the same.
  Profile lenient;
  ReadOptions options;
  options.lenient = true;
  ASSERT_TRUE(profile::readProfileText(newer, "p.coz", lenient, options, error)) << error;
  EXPECT_EQ(lenient.warnings, readStrictly(newer).warnings);
  // A run without them reads the same.
  Profile plain = readStrictly(kCausalRun);
  EXPECT_TRUE(plain.warnings.empty());
}

TEST(ProfileForwardCompatibility, OnlyRunsWrittenByCausal) {
  // Elsewhere (Coz, no startup record) an unknown type stays an error and
  // unknown keys stay silently ignored, as before.
  Profile profile;
  std::string error;
  EXPECT_FALSE(profile::readProfileText("startup\ttime=1\nwaits\tns=5\n", "p.coz", profile,
                                        ReadOptions(), error));
  EXPECT_EQ(error, "p.coz:2: unknown record type 'waits'");
  Profile coz = readStrictly("startup\ttime=1\n"
                             "experiment\tselected=a.c:1\tspeedup=0\tduration=10\tcolour=x\n");
  EXPECT_TRUE(coz.warnings.empty());
  // A malformed known record is still an error in a causal run.
  Profile bad;
  EXPECT_FALSE(profile::readProfileText(std::string(kCausalRun) + "samples\tcount=3\twait=1\n",
                                        "p.coz", bad, ReadOptions(), error));
  EXPECT_EQ(error, "p.coz:5: samples record has no 'location' field");
}

} // namespace
