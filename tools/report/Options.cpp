//===- Options.cpp - Command-line options shared by report and diff -------===//
#include "Options.h"

#include "WaitsReader.h"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sys/stat.h>
#include <unistd.h>

namespace causal::report {

namespace {

bool parseUnsigned(const std::string &text, unsigned long long &value) {
  if (text.empty() || text.size() > 19)
    return false;
  for (char c : text)
    if (c < '0' || c > '9')
      return false;
  value = std::strtoull(text.c_str(), nullptr, 10);
  return true;
}

} // namespace

int parseCommandLine(const std::vector<std::string> &args, const char *command,
                     void (*usage)(FILE *), const OwnOptionParser &own, CommonOptions &common,
                     std::vector<std::string> &inputs) {
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
      usage(stdout);
      return 0;
    }
    std::string error;
    OptionResult result = own(args, i, error);
    if (result == OptionResult::NotMine)
      result = parseCommonOption(args, i, common, error);
    if (result == OptionResult::Consumed)
      continue;
    if (result == OptionResult::Error) {
      std::fprintf(stderr, "causal %s: error: %s\n", command, error.c_str());
      return 2;
    }
    std::fprintf(stderr, "causal %s: error: unknown option '%s'\n", command, arg.c_str());
    usage(stderr);
    return 2;
  }
  return -1;
}

int finishOutput() {
  std::cout.flush();
  return std::cout ? 0 : 1;
}

OptionResult parseCommonOption(const std::vector<std::string> &args, size_t &i,
                               CommonOptions &options, std::string &error) {
  std::string arg = args[i];
  std::string name = arg, inlineValue;
  bool hasInline = false;
  if (arg.rfind("--", 0) == 0) {
    size_t equals = arg.find('=');
    if (equals != std::string::npos) {
      name = arg.substr(0, equals);
      inlineValue = arg.substr(equals + 1);
      hasInline = true;
    }
  }
  // Flags without a value.
  if (!hasInline) {
    if (name == "--lenient") {
      options.read.lenient = true;
      ++i;
      return OptionResult::Consumed;
    }
    if (name == "--no-phase-correction") {
      options.analysis.phaseCorrection = false;
      ++i;
      return OptionResult::Consumed;
    }
    if (name == "--no-visit-times") {
      options.analysis.visitTimes = false;
      ++i;
      return OptionResult::Consumed;
    }
    if (name == "--json") {
      options.json = true;
      ++i;
      return OptionResult::Consumed;
    }
    if (name == "--no-color") {
      options.color = ColorMode::Never;
      ++i;
      return OptionResult::Consumed;
    }
  }
  static const char *const withValue[] = {"--top",
                                          "--point",
                                          "--min-visits",
                                          "--min-speedups",
                                          "--bootstrap",
                                          "--seed",
                                          "--color",
                                          "--confidence",
                                          "--sort",
                                          "--baseline-window",
                                          "--min-experiments",
                                          "--min-evidence-visits",
                                          "--fdr"};
  bool known = false;
  for (const char *option : withValue)
    known = known || name == option;
  if (!known)
    return OptionResult::NotMine;
  std::string value;
  size_t consumed = 1;
  if (hasInline) {
    value = inlineValue;
  } else {
    if (i + 1 >= args.size()) {
      error = name + " needs a value";
      return OptionResult::Error;
    }
    value = args[i + 1];
    consumed = 2;
  }
  unsigned long long number = 0;
  auto needNumber = [&]() {
    if (parseUnsigned(value, number))
      return true;
    error = name + " needs a non-negative integer, not '" + value + "'";
    return false;
  };
  if (name == "--top") {
    if (!needNumber())
      return OptionResult::Error;
    options.top = size_t(number);
    options.topGiven = true;
  } else if (name == "--point") {
    if (value.empty()) {
      error = "--point needs a progress point name";
      return OptionResult::Error;
    }
    options.analysis.onlyPoints.push_back(value);
  } else if (name == "--min-visits") {
    if (!needNumber())
      return OptionResult::Error;
    options.analysis.minVisits = double(number);
  } else if (name == "--min-speedups") {
    if (!needNumber())
      return OptionResult::Error;
    if (number < 2) {
      error = "--min-speedups must be at least 2 (the baseline and one speedup)";
      return OptionResult::Error;
    }
    options.analysis.minSpeedups = size_t(number);
  } else if (name == "--baseline-window") {
    if (!needNumber())
      return OptionResult::Error;
    options.analysis.baselineWindow = size_t(number);
  } else if (name == "--min-experiments") {
    if (!needNumber())
      return OptionResult::Error;
    options.analysis.minExperiments = size_t(number);
  } else if (name == "--min-evidence-visits") {
    if (!needNumber())
      return OptionResult::Error;
    options.analysis.minEvidenceVisits = double(number);
  } else if (name == "--bootstrap") {
    if (!needNumber())
      return OptionResult::Error;
    if (number > 100000) {
      error = "--bootstrap above 100000 rounds is not useful";
      return OptionResult::Error;
    }
    options.analysis.bootstrapRounds = size_t(number);
  } else if (name == "--seed") {
    if (!needNumber())
      return OptionResult::Error;
    options.analysis.seed = number;
  } else if (name == "--confidence") {
    char *end = nullptr;
    double c = std::strtod(value.c_str(), &end);
    if (value.empty() || *end || !(c >= 0.5 && c <= 0.999)) {
      error = "--confidence needs a number between 0.5 and 0.999, not '" + value + "'";
      return OptionResult::Error;
    }
    options.analysis.confidence = c;
  } else if (name == "--fdr") {
    char *end = nullptr;
    double q = std::strtod(value.c_str(), &end);
    if (value.empty() || *end || !(q >= 0 && q < 1)) {
      error = "--fdr needs a false-discovery rate from 0 (off) to below 1, not '" + value + "'";
      return OptionResult::Error;
    }
    options.analysis.falseDiscoveryRate = q;
  } else if (name == "--sort") {
    if (value == "slope")
      options.analysis.rankBy = profile::RankBy::Slope;
    else if (value == "max" || value == "max-impact")
      options.analysis.rankBy = profile::RankBy::MaxImpact;
    else if (value == "name")
      options.analysis.rankBy = profile::RankBy::Name;
    else {
      error = "--sort takes slope, max-impact or name, not '" + value + "'";
      return OptionResult::Error;
    }
  } else if (name == "--color") {
    if (value == "auto")
      options.color = ColorMode::Auto;
    else if (value == "always")
      options.color = ColorMode::Always;
    else if (value == "never")
      options.color = ColorMode::Never;
    else {
      error = "--color takes auto, always or never, not '" + value + "'";
      return OptionResult::Error;
    }
  }
  i += consumed;
  return OptionResult::Consumed;
}

const char *commonOptionsHelp() {
  return "  --point NAME           only this progress point (repeatable)\n"
         "  --sort slope|max-impact|name\n"
         "                         ranking of lines (default: slope)\n"
         "  --top N                lines shown (0: all)\n"
         "  --min-visits N         drop a speedup whose experiments together saw fewer\n"
         "                         visits of the point (default 5)\n"
         "  --min-speedups N       distinct speedups (0% included) a curve needs (default 5)\n"
         "  --min-experiments N    experiments at speedups above 0 a line needs to be ranked\n"
         "                         (default 10)\n"
         "  --min-evidence-visits N\n"
         "                         visits those experiments need together (default 100)\n"
         "  --baseline-window K    pool into each line's baseline the K nearest 0% experiments\n"
         "                         (same run and point) of each of its experiments (default\n"
         "                         1; 0: only the line's own 0% experiments)\n"
         "  --fdr Q                rank first the lines whose slope is > 0 at false-discovery\n"
         "                         rate Q over all lines compared (Benjamini-Hochberg on\n"
         "                         bootstrap p-values; default 0.1; 0: off)\n"
         "  --no-phase-correction  do not apply the phase correction (Coz paper, Eq. 8)\n"
         "  --no-visit-times       throughput periods from visit counts only, not from the\n"
         "                         visits' times where the runtime wrote them\n"
         "  --bootstrap N          bootstrap rounds for the intervals (default 1000; 0: none)\n"
         "  --confidence C         interval level (default 0.95)\n"
         "  --seed N               bootstrap seed (default 1); same seed, same output\n"
         "  --lenient              skip malformed lines with a warning instead of failing\n"
         "  --json                 print JSON instead of text\n"
         "  --color auto|always|never\n"
         "                         colours (auto: only on a terminal; NO_COLOR disables)\n";
}

bool useColor(ColorMode mode, int fd) {
  if (mode == ColorMode::Always)
    return true;
  if (mode == ColorMode::Never)
    return false;
  const char *noColor = std::getenv("NO_COLOR");
  if (noColor && *noColor)
    return false;
  const char *term = std::getenv("TERM");
  if (!term || !std::strcmp(term, "dumb"))
    return false;
  return isatty(fd) == 1;
}

namespace {

/// The kind's name in messages, what writing does to an existing file, an
/// example of a good name, and whether \p head (the file's first bytes) is
/// such a file.
struct OutputKindInfo {
  const char *what;
  const char *verb;
  const char *example;
};

OutputKindInfo infoOf(OutputKind kind) {
  switch (kind) {
  case OutputKind::HtmlPage:
    return {"an HTML page", "replacing", "report.html"};
  case OutputKind::Profile:
    return {"a causal or Coz profile", "appending to", "profile.coz"};
  case OutputKind::WaitsSidecar:
    return {"a waits sidecar (causal run --waits)", "appending to", "profile.coz"};
  case OutputKind::SampleLog:
    return {"a sample log (causal run --sample-log)", "appending to", "samples.log"};
  }
  return {"?", "?", "?"};
}

bool headIsOfKind(std::string head, OutputKind kind) {
  switch (kind) {
  case OutputKind::HtmlPage:
    for (char &c : head)
      c = char(std::tolower(static_cast<unsigned char>(c)));
    return head.find("<!doctype html") != std::string::npos ||
           head.find("<html") != std::string::npos;
  case OutputKind::Profile:
    return profile::startsLikeProfile(head);
  case OutputKind::WaitsSidecar:
    return profile::startsLikeWaitsFile(head);
  case OutputKind::SampleLog: {
    // "<module path> <address hex> <count>" lines (runtime/SampleLog.cpp).
    std::string line = head.substr(0, head.find('\n'));
    size_t count = line.rfind(' ');
    size_t address =
        count == std::string::npos || count == 0 ? std::string::npos : line.rfind(' ', count - 1);
    return address != std::string::npos && address > 0 && count > address + 1 &&
           count + 1 < line.size() &&
           line.find_first_not_of("0123456789abcdef", address + 1) == count &&
           line.find_first_not_of("0123456789", count + 1) == std::string::npos;
  }
  }
  return false;
}

} // namespace

std::string outputProblem(const std::string &output, OutputKind kind,
                          const std::vector<std::string> &inputs, const char *option) {
  struct stat out;
  if (stat(output.c_str(), &out) != 0)
    return ""; // a new file
  OutputKindInfo info = infoOf(kind);
  std::string hint = std::string("name another file, e.g. ") + option + " " + info.example + ")";
  for (const std::string &input : inputs) {
    struct stat in;
    if (input != "-" && stat(input.c_str(), &in) == 0 && in.st_dev == out.st_dev &&
        in.st_ino == out.st_ino)
      return output + " is an input profile of this command; writing " + info.what +
             " there would replace it (" + hint;
  }
  if (S_ISDIR(out.st_mode))
    return output + " is a directory; " + option + " names a file (" + hint;
  if (!S_ISREG(out.st_mode) || out.st_size == 0)
    return ""; // empty, a device, a pipe
  char head[4096];
  FILE *file = std::fopen(output.c_str(), "rb");
  size_t got = file ? std::fread(head, 1, sizeof head, file) : 0;
  if (file)
    std::fclose(file);
  if (headIsOfKind(std::string(head, got), kind))
    return "";
  return output + " exists and is not " + info.what + "; not " + info.verb + " it (" + hint;
}

bool readProfiles(const std::vector<std::string> &paths, const profile::ReadOptions &options,
                  profile::Profile &profile, const char *command, size_t maxWarnings) {
  for (const std::string &path : paths) {
    struct stat info;
    if (path != "-") {
      if (stat(path.c_str(), &info) != 0) {
        std::fprintf(stderr, "causal %s: error: %s: %s\n", command, path.c_str(),
                     std::strerror(errno));
        return false;
      }
      if (S_ISDIR(info.st_mode)) {
        std::fprintf(stderr, "causal %s: error: %s: is a directory, not a profile\n", command,
                     path.c_str());
        return false;
      }
    }
    std::string error;
    if (!profile::readProfileFile(path, profile, options, error)) {
      std::fprintf(stderr, "causal %s: error: %s\n", command, error.c_str());
      // Only a bad line ("FILE:N: ...") can be skipped; an empty file, a
      // directory or binary data cannot.
      std::string where = (path == "-" ? std::string("<stdin>") : path) + ":";
      bool badLine = error.compare(0, where.size(), where) == 0 && error.size() > where.size() &&
                     std::isdigit(static_cast<unsigned char>(error[where.size()]));
      if (!options.lenient && badLine)
        std::fprintf(stderr, "causal %s: note: --lenient skips malformed lines\n", command);
      return false;
    }
  }
  size_t shown = 0;
  for (const std::string &warning : profile.warnings) {
    if (shown++ == maxWarnings)
      break;
    std::fprintf(stderr, "causal %s: warning: %s\n", command, warning.c_str());
  }
  if (profile.warnings.size() > maxWarnings)
    std::fprintf(stderr, "causal %s: warning: ... %zu more malformed lines skipped\n", command,
                 profile.warnings.size() - maxWarnings);
  for (const std::string &note : profile.notes)
    std::fprintf(stderr, "causal %s: note: %s\n", command, note.c_str());
  // Runs that wrote no experiment, samples or runtime record (a startup
  // record and a record cut off, say) are no profile to report on. A run
  // with only its runtime record still says something (its samples outside
  // instrumented code).
  bool anyRuntime = false;
  for (const profile::Run &run : profile.runs)
    anyRuntime = anyRuntime || run.runtimeNs >= 0;
  if (profile.experiments.empty() && profile.samples.empty() && !anyRuntime) {
    std::string names;
    for (const std::string &path : paths)
      names += (names.empty() ? "" : ", ") + (path == "-" ? std::string("<stdin>") : path);
    std::fprintf(stderr,
                 "causal %s: error: %s: %zu run(s) but no experiment, samples or runtime record: "
                 "nothing to report (a run writes them when the profiled program ends)\n",
                 command, names.c_str(), profile.runs.size());
    return false;
  }
  return true;
}

} // namespace causal::report
