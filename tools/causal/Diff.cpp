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
      printDiffUsage(stdout);
      return 0;
    }
    if (arg == "--all") {
      all = true;
      ++i;
      continue;
    }
    std::string error;
    switch (report::parseCommonOption(args, i, common, error)) {
    case report::OptionResult::Consumed:
      continue;
    case report::OptionResult::Error:
      std::fprintf(stderr, "causal diff: error: %s\n", error.c_str());
      return 2;
    case report::OptionResult::NotMine:
      std::fprintf(stderr, "causal diff: error: unknown option '%s'\n", arg.c_str());
      printDiffUsage(stderr);
      return 2;
    }
  }
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
  std::cout.flush();
  return std::cout ? 0 : 1;
}
