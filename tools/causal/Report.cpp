//===- Report.cpp - `causal report`: read profiles, rank lines ------------===//
//
// causal report [options] [PROFILE...]   (default: profile.coz)
//
// Reads our profiles and Coz's (tab-separated or JSON Lines, several runs and
// files), computes one speedup curve per line and progress point, and prints
// the ranked lines; --json prints the same numbers as JSON and --html FILE
// writes a self-contained page with one plot per line. docs/report.md.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"

#include "Options.h"
#include "Report.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <unistd.h>

namespace {

/// Block characters need a UTF-8 terminal; on a terminal whose locale is not
/// UTF-8, curves are drawn with ASCII. Files and pipes always get UTF-8.
bool terminalLacksUtf8() {
  if (isatty(STDOUT_FILENO) != 1)
    return false;
  const char *locale = nullptr;
  for (const char *name : {"LC_ALL", "LC_CTYPE", "LANG"}) {
    const char *value = std::getenv(name);
    if (value && *value) {
      locale = value;
      break;
    }
  }
  if (!locale)
    return true;
  std::string text(locale);
  for (char &c : text)
    c = char(std::tolower(static_cast<unsigned char>(c)));
  return text.find("utf-8") == std::string::npos && text.find("utf8") == std::string::npos;
}

void printReportUsage(FILE *out) {
  std::fprintf(
      out,
      "usage: causal report [options] [PROFILE...]\n"
      "\n"
      "Reads causal or Coz profiles (default: profile.coz; '-' is standard input)\n"
      "and ranks the lines whose optimization would speed the program up most.\n"
      "Several files, and several runs appended to one file, are combined.\n"
      "\n"
      "options:\n"
      "  --html FILE            also write a self-contained HTML page with a plot per line\n"
      "  --ascii                draw curves with ASCII characters\n"
      "  --samples              show the hottest lines by samples (where time went)\n"
      "%s"
      "  -h, --help             this text\n",
      causal::report::commonOptionsHelp());
}

} // namespace

int causal::reportCommand(const Args &args) {
  report::CommonOptions common;
  std::vector<std::string> inputs;
  std::string htmlPath;
  bool ascii = false;
  bool samplesView = false;
  bool onlyInputs = false;
  for (size_t i = 0; i < args.size();) {
    const std::string &arg = args[i];
    if (onlyInputs || arg == "-" || arg.empty() || arg[0] != '-') {
      inputs.push_back(arg);
      ++i;
      continue;
    }
    if (arg == "--") {
      onlyInputs = true;
      ++i;
      continue;
    }
    if (arg == "-h" || arg == "--help") {
      printReportUsage(stdout);
      return 0;
    }
    if (arg == "--ascii") {
      ascii = true;
      ++i;
      continue;
    }
    if (arg == "--samples") {
      samplesView = true;
      ++i;
      continue;
    }
    if (arg == "--html" || arg.rfind("--html=", 0) == 0) {
      if (arg == "--html") {
        if (i + 1 >= args.size()) {
          std::fprintf(stderr, "causal report: error: --html needs a file name\n");
          return 2;
        }
        htmlPath = args[i + 1];
        i += 2;
      } else {
        htmlPath = arg.substr(7);
        ++i;
      }
      if (htmlPath.empty()) {
        std::fprintf(stderr, "causal report: error: --html needs a file name\n");
        return 2;
      }
      continue;
    }
    std::string error;
    switch (report::parseCommonOption(args, i, common, error)) {
    case report::OptionResult::Consumed:
      continue;
    case report::OptionResult::Error:
      std::fprintf(stderr, "causal report: error: %s\n", error.c_str());
      return 2;
    case report::OptionResult::NotMine:
      std::fprintf(stderr, "causal report: error: unknown option '%s'\n", arg.c_str());
      printReportUsage(stderr);
      return 2;
    }
  }
  if (inputs.empty())
    inputs.push_back("profile.coz");

  if (!htmlPath.empty()) {
    std::string problem = report::htmlOutputProblem(htmlPath, inputs);
    if (!problem.empty()) {
      std::fprintf(stderr, "causal report: error: %s\n", problem.c_str());
      return 2;
    }
  }
  profile::Profile profile;
  if (!report::readProfiles(inputs, common.read, profile, "report"))
    return 1;
  report::ReportContext context{inputs, common.analysis};
  if (samplesView) {
    if (!htmlPath.empty()) {
      std::fprintf(stderr, "causal report: error: --html draws speedup curves; it does not go "
                           "with --samples\n");
      return 2;
    }
    std::vector<profile::LineSamples> lines = profile::hottestLines(profile);
    if (common.json)
      report::renderSamplesJson(std::cout, lines, context);
    else
      report::renderSamplesText(std::cout, lines, context, common.topGiven ? common.top : 10);
    std::cout.flush();
    return std::cout ? 0 : 1;
  }
  profile::Analysis analysis = profile::analyze(profile, common.analysis);

  if (!htmlPath.empty()) {
    std::ofstream html(htmlPath, std::ios::binary | std::ios::trunc);
    if (html)
      report::renderHtml(html, analysis, context);
    html.close();
    if (!html) {
      std::fprintf(stderr, "causal report: error: cannot write %s\n", htmlPath.c_str());
      return 1;
    }
    std::fprintf(stderr, "causal report: wrote %s (%zu plots)\n", htmlPath.c_str(), [&] {
      size_t plots = 0;
      for (const auto &line : analysis.lines)
        plots += line.points.size();
      return plots;
    }());
  }
  if (common.json) {
    report::renderJson(std::cout, analysis, context);
  } else {
    report::TextOptions text;
    text.top = common.topGiven ? common.top : 10;
    text.color = report::useColor(common.color, STDOUT_FILENO);
    text.ascii = ascii || terminalLacksUtf8();
    report::renderText(std::cout, analysis, context, text);
  }
  std::cout.flush();
  return std::cout ? 0 : 1;
}
