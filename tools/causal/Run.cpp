//===- Run.cpp - `causal run`: run a program with profiling settings ------===//
//
// Turns options into the environment variables the runtime reads (one row
// each in include/causal/settings.def) and runs the program: as a watched
// child (RunWatch.cpp: the status line, the summary line, --until-stable),
// with its exit status and signals passed on, or, with --quiet, by exec, so
// that the program keeps `causal run`'s pid and nothing stands between the
// shell and it.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"
#include "InstallLayout.h"
#include "Options.h"
#include "WaitsReader.h"

#include "causal/settings.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <unistd.h>
#include <utility>
#include <vector>

namespace causal {
namespace {

bool anyValue(const std::string &v) { return !v.empty(); }
bool digits(const std::string &v, size_t most) {
  if (v.empty() || v.size() > most)
    return false;
  for (char c : v)
    if (c < '0' || c > '9')
      return false;
  return true;
}
bool positiveInteger(const std::string &v) {
  return digits(v, 18) && std::strtoull(v.c_str(), nullptr, 10) > 0;
}
bool anyInteger(const std::string &v) { return digits(v, 19); }
bool fileColonLine(const std::string &v) {
  size_t colon = v.rfind(':');
  return colon != std::string::npos && colon > 0 && positiveInteger(v.substr(colon + 1));
}
// One of the '|'-separated words of |words|.
bool oneOf(const char *words, const std::string &v) {
  std::string all = std::string("|") + words + "|";
  return !v.empty() && v.find('|') == std::string::npos &&
         all.find("|" + v + "|") != std::string::npos;
}

// The |k|-th (1-based) '|'-separated word of |words|: what an option whose
// word is optional sets when given alone.
std::string nthWord(const char *words, unsigned long long k) {
  std::string all(words);
  size_t begin = 0;
  for (unsigned long long i = 1; i < k && begin != std::string::npos; ++i) {
    begin = all.find('|', begin);
    if (begin != std::string::npos)
      ++begin;
  }
  if (begin == std::string::npos)
    return std::string();
  size_t end = all.find('|', begin);
  return all.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

// The option as the help and the docs show it: `--waits[=off|sync|io|all]`
// for one whose word is optional, `--sampler auto|perf|timer` otherwise.
std::string optionSyntax(const SettingInfo &s) {
  if (s.optionSetsValue())
    return s.option;
  if (s.wordOptional())
    return std::string(s.option) + "[=" + s.arg + "]";
  return std::string(s.option) + " " + s.arg;
}

// Whether |value| is one the option takes. The runtime checks the rest (a
// number out of range: it says so and uses the default).
bool validValue(const SettingInfo &s, const std::string &value) {
  switch (s.kind) {
  case SettingKind::Number:
    return anyInteger(value) && std::strtoull(value.c_str(), nullptr, 10) >= s.min &&
           std::strtoull(value.c_str(), nullptr, 10) <= s.max;
  case SettingKind::Floor:
    return s.min > 0 ? positiveInteger(value) : anyInteger(value);
  case SettingKind::Optional:
    return anyInteger(value) && (s.max == 0 || std::strtoull(value.c_str(), nullptr, 10) <= s.max);
  case SettingKind::Choice:
    return oneOf(s.arg, value);
  case SettingKind::FileLine:
    return fileColonLine(value);
  default:
    return anyValue(value);
  }
}

// " (default X)" for a setting whose default the help should name.
std::string defaultNote(const SettingInfo &s) {
  switch (s.kind) {
  case SettingKind::Number:
  case SettingKind::Floor:
    return " (default " + std::to_string(s.number) + ")";
  case SettingKind::Choice:
  case SettingKind::Path:
    return s.text[0] ? std::string(" (default ") + s.text + ")" : std::string();
  default:
    return {};
  }
}

void printUsage(FILE *out) {
  std::fprintf(out, "usage: causal run [options] -- PROGRAM [ARGS...]\n\n"
                    "Runs PROGRAM (built with -fcausal-profile) and appends its profile.\n\n"
                    "options:\n");
  for (const SettingInfo &s : kSettings) {
    if (!s.option[0])
      continue;
    std::string lhs = optionSyntax(s);
    if (s.alias[0])
      lhs += std::string(", ") + s.alias;
    std::string variable = s.optionSetsValue() ? std::string(s.variable) + "=" + s.arg : s.variable;
    std::fprintf(out, "  %-26s %s%s [%s]\n", lhs.c_str(), s.help, defaultNote(s).c_str(),
                 variable.c_str());
  }
  std::fprintf(out, "  %-26s %s\n", "--confirm[=K]",
               "after the run, confirm the report's top K lines (default 3) with A/B runs "
               "(causal confirm --help)");
  std::fprintf(out, "  %-26s %s\n", "--confirm-budget SECONDS",
               "time for the A/B runs of each line (default 60)");
  std::fprintf(out, "  %-26s %s\n", "--confirm-speedup PERCENT",
               "speedup of the A/B runs' B arm (default 50)");
  std::fprintf(out, "  %-26s %s\n", "--until-stable",
               "stop profiling once the ranking is stable (the same line clearly first in 5 "
               "readings); the profile is written, the program continues (docs/usage.md)");
  std::fprintf(out, "  %-26s %s\n", "--quiet",
               "no status line on a terminal, no summary line at the end; the program is "
               "executed in place of causal run (same pid)");
  std::fprintf(out, "  %-26s %s\n", "--keep-going",
               "run PROGRAM as a child; if it exits with a status other than 0 or is killed "
               "by a signal, warn naming the status and exit 0 (the profile is kept; build "
               "systems' profile targets use it)");
  std::fprintf(out, "  %-26s %s\n", "-h, --help", "this text");
  std::fprintf(out, "\nEvery option is also read from its environment variable, so a program\n"
                    "built with -fcausal-profile can be configured when run directly.\n");
}

// Finds PROGRAM the way execvp will, to warn early about a program that was
// not built with -fcausal-profile. Returns "" if not found.
std::string resolveProgram(const std::string &prog) {
  return causal::findInPath(prog, "/usr/bin:/bin");
}

// True if the file mentions the runtime or the line-table section: a cheap
// byte search that is enough for a warning (no ELF parsing needed).
bool looksInstrumented(const std::string &file) {
  int fd = open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return true; // cannot tell: do not warn
  static const char *needles[] = {"libcausal_rt", "__causal_register_module"};
  std::vector<char> buf(1 << 16);
  std::string carry;
  bool found = false;
  ssize_t n;
  while (!found && (n = read(fd, buf.data(), buf.size())) > 0) {
    std::string chunk = carry + std::string(buf.data(), static_cast<size_t>(n));
    for (const char *needle : needles)
      if (chunk.find(needle) != std::string::npos)
        found = true;
    carry = chunk.substr(chunk.size() > 64 ? chunk.size() - 64 : 0);
  }
  close(fd);
  return found;
}

} // namespace

int parseSettingOptions(const Args &args, size_t &i, Environment &env, const char *command,
                        const OwnRunOption &own, void (*usage)(FILE *)) {
  for (; i < args.size(); ++i) {
    const std::string &arg = args[i];
    if (arg == "--" || arg == "---") { // "---": Coz's separator
      ++i;
      break;
    }
    if (arg == "-h" || arg == "--help") {
      usage(stdout);
      return 0;
    }
    if (arg.empty() || arg[0] != '-')
      break; // first word of the program
    if (own) {
      int status = own(args, i);
      if (status == kOptionTaken)
        continue;
      if (status >= 0)
        return status;
    }
    const SettingInfo *match = nullptr;
    std::string value;
    for (const SettingInfo &o : kSettings) {
      if (!o.option[0])
        continue;
      if (o.optionSetsValue()) {
        if (arg == o.option || (o.alias[0] && arg == o.alias)) {
          match = &o;
          value = o.arg;
          break;
        }
        continue;
      }
      const char *flag =
          o.alias[0] && arg.compare(0, std::strlen(o.alias), o.alias) == 0 &&
                  (arg.size() == std::strlen(o.alias) || arg[std::strlen(o.alias)] == '=')
              ? o.alias
              : o.option;
      size_t len = std::strlen(flag);
      if (arg == flag && o.wordOptional()) {
        match = &o; // `--waits` alone: its word is optional, the next argument is not it
        value = nthWord(o.arg, o.min);
      } else if (arg == flag) {
        if (i + 1 >= args.size()) {
          std::fprintf(stderr, "causal %s: error: %s needs a value (%s)\n", command, o.option,
                       o.arg);
          return 2;
        }
        match = &o;
        value = args[++i];
      } else if (arg.compare(0, len, flag) == 0 && arg.size() > len && arg[len] == '=') {
        match = &o;
        value = arg.substr(len + 1);
      }
      if (match)
        break;
    }
    if (!match) {
      std::fprintf(stderr, "causal %s: error: unknown option '%s' (see causal %s --help)\n",
                   command, arg.c_str(), command);
      return 2;
    }
    if (!match->optionSetsValue() && !validValue(*match, value)) {
      std::string expected = match->arg;
      if (match->kind == SettingKind::Number)
        expected += ", a whole number from " + std::to_string(match->min) + " to " +
                    std::to_string(match->max);
      std::fprintf(stderr, "causal %s: error: invalid value '%s' for %s (expected %s)\n", command,
                   value.c_str(), match->option, expected.c_str());
      return 2;
    }
    env.emplace_back(match->variable, value);
  }
  if (i >= args.size()) {
    std::fprintf(stderr, "causal %s: error: no program given\n", command);
    usage(stderr);
    return 2;
  }
  return -1;
}

void warnIfNotInstrumented(const std::string &program, const char *command) {
  std::string resolved = resolveProgram(program);
  if (!resolved.empty() && !looksInstrumented(resolved))
    std::fprintf(stderr,
                 "causal %s: warning: '%s' does not look built with -fcausal-profile; "
                 "only the programs it starts that are will write a profile\n",
                 command, program.c_str());
}

std::string settingValue(const Environment &env, const char *variable, const char *fallback) {
  std::string value;
  bool set = false;
  for (const auto &[name, given] : env)
    if (name == variable) {
      value = given;
      set = true;
    }
  if (!set) {
    const char *fromEnvironment = std::getenv(variable);
    value = fromEnvironment && *fromEnvironment ? fromEnvironment : fallback;
  }
  return value;
}

bool outputsProblem(const Environment &env, const std::string &profilePath, const char *command) {
  struct Output {
    std::string path;
    report::OutputKind kind;
    const char *option;
  };
  std::vector<Output> outputs = {{profilePath, report::OutputKind::Profile, "--output"}};
  std::string waits = settingValue(env, CAUSAL_ENV_WAITS, "off");
  if (!waits.empty() && waits != "off")
    outputs.push_back(
        {profile::waitsPathFor(profilePath), report::OutputKind::WaitsSidecar, "--output"});
  std::string sampleLog = settingValue(env, CAUSAL_ENV_SAMPLE_LOG, "");
  if (!sampleLog.empty())
    outputs.push_back({sampleLog, report::OutputKind::SampleLog, "--sample-log"});
  for (const Output &output : outputs) {
    std::string problem = report::outputProblem(output.path, output.kind, {}, output.option);
    if (!problem.empty()) {
      std::fprintf(stderr, "causal %s: error: %s\n", command, problem.c_str());
      return true;
    }
  }
  return false;
}

namespace {

/// --duration, --until-stable: refused where a run cut short measures
/// nothing (after saying why).
bool boundedProfilingProblem(const Environment &env, bool untilStable) {
  bool duration =
      std::strtoull(settingValue(env, CAUSAL_ENV_DURATION, "0").c_str(), nullptr, 10) != 0;
  auto on = [](const std::string &v) { return v == "1" || v == "yes" || v == "true" || v == "on"; };
  bool endToEnd = on(settingValue(env, CAUSAL_ENV_END_TO_END, "0"));
  bool noExperiments = settingValue(env, CAUSAL_ENV_EXPERIMENTS, "1") == "0";
  if ((duration || untilStable) && endToEnd) {
    std::fprintf(stderr,
                 "causal run: error: %s does not go with --end-to-end: the end of the run is "
                 "its progress point, a run cut short measures nothing\n",
                 untilStable ? "--until-stable" : "--duration");
    return true;
  }
  if (untilStable && noExperiments) {
    std::fprintf(stderr, "causal run: error: --until-stable needs experiments (a ranking); "
                         "--no-experiments runs none\n");
    return true;
  }
  return false;
}

/// --path, --path-experiments: refused where they cannot apply (after saying
/// why): a caller qualifies the samples of a fixed line, and per-caller
/// choices are made by free runs.
bool contextOptionsProblem(const Environment &env) {
  auto on = [](const std::string &v) { return v == "1" || v == "yes" || v == "true" || v == "on"; };
  bool fixedLine = !settingValue(env, CAUSAL_ENV_FIXED_LINE, "").empty();
  bool fixedWait = !settingValue(env, CAUSAL_ENV_FIXED_WAIT, "").empty();
  bool caller = !settingValue(env, CAUSAL_ENV_FIXED_PATH, "").empty();
  bool perCaller = on(settingValue(env, CAUSAL_ENV_PATH_EXPERIMENTS, "0"));
  const char *problem = nullptr;
  if (caller && !fixedLine)
    problem = fixedWait ? "--path does not go with --fixed-wait: it names the caller under "
                          "which a --fixed-line's samples count"
                        : "--path needs --fixed-line: it names the caller under which the "
                          "fixed line's samples count";
  else if (perCaller && (fixedLine || fixedWait))
    problem = "--path-experiments is for free runs (it picks lines per caller); with a fixed "
              "line, name the caller with --path";
  if (!problem)
    return false;
  std::fprintf(stderr, "causal run: error: %s\n", problem);
  return true;
}

/// A private directory for --until-stable's stop file ("" after saying why).
std::string makeStopDirectory() {
  const char *tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/causal-run.XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back(0);
  if (!mkdtemp(name.data())) {
    std::fprintf(stderr,
                 "causal run: error: cannot create a directory in %s for --until-stable: %s\n",
                 tmp && *tmp ? tmp : "/tmp", std::strerror(errno));
    return {};
  }
  return name.data();
}

/// Becomes the program (--quiet): same pid, same signals, same status.
int execProgram(const Environment &env, const Args &program) {
  std::vector<char *> argv;
  for (const std::string &word : program)
    argv.push_back(const_cast<char *>(word.c_str()));
  argv.push_back(nullptr);
  unsetenv(CAUSAL_ENV_DISABLE);
  for (auto &[name, value] : env)
    setenv(name.c_str(), value.c_str(), 1);
  execvp(argv[0], argv.data());
  int err = errno;
  std::fprintf(stderr, "causal run: error: cannot execute '%s': %s\n", argv[0], std::strerror(err));
  return err == ENOENT ? 127 : 126;
}

} // namespace

int runCommand(const Args &args) {
  Environment env;
  ConfirmPlan confirm;
  bool confirming = false, keepGoing = false, quiet = false, untilStable = false;
  auto own = [&](const Args &args, size_t &i) {
    const std::string &arg = args[i];
    if (arg == "--keep-going") {
      keepGoing = true;
      return kOptionTaken;
    }
    if (arg == "--quiet") {
      quiet = true;
      return kOptionTaken;
    }
    if (arg == "--until-stable") {
      untilStable = true;
      return kOptionTaken;
    }
    if (arg == "--confirm" || arg.rfind("--confirm=", 0) == 0) {
      confirming = true;
      if (arg.size() > 9 && !parseCount(arg.substr(10), 1, 100, confirm.lines)) {
        std::fprintf(stderr,
                     "causal run: error: invalid value '%s' for --confirm (expected a "
                     "number of lines, 1 to 100)\n",
                     arg.substr(10).c_str());
        return 2;
      }
      return kOptionTaken;
    }
    return parseConfirmTuning(args, i, "run", "--confirm-", confirm);
  };
  size_t i = 0;
  if (int status = parseSettingOptions(args, i, env, "run", own, printUsage); status >= 0)
    return status;
  Args program(args.begin() + long(i), args.end());
  warnIfNotInstrumented(program[0], "run");
  std::string output = settingValue(env, CAUSAL_ENV_OUTPUT, "profile.coz");
  if (outputsProblem(env, output, "run"))
    return 2;

  if (keepGoing && confirming) {
    std::fprintf(stderr, "causal run: error: --keep-going does not go with --confirm\n");
    return 2;
  }
  if (boundedProfilingProblem(env, untilStable) || contextOptionsProblem(env))
    return 2;
  if (confirming && endToEndProblem(env, "run"))
    return 2;

  WatchPlan watch;
  watch.profilePath = output;
  watch.statusLine = !quiet && isatty(STDERR_FILENO);
  watch.summaryLine = !quiet;
  watch.untilStable = untilStable;
  watch.durationSeconds =
      double(std::strtoull(settingValue(env, CAUSAL_ENV_DURATION, "0").c_str(), nullptr, 10));
  if (!watch.statusLine && !watch.summaryLine && !untilStable && !keepGoing && !confirming)
    return execProgram(env, program);

  // The status line and --until-stable read the profile as it grows: the
  // program writes its parts every second unless told otherwise.
  if ((watch.statusLine || untilStable) && settingValue(env, CAUSAL_ENV_FLUSH_SECONDS, "").empty())
    env.emplace_back(CAUSAL_ENV_FLUSH_SECONDS, "1");
  std::string stopDirectory;
  if (untilStable) {
    stopDirectory = makeStopDirectory();
    if (stopDirectory.empty())
      return 1;
    watch.stopFile = stopDirectory + "/stop";
    env.emplace_back(CAUSAL_ENV_STOP_FILE, watch.stopFile);
  }
  int status = watchProgram(env, program, watch);
  if (!stopDirectory.empty()) {
    unlink(watch.stopFile.c_str());
    rmdir(stopDirectory.c_str());
  }
  if (status < 0)
    return 126;
  int number = statusNumber(status);
  if (keepGoing) {
    // A failing program still leaves its profile.
    if (number == 126 || number == 127)
      return number; // could not run it at all: the child said why
    if (number != 0)
      std::fprintf(stderr,
                   "causal run: warning: the program %s; its profile is kept (--keep-going)\n",
                   describeStatus(number).c_str());
    return 0;
  }
  if (confirming) {
    // The profiling run, then the confirmation runs.
    if (number != 0) {
      std::fprintf(stderr, "causal run: the program %s; no confirmation runs\n",
                   describeStatus(number).c_str());
      return number;
    }
    return confirmLines(output, confirm, env, program, "run");
  }
  return exitLikeChild(status);
}

} // namespace causal
