//===- Waits.cpp - `causal waits`: what the threads wait for --------------===//
//
// causal waits [options] [PROFILE]   (default: profile.coz)
//
// Reads PROFILE.waits (the sidecar `causal run --waits` writes; a path ending
// in .waits is read as it is), builds the wait-for graph with cascaded
// weights and prints its knots ranked by weight: the threads in each, where
// they wait and where they are woken (tools/profile/WaitGraph.h,
// docs/waits.md); with the causal profile beside it, what its experiments
// measured for the waits on edges to pseudo-threads (WaitEffects.h).
//
//===----------------------------------------------------------------------===//
#include "Commands.h"

#include "Options.h"
#include "Report.h"
#include "WaitGraph.h"
#include "WaitsReader.h"
#include "causal/waits_format.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sys/stat.h>

namespace {

void printWaitsUsage(FILE *out) {
  std::fprintf(out, "usage: causal waits [options] [PROFILE]\n"
                    "\n"
                    "Reads PROFILE.waits, the blocking calls recorded by `causal run --waits`\n"
                    "(default PROFILE: profile.coz; a path ending in .waits is read as given),\n"
                    "and shows what the threads wait for: the wait-for graph with wPerf's\n"
                    "cascaded weights and its knots, the groups of threads that wait only on\n"
                    "each other, ranked by weight, with the lines where they wait and where\n"
                    "they are woken. Weights are shares of the run time. When PROFILE has\n"
                    "experiments on waits (causal run --wait-experiments), an edge to the\n"
                    "disk, network, timer or unknown shows what they measured for its lines.\n"
                    "\n"
                    "options:\n"
                    "  --json                 the analysis as JSON\n"
                    "  --dot                  the graph for Graphviz (dot -Tsvg)\n"
                    "  --episodes             every recorded wait, as read (JSON)\n"
                    "  --merge-roles          one vertex per role: threads with the same start\n"
                    "                         routine (or, without one, the same name)\n"
                    "  --min-edge PERCENT     stop refining a knot once its lightest edge weighs\n"
                    "                         more than PERCENT of the run time (default: refine\n"
                    "                         down to a single thread or a simple cycle)\n"
                    "  --top N                edges listed outside knots (default 20, 0: all)\n"
                    "  -h, --help             this text\n");
}

bool endsWith(const std::string &text, const std::string &suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool parseShare(const std::string &text, double &value) {
  char *end = nullptr;
  value = std::strtod(text.c_str(), &end);
  return !text.empty() && end && *end == '\0' && value >= 0 && value <= 100;
}

} // namespace

int causal::waitsCommand(const Args &args) {
  bool json = false, dot = false, episodes = false, mergeRoles = false;
  double minEdgePercent = 0;
  size_t top = 20;
  std::vector<std::string> inputs;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &arg = args[i];
    auto value = [&](const char *name, std::string &out) {
      std::string prefix = std::string(name) + "=";
      if (arg.rfind(prefix, 0) == 0) {
        out = arg.substr(prefix.size());
        return true;
      }
      if (arg == name && i + 1 < args.size()) {
        out = args[++i];
        return true;
      }
      return false;
    };
    std::string text;
    if (arg == "-h" || arg == "--help") {
      printWaitsUsage(stdout);
      return 0;
    } else if (arg == "--json") {
      json = true;
    } else if (arg == "--dot") {
      dot = true;
    } else if (arg == "--episodes") {
      episodes = true;
    } else if (arg == "--merge-roles") {
      mergeRoles = true;
    } else if (arg.rfind("--min-edge", 0) == 0 && value("--min-edge", text)) {
      if (!parseShare(text, minEdgePercent)) {
        std::fprintf(stderr, "causal waits: error: --min-edge wants a percentage 0-100, not '%s'\n",
                     text.c_str());
        return 2;
      }
    } else if (arg.rfind("--top", 0) == 0 && value("--top", text)) {
      char *end = nullptr;
      unsigned long long n = std::strtoull(text.c_str(), &end, 10);
      if (text.empty() || *end || text[0] == '-') {
        std::fprintf(stderr, "causal waits: error: --top wants a count, not '%s'\n", text.c_str());
        return 2;
      }
      top = size_t(n);
    } else if (arg == "-" || arg.empty() || arg[0] != '-') {
      inputs.push_back(arg);
    } else {
      std::fprintf(stderr, "causal waits: error: unknown or incomplete option '%s'\n", arg.c_str());
      printWaitsUsage(stderr);
      return 2;
    }
  }
  if (int(json) + int(dot) + int(episodes) > 1) {
    std::fprintf(stderr, "causal waits: error: --json, --dot and --episodes exclude each other\n");
    return 2;
  }
  if (inputs.size() > 1) {
    std::fprintf(stderr, "causal waits: error: one profile at a time (got %zu)\n", inputs.size());
    return 2;
  }
  std::string input = inputs.empty() ? "profile.coz" : inputs[0];
  bool sidecarGiven = endsWith(input, causal::waits_format::kSuffix);
  std::string sidecar = sidecarGiven ? input : profile::waitsPathFor(input);

  profile::WaitsFile waits;
  std::string error;
  if (!profile::readWaitsFile(sidecar, waits, error)) {
    std::fprintf(stderr, "causal waits: error: %s\n", error.c_str());
    return 1;
  }
  report::WaitsContext context;
  context.sidecar = sidecar;
  context.mergeRoles = mergeRoles;
  context.warnings = waits.warnings;
  // The profile beside it, when there is one (PROFILE, or the sidecar's
  // name without .waits): are they from the same run, and what did its
  // experiments measure for the waits (docs/waits.md, "The causal effect of
  // a wait")? No profile, or one that cannot be read: no effects, no error.
  std::string profilePath =
      sidecarGiven ? input.substr(0, input.size() - std::strlen(causal::waits_format::kSuffix))
                   : input;
  profile::Profile profile;
  bool haveProfile = false;
  struct stat info;
  if (!profilePath.empty() && stat(profilePath.c_str(), &info) == 0 && !S_ISDIR(info.st_mode)) {
    profile::ReadOptions lenient;
    lenient.lenient = true;
    std::string readError;
    haveProfile = profile::readProfileFile(profilePath, profile, lenient, readError);
  }
  if (haveProfile && !sidecarGiven) {
    std::string mismatch = profile::waitsProfileMismatch(waits, profile);
    bool none = mismatch.find("none of the") == 0;
    if (none) {
      std::fprintf(stderr,
                   "causal waits: error: %s (to read the sidecar anyway, name it: causal waits "
                   "%s)\n",
                   mismatch.c_str(), sidecar.c_str());
      return 1;
    }
    if (!mismatch.empty())
      context.warnings.push_back(mismatch);
  }
  // The ranking `causal report` shows by default, computed once, only when
  // a view shows effects and the profile has experiments.
  profile::Analysis causalAnalysis;
  if (haveProfile && !profile.experiments.empty() && !episodes && !dot) {
    causalAnalysis = profile::analyze(profile, profile::AnalysisOptions());
    context.causal = &causalAnalysis;
  }
  for (const std::string &warning : context.warnings)
    std::fprintf(stderr, "causal waits: warning: %s\n", warning.c_str());
  if (episodes) {
    report::renderEpisodesJson(std::cout, waits);
    return report::finishOutput();
  }
  profile::WaitAnalysisOptions options;
  options.mergeRoles = mergeRoles;
  options.minEdgeShare = minEdgePercent / 100;
  profile::WaitAnalysis analysis = profile::analyzeWaits(waits, options);
  if (json)
    report::renderWaitsJson(std::cout, analysis, context);
  else if (dot)
    report::renderWaitsDot(std::cout, analysis, context);
  else
    report::renderWaitsText(std::cout, analysis, context, report::WaitsTextOptions{top});
  return report::finishOutput();
}
