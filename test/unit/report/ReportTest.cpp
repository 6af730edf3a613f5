//===- ReportTest.cpp - Rendering and comparing causal profiles -----------===//
#include "Report.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <regex>
#include <sstream>

using namespace causal;
using namespace causal::report;

namespace {

/// A profile with one line per curve function, 21 speedups, 2 experiments each.
/// 1000 samples of the line per second of experiment (1 ms period): the line
/// runs all the time, so its physical bound (b = 1) allows every curve here.
profile::Profile
makeProfile(const std::vector<std::pair<std::string, std::function<double(double)>>> &lines) {
  std::ostringstream text;
  text << "startup\ttime=1\n";
  for (const auto &line : lines)
    for (int k = 0; k <= 20; ++k)
      for (int c = 0; c < 2; ++c) {
        double s = k / 20.0;
        text << "experiment\tselected=" << line.first << "\tspeedup=" << s
             << "\tduration=" << std::llround(1e9 * (1 - line.second(s)))
             << "\tselected-samples=1000\nthroughput-point\tname=tp\tdelta=1000\n";
      }
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
