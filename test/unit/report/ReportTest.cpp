//===- ReportTest.cpp - Rendering and comparing causal profiles -----------===//
#include "Report.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <regex>
#include <sstream>

using namespace causal;
using namespace causal::report;

namespace {

/// A profile with one line per curve function, 21 speedups, 2 experiments each.
/// 1000 samples of the line per second of experiment (1 ms period): the line
/// runs all the time, so its physical bound (b = 1) allows every curve here.
/// |fields|: more fields of a line's experiments (e.g. "cpus=2\trunning=1").
/// |runtime|: a runtime record's fields after time= (none if empty).
profile::Profile
makeProfile(const std::vector<std::pair<std::string, std::function<double(double)>>> &lines,
            const std::map<std::string, std::string> &fields = {},
            const std::string &runtime = "") {
  std::ostringstream text;
  text << "startup\ttime=1\n";
  for (const auto &line : lines)
    for (int k = 0; k <= 20; ++k)
      for (int c = 0; c < 2; ++c) {
        double s = k / 20.0;
        auto more = fields.find(line.first);
        text << "experiment\tselected=" << line.first << "\tspeedup=" << s
             << "\tduration=" << std::llround(1e9 * (1 - line.second(s)))
             << "\tselected-samples=1000" << (more == fields.end() ? "" : "\t" + more->second)
             << "\nthroughput-point\tname=tp\tdelta=1000\n";
      }
  if (!runtime.empty())
    text << "runtime\ttime=50000000000\t" << runtime << "\n";
  profile::Profile profile;
  std::string error;
  EXPECT_TRUE(profile::readProfileText(text.str(), "t.coz", profile, profile::ReadOptions(), error))
      << error;
  return profile;
}

profile::Analysis analyzeWith(const profile::Profile &profile) {
  profile::AnalysisOptions options;
  options.bootstrapRounds = 200;
  return profile::analyze(profile, options);
}

size_t count(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1))
    ++n;
  return n;
}

} // namespace

TEST(Report, JsonEscapingIsSafeInsideScriptElements) {
  EXPECT_EQ(jsonEscape("a\"b\\c\n"), "a\\\"b\\\\c\\n");
  EXPECT_EQ(jsonEscape("</script>"), "\\u003c/script\\u003e");
  EXPECT_EQ(jsonEscape(std::string("\x01", 1)), "\\u0001");
  EXPECT_EQ(jsonNumber(NAN), "null");
  EXPECT_EQ(jsonNumber(INFINITY), "null");
  EXPECT_EQ(jsonNumber(42), "42");
  EXPECT_EQ(jsonNumber(0.125), "0.125");
  EXPECT_EQ(percent(0.1234), "+12.3%");
  EXPECT_EQ(percent(-0.5), "-50.0%");
}

TEST(Report, SparklineFollowsTheCurve) {
  std::vector<profile::CurvePoint> curve;
  for (int k = 0; k <= 20; k += 2) // every other 5 % step measured
    curve.push_back({k / 20.0, std::min(k / 20.0, 0.5), {}, 1, 1});
  std::string ascii = sparkline(curve, 0, 0.5, /*ascii=*/true);
  ASSERT_EQ(ascii.size(), 21u);
  const std::string levels = "_.,-~=*#";
  int previous = -1;
  for (int step = 0; step <= 20; ++step) {
    if (step % 2) {
      EXPECT_EQ(ascii[step], ' ') << ascii;
      continue;
    }
    int level = int(levels.find(ascii[step]));
    ASSERT_GE(level, 0) << ascii;
    EXPECT_GE(level, previous) << ascii;
    previous = level;
  }
  EXPECT_EQ(ascii.front(), '_');
  EXPECT_EQ(ascii.back(), '#');
  // The block version has the same shape, one code point per step.
  std::string blocks = sparkline(curve, 0, 0.5, false);
  EXPECT_EQ(blocks.substr(0, 3), "\u2581");
  EXPECT_EQ(blocks.substr(blocks.size() - 3), "\u2588");
}

TEST(Report, TextRanksLinesAndShowsIntervalsWithoutColourByDefault) {
  profile::Profile profile = makeProfile(
      {{"flat.c:1", [](double) { return 0.0; }}, {"steep.c:2", [](double s) { return 0.8 * s; }}});
  profile::Analysis analysis = analyzeWith(profile);
  std::ostringstream out;
  ReportContext context{{"t.coz"}, profile::AnalysisOptions()};
  renderText(out, analysis, context, TextOptions());
  std::string text = out.str();
  EXPECT_EQ(text.find('\033'), std::string::npos);
  size_t steep = text.find("steep.c:2"), flat = text.find("flat.c:1");
  ASSERT_NE(steep, std::string::npos);
  ASSERT_NE(flat, std::string::npos);
  EXPECT_LT(steep, flat);
  EXPECT_NE(text.find("+0.800 [+0.800, +0.800]"), std::string::npos) << text;
  EXPECT_NE(text.find("hint:"), std::string::npos); // 84 experiments are few
  TextOptions coloured;
  coloured.color = true;
  std::ostringstream colourOut;
  renderText(colourOut, analysis, context, coloured);
  EXPECT_NE(colourOut.str().find("\033[32m"), std::string::npos);
}

/// The line of the text report that holds |what|.
static std::string lineWith(const std::string &text, const std::string &what) {
  size_t at = text.find(what);
  if (at == std::string::npos)
    return "";
  size_t begin = text.rfind('\n', at), end = text.find('\n', at);
  return text.substr(begin == std::string::npos ? 0 : begin + 1,
                     end == std::string::npos ? std::string::npos : end - begin - 1);
}

// docs/report.md, "Saturation". Threads that wait for a CPU while the
// process's CPUs stand idle (bench/oversub's stage case: a hand-off
// pipeline, about 41 % idle) waited to be woken up; the note used to say
// that other processes took the CPUs.
TEST(Report, SaturationNotesTellIdleCpusFromOtherProcessesLoad) {
  auto half = [](double s) { return 0.5 * s; };
  profile::Profile profile =
      makeProfile({{"stage.c:10", half},
                   {"busy.c:20", half},
                   {"old.c:30", half},
                   {"pool.c:40", half},
                   {"quota.c:50", half}},
                  {{"stage.c:10", "cpus=2\trunning=0.8\twaiting=2.5\tidle=0.82"},
                   {"busy.c:20", "cpus=2\trunning=1.06\twaiting=0.9\tidle=0.01"},
                   {"old.c:30", "cpus=2\trunning=1.06\twaiting=0.9"}, // a runtime before idle=
                   {"pool.c:40", "cpus=2\trunning=2\twaiting=14\tidle=0.02"},
                   // A quota of one CPU on two: the other CPU idle, the process on all it may use.
                   {"quota.c:50", "cpus=1\trunning=0.97\twaiting=7\tidle=1.0"}});
  profile::Analysis analysis = analyzeWith(profile);
  std::ostringstream out;
  ReportContext context{{"t.coz"}, profile::AnalysisOptions()};
  renderText(out, analysis, context, TextOptions());
  std::string text = out.str();
  std::string stage = lineWith(text, "note: stage.c:10");
  EXPECT_NE(stage.find("0.8 threads running and 2.5 waiting for 2.0 CPUs on average, while 0.8 "
                       "of them stood idle: the threads waited to be woken up"),
            std::string::npos)
      << text;
  EXPECT_EQ(stage.find("other processes"), std::string::npos) << stage;
  EXPECT_NE(lineWith(text, "note: busy.c:20").find("other processes"), std::string::npos) << text;
  EXPECT_NE(lineWith(text, "note: old.c:30").find("other processes"), std::string::npos)
      << "without idle=, as before:\n"
      << text;
  for (const char *line : {"note: pool.c:40", "note: quota.c:50"}) {
    std::string note = lineWith(text, line);
    EXPECT_NE(note.find("threads running"), std::string::npos) << line << "\n" << text;
    EXPECT_EQ(note.find("stood idle"), std::string::npos) << note;
    EXPECT_EQ(note.find("other processes"), std::string::npos) << note;
  }

  std::ostringstream json;
  renderJson(json, analysis, context);
  std::string j = json.str();
  EXPECT_NE(j.find("\"idle\":0.82,\"shared_cpu_delay_share\":0,\"oversubscribed\":true,"
                   "\"waited_with_cpus_idle\":true,\"other_load\":false"),
            std::string::npos)
      << j;
  EXPECT_NE(j.find("\"idle\":null,\"shared_cpu_delay_share\":0,\"oversubscribed\":false,"
                   "\"waited_with_cpus_idle\":false,\"other_load\":true"),
            std::string::npos)
      << j;
}

// docs/report.md, "Saturation". A line whose delay came mostly from the
// shared-CPU accounting gets a note that says what the accounting assumes and
// that its curve cannot bend (it pauses nobody: bench/oversub's stage case,
// whose producers' line read +15.6 / +15.3 % true at 25 / 50 % and +12.9 /
// +28.6 % predicted); a line measured oversubscribed with its delay mostly
// from pauses, and one measured with a CPU per thread, get neither.
TEST(Report, SharedCpuNoteSaysTheCurveCannotLevelOff) {
  auto half = [](double s) { return 0.5 * s; };
  profile::Profile profile =
      makeProfile({{"producer.c:10", half}, {"consumer.c:20", half}, {"alone.c:30", half}},
                  {{"producer.c:10", "delay=100000000\tshared-cpu-delay=80000000\tcpus=2\t"
                                     "running=1.8\twaiting=3.6\tidle=0.02"},
                   {"consumer.c:20", "delay=100000000\tshared-cpu-delay=20000000\tcpus=2\t"
                                     "running=1.8\twaiting=3.6\tidle=0.02"},
                   {"alone.c:30", "delay=100000000\tshared-cpu-delay=0\tcpus=2\t"
                                  "running=1.9\twaiting=0\tidle=0.05"}});
  profile::Analysis analysis = analyzeWith(profile);
  std::ostringstream out;
  ReportContext context{{"t.coz"}, profile::AnalysisOptions()};
  renderText(out, analysis, context, TextOptions());
  std::string text = out.str();
  std::string producer = lineWith(text, "note: producer.c:10");
  EXPECT_NE(producer.find("80% of its delay is CPU time freed on shared CPUs"), std::string::npos)
      << text;
  EXPECT_NE(producer.find("its curve is straight where a real speedup's gain may level off"),
            std::string::npos)
      << producer;
  std::string consumer = lineWith(text, "note: consumer.c:20");
  EXPECT_NE(consumer.find("threads running"), std::string::npos) << text; // oversubscribed
  EXPECT_EQ(consumer.find("level off"), std::string::npos) << consumer;
  EXPECT_EQ(lineWith(text, "note: alone.c:30"), "") << text;

  std::ostringstream json;
  renderJson(json, analysis, context);
  EXPECT_NE(json.str().find("\"shared_cpu_delay_share\":0.8,"), std::string::npos) << json.str();
}

// Samples a CPU-time timer took (threads moved from perf, or no perf) cover
// kernel time, perf's user time only: the report says how many there were.
TEST(Report, SamplesFromTimersAreNamedWithTheirKernelTime) {
  auto half = [](double s) { return 0.5 * s; };
  const char *const expected = "samples-expected=4200\tsamples-arrived=4000";
  struct Case {
    std::string runtime, note;
  } cases[] = {
      {std::string(expected) + "\ttimer-samples=1000",
       "note: 25 % of the samples came from CPU-time timers (threads that switched often, "
       "moved from perf_event, or perf_event unavailable); the others from perf_event, which "
       "samples user mode only. A timer's samples include kernel time"},
      {std::string(expected) + "\ttimer-samples=4000", "note: every sample came from a CPU-time "
                                                       "timer. A timer's samples include kernel "
                                                       "time and charge it to the line that made "
                                                       "the system call"},
      {std::string(expected) + "\ttimer-samples=3", "note: under 1 % of the samples came from"},
      {std::string(expected) + "\ttimer-samples=3990",
       "note: over 99 % of the samples came from CPU-time timers (threads that switched often, "
       "moved from perf_event, or perf_event unavailable); the others from perf_event"},
      {expected, ""},
      {"", ""}};
  for (const Case &c : cases) {
    profile::Profile profile = makeProfile({{"a.c:1", half}}, {}, c.runtime);
    profile::Analysis analysis = analyzeWith(profile);
    ReportContext context{{"t.coz"}, profile::AnalysisOptions()};
    std::ostringstream out, json;
    renderText(out, analysis, context, TextOptions());
    renderJson(json, analysis, context);
    if (c.note.empty()) {
      EXPECT_EQ(out.str().find("CPU-time timer"), std::string::npos) << c.runtime << out.str();
      EXPECT_NE(json.str().find("\"timer_samples\":0,"), std::string::npos) << json.str();
    } else {
      EXPECT_NE(out.str().find(c.note), std::string::npos) << c.runtime << "\n" << out.str();
      EXPECT_EQ(count(out.str(), "CPU-time timer"), 1u) << out.str();
    }
  }
  profile::Analysis analysis = analyzeWith(
      makeProfile({{"a.c:1", half}}, {}, std::string(expected) + "\ttimer-samples=1000"));
  std::ostringstream json;
  renderJson(json, analysis, ReportContext{{"t.coz"}, profile::AnalysisOptions()});
  EXPECT_NE(json.str().find("\"samples_arrived\":4000,\"timer_samples\":1000,"), std::string::npos)
      << json.str();
}

TEST(Report, JsonAndHtmlCarryTheSameNumbers) {
  profile::Profile profile = makeProfile({{"a.c:1", [](double s) { return std::min(s, 0.5); }},
                                          {"b.c:2", [](double s) { return 0.3 * s; }},
                                          {"c<x>.c:3", [](double s) { return 0.1 * s; }}});
  profile::Analysis analysis = analyzeWith(profile);
  ReportContext context{{"t.coz"}, profile::AnalysisOptions()};
  std::ostringstream json, html;
  renderJson(json, analysis, context);
  renderHtml(html, analysis, context);
  EXPECT_EQ(count(json.str(), "\"rank\":"), 3u);
  EXPECT_NE(json.str().find("\"slope\":0.674216"), std::string::npos) << json.str();
  std::string page = html.str();
  // The embedded data is the JSON document itself.
  std::string embedded = json.str();
  embedded.pop_back(); // trailing newline
  EXPECT_NE(page.find(embedded), std::string::npos);
  // Self-contained: nothing is fetched.
  EXPECT_EQ(page.find("src="), std::string::npos);
  EXPECT_EQ(page.find("stylesheet"), std::string::npos);
  EXPECT_EQ(page.find("@import"), std::string::npos);
  EXPECT_EQ(page.find("https://"), std::string::npos);
  std::regex http("http://(?!www\\.w3\\.org/2000/svg)");
  EXPECT_FALSE(std::regex_search(page, http));
  // A name with markup cannot close the data element.
  EXPECT_EQ(page.find("c<x>.c:3"), std::string::npos);
  EXPECT_EQ(count(page, "</script>"), 2u);
}

TEST(Report, DiffFindsGainedLostNewAndGone) {
  profile::Profile before = makeProfile({{"hot.c:1", [](double s) { return 0.8 * s; }},
                                         {"same.c:2", [](double s) { return 0.3 * s; }},
                                         {"old.c:3", [](double s) { return 0.2 * s; }},
                                         {"cold.c:4", [](double s) { return 0.1 * s; }}});
  profile::Profile after = makeProfile({{"hot.c:1", [](double) { return 0.0; }},
                                        {"same.c:2", [](double s) { return 0.3 * s; }},
                                        {"cold.c:4", [](double s) { return 0.5 * s; }},
                                        {"new.c:5", [](double s) { return 0.4 * s; }}});
  profile::Analysis a = analyzeWith(before), b = analyzeWith(after);
  std::vector<LineChange> changes = compareAnalyses(a, b);
  std::map<std::string, LineChange> byLine;
  for (const LineChange &change : changes)
    byLine[change.line] = change;
  EXPECT_EQ(byLine["hot.c:1"].kind, ChangeKind::Lost);
  EXPECT_NEAR(byLine["hot.c:1"].slopeChange, -0.8, 1e-9);
  EXPECT_EQ(byLine["cold.c:4"].kind, ChangeKind::Gained);
  EXPECT_NEAR(byLine["cold.c:4"].slopeChange, 0.4, 1e-9);
  EXPECT_EQ(byLine["same.c:2"].kind, ChangeKind::Unchanged);
  EXPECT_EQ(byLine["old.c:3"].kind, ChangeKind::Gone);
  EXPECT_EQ(byLine["new.c:5"].kind, ChangeKind::New);
  // Largest change first, unchanged last.
  EXPECT_EQ(changes.front().line, "hot.c:1");
  EXPECT_EQ(changes.back().line, "same.c:2");

  std::ostringstream text, json;
  renderDiffText(text, changes, a, b, {"before.coz", "after.coz"}, DiffTextOptions());
  EXPECT_NE(text.str().find("1 gained, 1 lost, 1 new, 1 gone, 1 unchanged"), std::string::npos)
      << text.str();
  EXPECT_EQ(text.str().find("same.c:2"), std::string::npos); // unchanged: only with --all
  renderDiffJson(json, changes, a, b, {"before.coz", "after.coz"});
  EXPECT_EQ(count(json.str(), "\"change\":"), 5u);
  EXPECT_NE(json.str().find("\"line\":\"hot.c:1\",\"point\":\"tp\",\"change\":\"lost\""),
            std::string::npos)
      << json.str();
}

namespace {

/// f.c:10 and two of its callers, a (0.6) and b (0.1), against f.c:10's own
/// 0.3; and another line.
profile::Analysis perCallerAnalysis() {
  return analyzeWith(makeProfile({{"f.c:10", [](double s) { return 0.3 * s; }},
                                  {"f.c:10 (via a)", [](double s) { return 0.6 * s; }},
                                  {"f.c:10 (via b)", [](double s) { return 0.1 * s; }},
                                  {"g.c:1", [](double s) { return 0.2 * s; }}}));
}

} // namespace

TEST(Report, TextGroupsPerCallerCurvesUnderTheirLine) {
  profile::Analysis analysis = perCallerAnalysis();
  ASSERT_EQ(analysis.lines.size(), 4u);
  std::ostringstream out;
  ReportContext context{{"t.coz"}, profile::AnalysisOptions()};
  renderText(out, analysis, context, TextOptions());
  std::string text = out.str();
  // The ranking keeps each curve a line of its own.
  EXPECT_NE(text.find("   1  f.c:10 (via a)"), std::string::npos) << text;
  // Then the section: f.c:10's own row, then its callers by rank, indented.
  size_t section = text.find("per calling context");
  ASSERT_NE(section, std::string::npos) << text;
  std::string rest = text.substr(section);
  std::regex own("\n +2  f\\.c:10 +tp +\\+0\\.300 ");
  std::regex viaA("\n +1    via a +tp +\\+0\\.600 ");
  std::regex viaB("\n +4    via b +tp +\\+0\\.100 ");
  std::smatch m1, m2, m3;
  ASSERT_TRUE(std::regex_search(rest, m1, own)) << rest;
  ASSERT_TRUE(std::regex_search(rest, m2, viaA)) << rest;
  ASSERT_TRUE(std::regex_search(rest, m3, viaB)) << rest;
  EXPECT_LT(m1.position(), m2.position());
  EXPECT_LT(m2.position(), m3.position());
  // g.c:1 has no callers: not in the section.
  EXPECT_EQ(rest.substr(0, rest.find("\n\n")).find("g.c:1"), std::string::npos) << rest;

  // Without per-caller lines, no section.
  std::ostringstream plain;
  renderText(plain, analyzeWith(makeProfile({{"g.c:1", [](double s) { return 0.2 * s; }}})),
             context, TextOptions());
  EXPECT_EQ(plain.str().find("per calling context"), std::string::npos);
}

TEST(Report, TextShortensLongCallersButKeepsTheSuffix) {
  std::string caller = "std::vector<std::pair<int, int>, std::allocator<std::pair<int, int> > "
                       ">::emplace_back(int&, int&)";
  std::string name =
      "/a/very/long/path/to/some/source/directory/file.cpp:1234 (via " + caller + ")";
  profile::Analysis analysis = analyzeWith(makeProfile({{name, [](double s) { return 0.3 * s; }}}));
  std::ostringstream out;
  ReportContext context{{"t.coz"}, profile::AnalysisOptions()};
  renderText(out, analysis, context, TextOptions());
  std::string text = out.str();
  // The ranking: the path cut at the front (30 columns), the caller in the
  // middle (what remains of 64), the " (via ...)" kept; the section: the
  // caller cut to 40 columns.
  EXPECT_NE(text.find("  .../directory/file.cpp:1234 (via std::vector<s...ck(int&, int&))  "),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("    via std::vector<std::p...ce_back(int&, int&)  "), std::string::npos)
      << text;
  // JSON keeps the whole name and caller.
  std::ostringstream json;
  renderJson(json, analysis, context);
  EXPECT_NE(json.str().find("\"caller\":\"" + jsonEscape(caller) + "\""), std::string::npos);
}

TEST(Report, JsonCarriesLocationAndCallerOfEachLine) {
  profile::Analysis analysis = perCallerAnalysis();
  ReportContext context{{"t.coz"}, profile::AnalysisOptions()};
  std::ostringstream out;
  renderJson(out, analysis, context);
  std::string json = out.str();
  EXPECT_NE(json.find("\"line\":\"f.c:10 (via a)\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"wait_kind\":null,\"location\":\"f.c:10\",\"caller\":\"a\""),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"wait_kind\":null,\"location\":\"f.c:10\",\"caller\":\"b\""),
            std::string::npos);
  EXPECT_NE(json.find("\"wait_kind\":null,\"location\":\"f.c:10\",\"caller\":null"),
            std::string::npos);
  EXPECT_NE(json.find("\"wait_kind\":null,\"location\":\"g.c:1\",\"caller\":null"),
            std::string::npos);
  // The groups: the line, its rank, its callers by rank.
  EXPECT_NE(json.find("\"calling_contexts\":[\n{\"location\":\"f.c:10\",\"line\":\"f.c:10\","
                      "\"rank\":2,\"callers\":[{\"caller\":\"a\",\"line\":\"f.c:10 (via a)\","
                      "\"rank\":1},{\"caller\":\"b\",\"line\":\"f.c:10 (via b)\",\"rank\":4}]}]"),
            std::string::npos)
      << json;
  // The HTML marks the per-caller cards.
  std::ostringstream html;
  renderHtml(html, analysis, context);
  EXPECT_NE(html.str().find("plot.caller ? 'card path'"), std::string::npos);
}

TEST(Report, ConfirmFixesAPerCallerLineWithItsCaller) {
  Settings settings;
  std::string problem;
  ASSERT_TRUE(
      fixedTargetSettings("f.c:10 (via ns::f(int) const)", "CAUSAL_TEST_PATH", settings, problem));
  Settings expected = {{"CAUSAL_FIXED_LINE", "f.c:10"}, {"CAUSAL_TEST_PATH", "ns::f(int) const"}};
  EXPECT_EQ(settings, expected);

  ASSERT_TRUE(fixedTargetSettings("f.c:10", "CAUSAL_TEST_PATH", settings, problem));
  EXPECT_EQ(settings, (Settings{{"CAUSAL_FIXED_LINE", "f.c:10"}}));
  ASSERT_TRUE(fixedTargetSettings("f.c:10 (disk wait)", "CAUSAL_TEST_PATH", settings, problem));
  EXPECT_EQ(settings, (Settings{{"CAUSAL_FIXED_WAIT", "f.c:10@disk"}}));

  // No name to select, or no --path to select a caller with.
  EXPECT_FALSE(fixedTargetSettings("f.c:10 (via )", "CAUSAL_TEST_PATH", settings, problem));
  EXPECT_NE(problem.find("neither"), std::string::npos);
  EXPECT_TRUE(settings.empty());
  EXPECT_FALSE(fixedTargetSettings("f.c:10 (via a)", nullptr, settings, problem));
  EXPECT_NE(problem.find("--path"), std::string::npos);
  EXPECT_TRUE(settings.empty());

  // This build's variable is the settings row's whose option is --path.
  const char *variable = pathSettingVariable();
  bool selected = fixedTargetSettings("f.c:10 (via a)", settings, problem);
  EXPECT_EQ(selected, variable != nullptr);
  if (variable) {
    ASSERT_EQ(settings.size(), 2u);
    EXPECT_EQ(settings[1], (std::pair<std::string, std::string>{variable, "a"}));
  }
}
