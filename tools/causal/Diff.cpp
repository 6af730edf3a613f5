//===- Diff.cpp - `causal diff`: compare two profiles ---------------------===//
//
// causal diff [options] BEFORE AFTER
//
// Analyses both profiles with the same options and lists the lines whose
// impact (slope of the speedup curve) changed: gained, lost (95 % intervals
// do not overlap), new or gone. Typical use: before and after an
// optimization. --json prints the same as JSON. docs/report.md.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"

#include "Options.h"
#include "Report.h"

#include <cstdio>
#include <iostream>
#include <unistd.h>

namespace {

void printDiffUsage(FILE *out) {
  std::fprintf(out,
               "usage: causal diff [options] BEFORE AFTER\n"
               "\n"
               "Compares two causal (or Coz) profiles line by line: which lines gained or\n"
               "lost impact, which are new, which are gone.\n"
               "\n"
               "options:\n"
               "  --all                  also list unchanged lines\n"
               "%s"
               "  -h, --help             this text\n",
               causal::report::commonOptionsHelp());
}

} // namespace

int causal::diffCommand(const Args &args) {
  report::CommonOptions common;
  std::vector<std::string> inputs;
  bool all = false;
  auto own = [&](const Args &args, size_t &i, std::string &) {
    if (args[i] != "--all")
      return report::OptionResult::NotMine;
    all = true;
    ++i;
    return report::OptionResult::Consumed;
  };
  if (int status = report::parseCommandLine(args, "diff", printDiffUsage, own, common, inputs);
      status >= 0)
    return status;
  if (inputs.size() != 2) {
    std::fprintf(stderr, "causal diff: error: expected two profiles (BEFORE AFTER), got %zu\n",
                 inputs.size());
    printDiffUsage(stderr);
    return 2;
  }
  profile::Profile before, after;
  if (!report::readProfiles({inputs[0]}, common.read, before, "diff") ||
      !report::readProfiles({inputs[1]}, common.read, after, "diff"))
    return 1;
  profile::Analysis beforeAnalysis = profile::analyze(before, common.analysis);
  profile::Analysis afterAnalysis = profile::analyze(after, common.analysis);
  std::vector<report::LineChange> changes = report::compareAnalyses(beforeAnalysis, afterAnalysis);
  if (common.json) {
    report::renderDiffJson(std::cout, changes, beforeAnalysis, afterAnalysis, inputs);
  } else {
    report::DiffTextOptions text;
    text.top = common.topGiven ? common.top : 20;
    text.all = all;
    text.color = report::useColor(common.color, STDOUT_FILENO);
    report::renderDiffText(std::cout, changes, beforeAnalysis, afterAnalysis, inputs, text);
  }
  return report::finishOutput();
}
