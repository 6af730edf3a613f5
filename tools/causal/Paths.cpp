//===- Paths.cpp - `causal paths`: calling contexts of chosen functions ---===//
//
// causal paths report [options] [PROFILE]   (default: profile.coz)
// causal paths enable --pid PID NAME...
// causal paths disable --pid PID [NAME...]
// causal paths top --pid PID [options]
//
// Reads PROFILE.paths (the sidecar `causal run --paths` writes for programs
// built with -fcausal-paths=NAME; a path ending in .paths is read as it is),
// merges each chosen function's calling contexts into trees
// (tools/profile/PathTree.h) and prints them: text (the callers tree, or
// top-down), JSON, or folded lines for flame graph tools
// (tools/report/Paths.cpp). docs/paths.md, "Reading paths (report)".
//
// enable, disable and top act on a running program through the control
// block its runtime serves (tools/profile/PathsControl.h): enable or disable
// chosen functions by name, or write PROFILE.paths now and show it as report
// does, again every --interval seconds. docs/paths.md, "Live control".
//
//===----------------------------------------------------------------------===//
#include "Commands.h"

#include "Options.h"
#include "PathTree.h"
#include "PathsControl.h"
#include "PathsReader.h"
#include "Report.h"
#include "causal/paths_control.h"
#include "causal/paths_format.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace {

void printPathsUsage(FILE *out) {
  std::fprintf(out, "usage: causal paths <command> [options] [PROFILE]\n"
                    "\n"
                    "commands:\n"
                    "  report   the calling contexts of the functions chosen with\n"
                    "           -fcausal-paths=NAME, as recorded by `causal run --paths`\n"
                    "  enable   --pid PID NAME...: collect paths of these chosen functions\n"
                    "           in a running program\n"
                    "  disable  --pid PID [NAME...]: stop collecting them (no name: all)\n"
                    "  top      --pid PID: the paths of a running program, refreshed\n"
                    "\n"
                    "'causal paths COMMAND --help' describes its options.\n");
}

void printReportUsage(FILE *out) {
  std::fprintf(out,
               "usage: causal paths report [options] [PROFILE]\n"
               "\n"
               "Reads PROFILE.paths, the calling contexts of the chosen functions recorded by\n"
               "`causal run --paths` (default PROFILE: profile.coz; a path ending in .paths is\n"
               "read as given), and shows per function its totals and the tree of its callers:\n"
               "which caller makes it matter. docs/paths.md.\n"
               "\n"
               "options:\n"
               "  --metric M        what trees are sorted by and folded lines count: calls,\n"
               "                    cpu-ns, wall-ns, blocked-ns or samples (default calls)\n"
               "  --top-down        the top-down tree (outermost frames first) instead of the\n"
               "                    callers tree\n"
               "  --function GLOB   only functions whose name or linkage name matches GLOB\n"
               "                    (shell pattern; repeatable)\n"
               "  --run N           only run N of the file (1 is the first; repeatable)\n"
               "  --depth N         show N levels below the function (default 0: all)\n"
               "  --min-share P     hide branches below P %% of the function's total of the\n"
               "                    metric (default 0)\n"
               "  --json            the trees as JSON (docs/paths.md has the schema)\n"
               "  --folded          one line per path, `frame;...;function VALUE`, for\n"
               "                    flamegraph.pl, inferno or speedscope\n"
               "  --no-location     folded frames without their (FILE:LINE)\n"
               "  --output FILE     write to FILE instead of standard output\n"
               "  -h, --help        this text\n");
}

bool endsWith(const std::string &text, const std::string &suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool parseNumber(const std::string &text, double low, double high, double &value) {
  char *end = nullptr;
  value = std::strtod(text.c_str(), &end);
  return !text.empty() && end && *end == '\0' && value >= low && value <= high;
}

bool sameFile(const std::string &a, const std::string &b) {
  struct stat x, y;
  return stat(a.c_str(), &x) == 0 && stat(b.c_str(), &y) == 0 && x.st_dev == y.st_dev &&
         x.st_ino == y.st_ino;
}

constexpr const char *kCommand = "causal paths report";

int pathsReport(const causal::Args &args) {
  using namespace causal;
  bool json = false, folded = false, topDown = false, noLocation = false;
  bool depthGiven = false, shareGiven = false;
  profile::PathsAnalysisOptions analysisOptions;
  report::PathsViewOptions view;
  std::string output;
  std::vector<std::string> inputs;
  bool onlyInputs = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &arg = args[i];
    if (onlyInputs || arg.empty() || arg[0] != '-' || arg == "-") {
      inputs.push_back(arg);
      continue;
    }
    if (arg == "--") {
      onlyInputs = true;
      continue;
    }
    std::string name = arg, text;
    bool hasValue = false;
    if (size_t equals = arg.find('='); arg.rfind("--", 0) == 0 && equals != std::string::npos) {
      name = arg.substr(0, equals);
      text = arg.substr(equals + 1);
      hasValue = true;
    }
    auto flag = [&](const char *option, bool &to) {
      if (name != option)
        return false;
      if (hasValue) {
        std::fprintf(stderr, "%s: error: %s takes no value\n", kCommand, option);
        std::exit(2);
      }
      to = true;
      return true;
    };
    // An option with a value, as the next word or after '='.
    auto value = [&](const char *option) {
      if (name != option)
        return false;
      if (!hasValue) {
        if (i + 1 >= args.size()) {
          std::fprintf(stderr, "%s: error: %s needs a value\n", kCommand, option);
          std::exit(2);
        }
        text = args[++i];
      }
      return true;
    };
    if (arg == "-h" || arg == "--help") {
      printReportUsage(stdout);
      return 0;
    }
    if (flag("--json", json) || flag("--folded", folded) || flag("--top-down", topDown) ||
        flag("--no-location", noLocation))
      continue;
    if (value("--metric")) {
      if (!profile::parsePathMetric(text, analysisOptions.metric)) {
        std::fprintf(stderr,
                     "%s: error: --metric wants calls, cpu-ns, wall-ns, blocked-ns or samples, "
                     "not '%s'\n",
                     kCommand, text.c_str());
        return 2;
      }
    } else if (value("--function")) {
      if (text.empty()) {
        std::fprintf(stderr, "%s: error: --function wants a name or pattern\n", kCommand);
        return 2;
      }
      analysisOptions.functions.push_back(text);
    } else if (value("--run")) {
      size_t run = 0;
      if (!parseCount(text, 1, 1000000, run)) {
        std::fprintf(stderr, "%s: error: --run wants a run number from 1, not '%s'\n", kCommand,
                     text.c_str());
        return 2;
      }
      analysisOptions.runs.push_back(run - 1);
    } else if (value("--depth")) {
      size_t depth = 0;
      if (!parseCount(text, 0, 100000, depth)) {
        std::fprintf(stderr, "%s: error: --depth wants a count of levels (0: all), not '%s'\n",
                     kCommand, text.c_str());
        return 2;
      }
      view.limits.maxDepth = depth;
      depthGiven = true;
    } else if (value("--min-share")) {
      double percent = 0;
      if (!parseNumber(text, 0, 100, percent)) {
        std::fprintf(stderr, "%s: error: --min-share wants a percentage 0-100, not '%s'\n",
                     kCommand, text.c_str());
        return 2;
      }
      view.limits.minShare = percent / 100;
      shareGiven = true;
    } else if (value("--output")) {
      if (text.empty()) {
        std::fprintf(stderr, "%s: error: --output wants a file name\n", kCommand);
        return 2;
      }
      output = text;
    } else {
      std::fprintf(stderr, "%s: error: unknown option '%s'\n", kCommand, arg.c_str());
      printReportUsage(stderr);
      return 2;
    }
  }
  if (json && folded) {
    std::fprintf(stderr, "%s: error: --json and --folded exclude each other\n", kCommand);
    return 2;
  }
  if (folded && (topDown || depthGiven || shareGiven)) {
    std::fprintf(stderr,
                 "%s: error: --top-down, --depth and --min-share shape the trees; --folded writes "
                 "every path whole\n",
                 kCommand);
    return 2;
  }
  if (noLocation && !folded) {
    std::fprintf(stderr, "%s: error: --no-location goes with --folded\n", kCommand);
    return 2;
  }
  if (inputs.size() > 1) {
    std::fprintf(stderr, "%s: error: one profile at a time (got %zu)\n", kCommand, inputs.size());
    return 2;
  }
  std::string input = inputs.empty() ? "profile.coz" : inputs[0];
  if (input == "-") {
    std::fprintf(stderr, "%s: error: the paths sidecar is a file; name it or its profile\n",
                 kCommand);
    return 2;
  }
  std::string sidecar =
      endsWith(input, paths_format::kSuffix) ? input : profile::pathsPathFor(input);
  struct stat info;
  bool found = stat(sidecar.c_str(), &info) == 0;
  int statError = errno;
  // A run still going (or killed) may have only its part file.
  bool onlyParts = !found && statError == ENOENT && !profile::pathsPartFiles(sidecar).empty();
  if (!found && !onlyParts) {
    if (statError == ENOENT)
      std::fprintf(stderr,
                   "causal: %s not found: run the program with `causal run --paths` and build it "
                   "with -fcausal-paths=NAME (docs/paths.md)\n",
                   sidecar.c_str());
    else
      std::fprintf(stderr, "%s: error: %s: %s\n", kCommand, sidecar.c_str(),
                   std::strerror(statError));
    return 1;
  }
  if (!onlyParts && S_ISDIR(info.st_mode)) {
    std::fprintf(stderr, "%s: error: %s is a directory, not a paths sidecar\n", kCommand,
                 sidecar.c_str());
    return 1;
  }
  if (!output.empty()) {
    struct stat out;
    if (sameFile(output, sidecar) || sameFile(output, input)) {
      std::fprintf(stderr,
                   "%s: error: --output %s is an input of this command; name another file\n",
                   kCommand, output.c_str());
      return 2;
    }
    if (stat(output.c_str(), &out) == 0 && S_ISDIR(out.st_mode)) {
      std::fprintf(stderr, "%s: error: --output %s is a directory; it names a file\n", kCommand,
                   output.c_str());
      return 2;
    }
  }

  profile::PathsFile file;
  std::string error;
  if (!profile::readPathsFile(sidecar, file, error)) {
    std::fprintf(stderr, "%s: error: %s\n", kCommand, error.c_str());
    return 1;
  }
  for (const std::string &warning : file.warnings)
    std::fprintf(stderr, "%s: warning: %s\n", kCommand, warning.c_str());
  profile::PathsAnalysis analysis = profile::analyzePaths(file, analysisOptions);
  if (!analysis.badRuns.empty()) {
    std::fprintf(stderr, "%s: error: %s has %zu run(s); there is no run %s\n", kCommand,
                 sidecar.c_str(), file.runs.size(), analysis.badRuns.front().c_str());
    return 1;
  }
  if (!analysis.unmatchedPatterns.empty()) {
    std::string names;
    size_t count = 0;
    for (size_t index : analysis.runIndices)
      for (const auto &[id, function] : file.runs[index].functions)
        if (names.find(function.displayName()) == std::string::npos && count++ < 20)
          names += (names.empty() ? "" : ", ") + function.displayName();
    std::fprintf(stderr, "%s: error: no chosen function matches '%s' (the file has: %s)\n",
                 kCommand, analysis.unmatchedPatterns.front().c_str(),
                 names.empty() ? "none" : names.c_str());
    return 1;
  }

  std::ofstream file_out;
  std::ostream *out = &std::cout;
  if (!output.empty()) {
    file_out.open(output, std::ios::binary | std::ios::trunc);
    if (!file_out) {
      std::fprintf(stderr, "%s: error: cannot write %s: %s\n", kCommand, output.c_str(),
                   std::strerror(errno));
      return 1;
    }
    out = &file_out;
  }
  view.topDown = topDown;
  view.withLocation = !noLocation;
  if (json) {
    report::renderPathsJson(*out, analysis, file, view);
  } else if (folded) {
    size_t withLines = 0;
    for (const profile::FunctionPaths &f : analysis.functions)
      withLines += profile::foldedLines(f, analysis.metric, view.withLocation).empty() ? 0 : 1;
    if (withLines > 1)
      std::fprintf(stderr,
                   "%s: note: folded lines of %zu functions: where one calls another, a flame "
                   "graph counts the inner one's time twice (pick one with --function)\n",
                   kCommand, withLines);
    report::renderPathsFolded(*out, analysis, view);
  } else {
    report::renderPathsText(*out, analysis, file, view);
  }
  if (!output.empty()) {
    file_out.close();
    if (!file_out) {
      std::fprintf(stderr, "%s: error: cannot write %s\n", kCommand, output.c_str());
      return 1;
    }
    return 0;
  }
  return report::finishOutput();
}

// ---- Live control: enable, disable, top --------------------------------------------

void printControlUsage(FILE *out, const char *command) {
  bool enable = !std::strcmp(command, "enable");
  std::fprintf(
      out,
      "usage: causal paths %s --pid PID %s\n"
      "\n"
      "%s the call paths of chosen functions (built with -fcausal-paths=NAME) in\n"
      "the running program PID, started by `causal run` (with or without --paths).\n"
      "A NAME is a name or fnmatch glob of a chosen function's symbol, its demangled\n"
      "name or that name without parameters, as --paths takes it; 'all': every one.\n"
      "%s"
      "docs/paths.md, \"Live control\".\n"
      "\n"
      "options:\n"
      "  --pid PID         the process\n"
      "  --timeout S       wait at most S seconds for its answer (default 10)\n"
      "  -h, --help        this text\n",
      command, enable ? "NAME..." : "[NAME...]", enable ? "Starts collecting" : "Stops collecting",
      enable ? "" : "Without a NAME, every chosen function. An entry under way still ends.\n");
}

void printTopUsage(FILE *out) {
  std::fprintf(out,
               "usage: causal paths top --pid PID [options]\n"
               "\n"
               "Asks the running program PID (started by `causal run`, built with\n"
               "-fcausal-paths=NAME) to write its PROFILE.paths now, and shows its run's\n"
               "paths as `causal paths report` does; again every --interval seconds until the\n"
               "program ends (or --count). Enable functions with `causal paths enable`.\n"
               "docs/paths.md, \"Live control\".\n"
               "\n"
               "options:\n"
               "  --pid PID         the process\n"
               "  --interval S      seconds between refreshes (default 2)\n"
               "  --count N         N refreshes, then stop (default 0: until it ends)\n"
               "  --once            one refresh (--count 1)\n"
               "  --json            each refresh as `causal paths report --json` writes it\n"
               "  --metric M        calls, cpu-ns, wall-ns, blocked-ns or samples (default calls)\n"
               "  --top K           the K functions heaviest by the metric (default 0: all)\n"
               "  --depth N         show N levels below each function (default 0: all)\n"
               "  --timeout S       wait at most S seconds for each answer (default 10)\n"
               "  -h, --help        this text\n");
}

// Options of the live commands; unknown ones are errors.
struct LiveOptions {
  int pid = 0;
  double timeout = 10, interval = 2;
  size_t count = 0, top = 0, depth = 0;
  bool json = false;
  causal::profile::PathMetric metric = causal::profile::PathMetric::Calls;
  std::vector<std::string> names;
};

// 0: parsed; else the exit status (help: 0 after printing, -1 so the caller returns 0).
int parseLiveOptions(const causal::Args &args, const std::string &command, bool top,
                     LiveOptions &options) {
  using namespace causal;
  std::string prefix = "causal paths " + command;
  bool onlyNames = false, pidGiven = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &arg = args[i];
    if (onlyNames || arg.empty() || arg[0] != '-') {
      if (top) {
        std::fprintf(stderr, "%s: error: unexpected argument '%s'\n", prefix.c_str(), arg.c_str());
        return 2;
      }
      options.names.push_back(arg);
      continue;
    }
    if (arg == "--") {
      onlyNames = true;
      continue;
    }
    if (arg == "-h" || arg == "--help") {
      if (top)
        printTopUsage(stdout);
      else
        printControlUsage(stdout, command.c_str());
      return -1;
    }
    std::string name = arg, text;
    bool hasValue = false;
    if (size_t equals = arg.find('='); arg.rfind("--", 0) == 0 && equals != std::string::npos) {
      name = arg.substr(0, equals);
      text = arg.substr(equals + 1);
      hasValue = true;
    }
    auto value = [&]() {
      if (!hasValue) {
        if (i + 1 >= args.size()) {
          std::fprintf(stderr, "%s: error: %s needs a value\n", prefix.c_str(), name.c_str());
          return false;
        }
        text = args[++i];
      }
      return true;
    };
    auto seconds = [&](double &to, double low) {
      if (!value())
        return false;
      if (!parseNumber(text, low, 86400, to)) {
        std::fprintf(stderr, "%s: error: %s wants seconds from %g to 86400, not '%s'\n",
                     prefix.c_str(), name.c_str(), low, text.c_str());
        return false;
      }
      return true;
    };
    auto count = [&](size_t &to, size_t low) {
      if (!value())
        return false;
      if (!parseCount(text, low, 1000000000, to)) {
        std::fprintf(stderr, "%s: error: %s wants a number from %zu, not '%s'\n", prefix.c_str(),
                     name.c_str(), low, text.c_str());
        return false;
      }
      return true;
    };
    if (name == "--pid") {
      size_t pid = 0;
      if (!value())
        return 2;
      if (!parseCount(text, 1, 0x7fffffff, pid)) {
        std::fprintf(stderr, "%s: error: --pid wants a process id, not '%s'\n", prefix.c_str(),
                     text.c_str());
        return 2;
      }
      options.pid = int(pid);
      pidGiven = true;
    } else if (name == "--timeout") {
      if (!seconds(options.timeout, 0.1))
        return 2;
    } else if (top && name == "--interval") {
      if (!seconds(options.interval, 0.1))
        return 2;
    } else if (top && name == "--count") {
      if (!count(options.count, 1))
        return 2;
    } else if (top && name == "--top") {
      if (!count(options.top, 0))
        return 2;
    } else if (top && name == "--depth") {
      if (!count(options.depth, 0))
        return 2;
    } else if (top && (name == "--once" || name == "--json") && !hasValue) {
      if (name == "--once")
        options.count = 1;
      else
        options.json = true;
    } else if (top && name == "--metric") {
      if (!value())
        return 2;
      if (!profile::parsePathMetric(text, options.metric)) {
        std::fprintf(stderr,
                     "%s: error: --metric wants calls, cpu-ns, wall-ns, blocked-ns or samples, "
                     "not '%s'\n",
                     prefix.c_str(), text.c_str());
        return 2;
      }
    } else {
      std::fprintf(stderr, "%s: error: unknown option '%s'\n", prefix.c_str(), arg.c_str());
      if (top)
        printTopUsage(stderr);
      else
        printControlUsage(stderr, command.c_str());
      return 2;
    }
  }
  if (!pidGiven) {
    std::fprintf(stderr, "%s: error: --pid PID names the process\n", prefix.c_str());
    return 2;
  }
  return 0;
}

int pathsControl(const causal::Args &args, const std::string &command) {
  using namespace causal;
  namespace pc = causal::paths_control;
  std::string prefix = "causal paths " + command;
  bool enable = command == "enable";
  LiveOptions options;
  if (int status = parseLiveOptions(args, command, false, options))
    return status < 0 ? 0 : status;
  if (options.names.empty()) {
    if (enable) {
      std::fprintf(stderr,
                   "%s: error: name the functions to enable ('all': every chosen function)\n",
                   prefix.c_str());
      return 2;
    }
    options.names.push_back("all");
  }
  std::string patterns, error;
  if (!profile::joinControlNames(options.names, patterns, error)) {
    std::fprintf(stderr, "%s: error: %s\n", prefix.c_str(), error.c_str());
    return 2;
  }
  profile::PathsControl control;
  profile::ControlAnswer answer;
  if (!control.open(options.pid, error) ||
      !control.command(enable ? pc::kEnable : pc::kDisable, patterns, options.timeout, answer,
                       error)) {
    std::fprintf(stderr, "%s: error: %s\n", prefix.c_str(), error.c_str());
    return 1;
  }
  for (const std::string &name : answer.unmatched)
    std::fprintf(stderr,
                 "%s: warning: no function chosen at build time matches '%s' in process %d "
                 "(build with -fcausal-paths=%s)\n",
                 prefix.c_str(), name.c_str(), options.pid, name.c_str());
  std::printf("%s: process %d (%s): %u function%s %s (%u matched); %u of %u chosen functions "
              "enabled\n",
              prefix.c_str(), options.pid, control.name().c_str(), answer.changed,
              answer.changed == 1 ? "" : "s", enable ? "enabled" : "disabled", answer.matched,
              answer.enabled, answer.functions);
  if (answer.matched == 0) {
    std::fprintf(stderr, "%s: error: no chosen function matched: nothing %s\n", prefix.c_str(),
                 enable ? "enabled" : "disabled");
    return 1;
  }
  return report::finishOutput();
}

int pathsTop(const causal::Args &args) {
  using namespace causal;
  namespace pc = causal::paths_control;
  const char *prefix = "causal paths top";
  LiveOptions options;
  if (int status = parseLiveOptions(args, "top", true, options))
    return status < 0 ? 0 : status;
  profile::PathsControl control;
  std::string error;
  if (!control.open(options.pid, error)) {
    std::fprintf(stderr, "%s: error: %s\n", prefix, error.c_str());
    return 1;
  }
  struct stat info;
  if (stat(control.sidecar().c_str(), &info) == 0 && !S_ISREG(info.st_mode)) {
    std::fprintf(stderr,
                 "%s: error: process %d writes its paths to %s, not a file: nothing to read\n",
                 prefix, options.pid, control.sidecar().c_str());
    return 1;
  }
  bool terminal = !options.json && isatty(STDOUT_FILENO);
  for (size_t refresh = 0;; ++refresh) {
    if (refresh > 0) {
      // The interval, in steps, so that an ended process is seen soon.
      auto until = std::chrono::steady_clock::now() +
                   std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                       std::chrono::duration<double>(options.interval));
      while (std::chrono::steady_clock::now() < until && control.processAlive() && !control.ended())
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    profile::ControlAnswer answer;
    if (!control.command(pc::kFlush, "", options.timeout, answer, error)) {
      if (refresh > 0 && (!control.processAlive() || control.ended())) {
        std::fprintf(stderr, "%s: process %d has ended; its paths are in %s\n", prefix, options.pid,
                     control.sidecar().c_str());
        return report::finishOutput();
      }
      std::fprintf(stderr, "%s: error: %s\n", prefix, error.c_str());
      return 1;
    }
    profile::PathsFile file;
    if (!profile::readPathsFile(control.sidecar(), file, error)) {
      std::fprintf(stderr, "%s: error: %s\n", prefix, error.c_str());
      return 1;
    }
    // This process's run: the newest of its pid (the file may hold earlier
    // runs, and a part file that a killed process of the same pid left).
    size_t run = file.runs.size();
    for (size_t i = 0; i < file.runs.size(); ++i)
      if (int(file.runs[i].pid) == options.pid &&
          (run == file.runs.size() || file.runs[i].realtimeNs >= file.runs[run].realtimeNs))
        run = i;
    if (run == file.runs.size()) {
      std::fprintf(stderr, "%s: error: %s has no run of process %d\n", prefix,
                   control.sidecar().c_str(), options.pid);
      return 1;
    }
    profile::PathsAnalysisOptions analysisOptions;
    analysisOptions.metric = options.metric;
    analysisOptions.runs.push_back(run);
    profile::PathsAnalysis analysis = profile::analyzePaths(file, analysisOptions);
    if (options.top && analysis.functions.size() > options.top)
      analysis.functions.resize(options.top);
    report::PathsViewOptions view;
    view.limits.maxDepth = options.depth;
    if (options.json) {
      report::renderPathsJson(std::cout, analysis, file, view);
    } else {
      if (terminal)
        std::cout << "\033[H\033[2J"; // a refresh replaces the last on a terminal
      char when[32] = "";
      std::time_t now = std::time(nullptr);
      std::strftime(when, sizeof(when), "%H:%M:%S", std::localtime(&now));
      std::cout << prefix << ": process " << options.pid << " (" << control.name() << "), " << when
                << ", " << answer.enabled << " of " << answer.functions
                << " chosen functions enabled\n";
      report::renderPathsText(std::cout, analysis, file, view);
    }
    std::cout.flush();
    if (!std::cout)
      return 1;
    if (options.count && refresh + 1 >= options.count)
      break;
  }
  return report::finishOutput();
}

} // namespace

int causal::pathsCommand(const Args &args) {
  if (args.empty()) {
    printPathsUsage(stderr);
    return 2;
  }
  const std::string &command = args[0];
  if (command == "-h" || command == "--help" || command == "help") {
    printPathsUsage(stdout);
    return 0;
  }
  if (command == "report")
    return pathsReport(Args(args.begin() + 1, args.end()));
  if (command == "enable" || command == "disable")
    return pathsControl(Args(args.begin() + 1, args.end()), command);
  if (command == "top")
    return pathsTop(Args(args.begin() + 1, args.end()));
  std::fprintf(stderr, "causal paths: error: unknown command '%s'\n", command.c_str());
  printPathsUsage(stderr);
  return 2;
}
