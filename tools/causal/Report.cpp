//===- Report.cpp - `causal report`: read profiles, rank lines ------------===//
//
// causal report [options] [PROFILE...]   (default: profile.coz)
//
// Reads our profiles and Coz's (tab-separated or JSON Lines, several runs and
// files), computes one speedup curve per line and progress point, and prints
// the ranked lines; --json prints the same numbers as JSON and --html FILE
// writes a self-contained page with one plot per line and, when the profile
// has a waits sidecar (PROFILE.waits), its wait-for graph, and with a paths
// sidecar (PROFILE.paths), the call-path trees. docs/report.md.
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
#include <sys/stat.h>
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
  auto own = [&](const Args &args, size_t &i, std::string &error) {
    const std::string &arg = args[i];
    if (arg == "--ascii" || arg == "--samples") {
      (arg == "--ascii" ? ascii : samplesView) = true;
      ++i;
      return report::OptionResult::Consumed;
    }
    if (arg != "--html" && arg.rfind("--html=", 0) != 0)
      return report::OptionResult::NotMine;
    bool separate = arg == "--html";
    htmlPath = !separate ? arg.substr(7) : i + 1 < args.size() ? args[i + 1] : "";
    i += separate ? 2 : 1;
    if (htmlPath.empty()) {
      error = "--html needs a file name";
      return report::OptionResult::Error;
    }
    return report::OptionResult::Consumed;
  };
  if (int status = report::parseCommandLine(args, "report", printReportUsage, own, common, inputs);
      status >= 0)
    return status;
  if (inputs.empty())
    inputs.push_back("profile.coz");

  if (!htmlPath.empty()) {
    std::string problem =
        report::outputProblem(htmlPath, report::OutputKind::HtmlPage, inputs, "--html");
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
    profile::addSourceText(lines);
    if (common.json)
      report::renderSamplesJson(std::cout, lines, context);
    else
      report::renderSamplesText(std::cout, lines, context, common.topGiven ? common.top : 10);
    return report::finishOutput();
  }
  profile::Analysis analysis = profile::analyze(profile, common.analysis);
  profile::addSourceText(analysis);

  // The waits section of the page: the sidecar of the (single) profile.
  profile::WaitAnalysis waits;
  if (!htmlPath.empty() && inputs.size() == 1 && inputs[0] != "-") {
    profile::WaitsFile sidecar;
    std::string error;
    std::string sidecarPath = profile::waitsPathFor(inputs[0]);
    if (profile::readWaitsFile(sidecarPath, sidecar, error)) {
      waits = profile::analyzeWaits(sidecar, profile::WaitAnalysisOptions());
      context.waits = &waits;
    } else {
      context.waitsProblem = error;
    }
  }
  // The call-paths section: the paths sidecar of the (single) profile, when
  // there is one (docs/paths.md).
  profile::PathsFile pathsFile;
  profile::PathsAnalysis paths;
  if (!htmlPath.empty() && inputs.size() == 1 && inputs[0] != "-") {
    std::string sidecarPath = profile::pathsPathFor(inputs[0]);
    struct stat info;
    if (stat(sidecarPath.c_str(), &info) == 0 || !profile::pathsPartFiles(sidecarPath).empty()) {
      std::string error;
      if (profile::readPathsFile(sidecarPath, pathsFile, error)) {
        paths = profile::analyzePaths(pathsFile, profile::PathsAnalysisOptions());
        context.paths = &paths;
        context.pathsFile = &pathsFile;
      } else {
        context.pathsProblem = error;
      }
    }
  }
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
  return report::finishOutput();
}
