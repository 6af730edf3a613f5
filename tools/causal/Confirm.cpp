//===- Confirm.cpp - `causal confirm`: A/B runs on the top lines ----------===//
//
// causal confirm [options] [PROFILE] -- PROGRAM [ARGS...]
//
// Takes the top K lines of PROFILE's ranking (the one `causal report` shows,
// computed by tools/profile) and, for each, runs PROGRAM again and again with
// that line fixed and its experiments alternating 0 % and one speedup
// (CAUSAL_FIXED_LINE, or CAUSAL_FIXED_WAIT=FILE:LINE@KIND for a wait target,
// or CAUSAL_FIXED_LINE and --path's variable for a line in one calling
// context: report::fixedTargetSettings; CAUSAL_AB_SPEEDUP), appending to PROFILE, until the
// line's A/B interval is narrow or its time budget is spent. The verdicts
// (confirmed, refuted, open) are computed by the profile library and shown
// here and by `causal report`. docs/report.md, "Confirmation".
//
//===----------------------------------------------------------------------===//
#include "Commands.h"

#include "Options.h"
#include "Report.h"

#include "causal/settings.h"

#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sys/wait.h>
#include <unistd.h>

namespace causal {

bool parseCount(const std::string &text, size_t low, size_t high, size_t &value) {
  if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos)
    return false;
  size_t parsed = size_t(std::strtoull(text.c_str(), nullptr, 10));
  if (parsed < low || parsed > high)
    return false;
  value = parsed;
  return true;
}

int parseConfirmTuning(const Args &args, size_t &i, const char *command, const std::string &prefix,
                       ConfirmPlan &plan) {
  const std::string &arg = args[i];
  for (const char *name : {"budget", "speedup"}) {
    std::string option = prefix + name;
    std::string value;
    if (arg == option) {
      if (i + 1 >= args.size()) {
        std::fprintf(stderr, "causal %s: error: %s needs a value\n", command, option.c_str());
        return 2;
      }
      value = args[++i];
    } else if (arg.rfind(option + "=", 0) == 0) {
      value = arg.substr(option.size() + 1);
    } else {
      continue;
    }
    size_t number = 0;
    bool budget = std::strcmp(name, "budget") == 0;
    if (!parseCount(value, 1, budget ? 86400 : 100, number)) {
      std::fprintf(stderr, "causal %s: error: invalid value '%s' for %s (expected %s)\n", command,
                   value.c_str(), option.c_str(),
                   budget ? "seconds, 1 to 86400" : "a percentage, 1 to 100");
      return 2;
    }
    if (budget)
      plan.budgetSeconds = double(number);
    else
      plan.speedupPercent = unsigned(number);
    return kOptionTaken;
  }
  return -1;
}

std::string describeStatus(int status) {
  if (status > 128 && status < 128 + 65)
    return "was killed by signal " + std::to_string(status - 128) + " (" + strsignal(status - 128) +
           ")";
  return "exited with status " + std::to_string(status);
}

int runProgram(const Environment &env, const Args &program, const char *command) {
  std::vector<char *> argv;
  for (const std::string &word : program)
    argv.push_back(const_cast<char *>(word.c_str()));
  argv.push_back(nullptr);
  std::fflush(nullptr);
  // Like system(): the program gets the terminal's ^C, we wait for it.
  struct sigaction ignore = {}, oldInt = {}, oldQuit = {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGINT, &ignore, &oldInt);
  sigaction(SIGQUIT, &ignore, &oldQuit);
  pid_t child = fork();
  if (child == 0) {
    sigaction(SIGINT, &oldInt, nullptr);
    sigaction(SIGQUIT, &oldQuit, nullptr);
    unsetenv(CAUSAL_ENV_DISABLE);
    for (const auto &[name, value] : env)
      setenv(name.c_str(), value.c_str(), 1);
    execvp(argv[0], argv.data());
    int err = errno;
    std::fprintf(stderr, "causal %s: error: cannot execute '%s': %s\n", command, argv[0],
                 std::strerror(err));
    _exit(err == ENOENT ? 127 : 126);
  }
  int status = 0, result = 1;
  if (child < 0) {
    std::fprintf(stderr, "causal %s: error: cannot start a process: %s\n", command,
                 std::strerror(errno));
  } else {
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    result = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  sigaction(SIGINT, &oldInt, nullptr);
  sigaction(SIGQUIT, &oldQuit, nullptr);
  return result;
}

namespace {

using profile::Analysis;
using profile::AnalysisOptions;
using profile::Confirmation;
using profile::ConfirmStop;

/// The analysis of \p path with the report's default options; false after
/// printing why it could not be read.
bool analyzeProfile(const std::string &path, const AnalysisOptions &options, Analysis &analysis,
                    const char *command) {
  profile::Profile profile;
  profile::ReadOptions read;
  if (!report::readProfiles({path}, read, profile, command, 3))
    return false;
  analysis = profile::analyze(profile, options);
  return true;
}

/// The confirmation of (line, point) at \p speedup, or null.
const Confirmation *confirmationOf(const Analysis &analysis, const std::string &line,
                                   const std::string &point, double speedup) {
  for (const Confirmation &c : analysis.confirmations)
    if (c.line == line && c.point == point && std::fabs(c.speedup - speedup) < 0.005)
      return &c;
  return nullptr;
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

} // namespace

bool endToEndProblem(const Environment &env, const char *command) {
  for (const auto &[name, value] : env)
    if (name == CAUSAL_ENV_END_TO_END) {
      // One experiment per run: no run can alternate 0 % and S.
      std::fprintf(stderr,
                   "causal %s: error: --end-to-end runs have one experiment each, so A/B runs "
                   "cannot alternate 0%% and the speedup within a run; confirm with a progress "
                   "point instead\n",
                   command);
      return true;
    }
  return false;
}

int confirmLines(const std::string &profilePath, const ConfirmPlan &plan, const Environment &env,
                 const Args &program, const char *command) {
  if (endToEndProblem(env, command))
    return 2;
  AnalysisOptions options; // the ranking `causal report` shows by default
  Analysis analysis;
  if (!analyzeProfile(profilePath, options, analysis, command))
    return 1;
  if (analysis.lines.empty()) {
    std::fprintf(stderr,
                 "causal %s: error: %s ranks no line, so there is nothing to confirm (%zu "
                 "experiments; `causal report %s` says why)\n",
                 command, profilePath.c_str(), analysis.experiments, profilePath.c_str());
    return 1;
  }
  // The lines and the point that ranked each (its steepest slope).
  std::vector<std::pair<std::string, std::string>> targets;
  for (const profile::LineResult &line : analysis.lines) {
    if (targets.size() >= plan.lines)
      break;
    const profile::PointResult *best = &line.points.front();
    for (const profile::PointResult &point : line.points)
      if (point.slope > best->slope)
        best = &point;
    targets.push_back({line.line, best->point});
  }
  double speedup = plan.speedupPercent / 100.0;
  for (size_t k = 0; k < targets.size(); ++k) {
    const auto &[line, point] = targets[k];
    report::Settings fixed;
    std::string problem;
    if (!report::fixedTargetSettings(line, fixed, problem)) {
      std::fprintf(stderr, "causal %s: [%zu/%zu] %s: skipped: %s\n", command, k + 1, targets.size(),
                   line.c_str(), problem.c_str());
      continue;
    }
    std::fprintf(stderr,
                 "causal %s: [%zu/%zu] %s (point %s): A/B runs at 0%% and %u%%, until the "
                 "interval is %.0f points wide or %.0f s have passed\n",
                 command, k + 1, targets.size(), line.c_str(), point.c_str(), plan.speedupPercent,
                 options.confirmNarrowWidth * 100, plan.budgetSeconds);
    Environment abEnv = env;
    abEnv.emplace_back(CAUSAL_ENV_OUTPUT, profilePath);
    abEnv.insert(abEnv.end(), fixed.begin(), fixed.end());
    abEnv.emplace_back(CAUSAL_ENV_AB_SPEEDUP, std::to_string(plan.speedupPercent));
    auto start = std::chrono::steady_clock::now();
    size_t runs = 0;
    for (;;) {
      const Confirmation *c = confirmationOf(analysis, line, point, speedup);
      ConfirmStop stop =
          profile::confirmationStop(c, secondsSince(start), plan.budgetSeconds, options);
      if (stop != ConfirmStop::Continue) {
        std::fprintf(stderr, "causal %s: %s: %zu run(s), %zu pair(s): %s\n", command, line.c_str(),
                     runs, c ? c->pairs : size_t(0),
                     stop == ConfirmStop::Narrow ? "interval narrow" : "budget spent");
        break;
      }
      int status = runProgram(abEnv, program, command);
      ++runs;
      if (status != 0) {
        std::fprintf(stderr, "causal %s: error: the program %s in an A/B run of %s; stopping\n",
                     command, describeStatus(status).c_str(), line.c_str());
        return status == 127 || status == 126 ? status : 1;
      }
      if (!analyzeProfile(profilePath, options, analysis, command))
        return 1;
    }
  }
  report::renderConfirmationsText(std::cout, analysis, profilePath);
  return report::finishOutput();
}

namespace {

void printConfirmUsage(FILE *out) {
  std::fprintf(out,
               "usage: causal confirm [options] [PROFILE] -- PROGRAM [ARGS...]\n"
               "\n"
               "Takes the top lines of PROFILE's ranking (default: profile.coz; the ranking\n"
               "`causal report` shows) and checks each with A/B runs of PROGRAM: the line\n"
               "fixed, its experiments alternating 0%% and one speedup, appended to PROFILE,\n"
               "until the A/B interval is narrow or the line's budget is spent. Prints\n"
               "whether each line is confirmed, refuted or open (docs/report.md). A wait\n"
               "target, FILE:LINE (KIND wait), is fixed as --fixed-wait FILE:LINE@KIND, a\n"
               "line in one calling context, FILE:LINE (via CALLER), as --fixed-line\n"
               "FILE:LINE --path CALLER.\n"
               "\n"
               "options:\n"
               "  --lines K              lines to confirm, from the top (default 3)\n"
               "  --budget SECONDS       time for each line's A/B runs (default 60); a run\n"
               "                         is never cut short, the budget is checked between runs\n"
               "  --speedup PERCENT      the B arm's speedup (default 50)\n"
               "  (any `causal run` option, for every run, e.g. --scope)\n"
               "  -h, --help             this text\n");
}

} // namespace

int confirmCommand(const Args &args) {
  ConfirmPlan plan;
  Environment env;
  std::string profilePath;
  auto own = [&](const Args &args, size_t &i) {
    const std::string &arg = args[i];
    if (arg == "--lines" || arg.rfind("--lines=", 0) == 0) {
      std::string value = arg == "--lines" ? (i + 1 < args.size() ? args[++i] : "") : arg.substr(8);
      if (!parseCount(value, 1, 100, plan.lines)) {
        std::fprintf(stderr,
                     "causal confirm: error: invalid value '%s' for --lines (expected a number "
                     "of lines, 1 to 100)\n",
                     value.c_str());
        return 2;
      }
      return kOptionTaken;
    }
    if (arg == "--output" || arg.rfind("--output=", 0) == 0) {
      std::fprintf(stderr, "causal confirm: error: --output: the A/B runs append to PROFILE\n");
      return 2;
    }
    return parseConfirmTuning(args, i, "confirm", "--", plan);
  };
  // Options stop at "--" or at PROFILE, which "--" must follow.
  size_t i = 0;
  if (int status = parseSettingOptions(args, i, env, "confirm", own, printConfirmUsage);
      status >= 0)
    return status;
  if (i == 0 || args[i - 1] != "--") {
    profilePath = args[i];
    if (i + 2 >= args.size() || args[i + 1] != "--") {
      std::fprintf(stderr, "causal confirm: error: put '--' before the program "
                           "(causal confirm [options] [PROFILE] -- PROGRAM [ARGS...])\n");
      return 2;
    }
    i += 2;
  }
  if (profilePath.empty())
    profilePath = "profile.coz";
  Args program(args.begin() + long(i), args.end());
  warnIfNotInstrumented(program[0], "confirm");
  if (outputsProblem(env, profilePath, "confirm"))
    return 2;
  return confirmLines(profilePath, plan, env, program, "confirm");
}

} // namespace causal
