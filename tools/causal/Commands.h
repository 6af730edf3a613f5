//===- Commands.h - Subcommands of the `causal` command ------------------===//
//
// Each subcommand lives in its own file and is listed once, in main.cpp.
// A subcommand gets its arguments without the program and subcommand names,
// prints its own usage on --help, and returns the process exit status
// (0 success, 1 failure, 2 bad usage).
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_TOOLS_COMMANDS_H
#define CAUSAL_TOOLS_COMMANDS_H

#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace causal {

using Args = std::vector<std::string>;
/// Environment variables to set for the program: (name, value).
using Environment = std::vector<std::pair<std::string, std::string>>;

int runCommand(const Args &args);     // causal run [options] -- PROG ARGS
int linesCommand(const Args &args);   // causal lines [--check ...] BINARY
int reportCommand(const Args &args);  // causal report [options] PROFILE...
int diffCommand(const Args &args);    // causal diff A B
int confirmCommand(const Args &args); // causal confirm [options] [PROFILE] -- PROG ARGS
int waitsCommand(const Args &args);   // causal waits [options] [PROFILE]
int pathsCommand(const Args &args);   // causal paths report [options] [PROFILE]

// ---- Shared by `causal run` and `causal confirm` (Run.cpp) -----------------

/// A command's own option before the settings: returns kOptionTaken after
/// advancing past the option's last word, -1 when the option is not its
/// own, or an exit status after an error it printed.
constexpr int kOptionTaken = -2;
using OwnRunOption = std::function<int(const Args &args, size_t &i)>;

/// Parses `causal run`'s setting options (include/causal/settings.def) from
/// args[i] on, and \p own's options, up to "--" or the program's first
/// word. Returns -1 with \p i at the program's first word, else the exit
/// status (0 after --help, 2 after a usage error it printed).
int parseSettingOptions(const Args &args, size_t &i, Environment &env, const char *command,
                        const OwnRunOption &own, void (*usage)(FILE *));

/// Warns when \p program does not look built with -fcausal-profile.
void warnIfNotInstrumented(const std::string &program, const char *command);

/// The value a setting will have in the program: from \p env (the options),
/// else from the environment, else \p fallback.
std::string settingValue(const Environment &env, const char *variable, const char *fallback);

/// True, after saying why, when a run would append to a file that must not
/// be appended to: the profile \p profilePath, its waits sidecar (with
/// --waits) or the sample log (--sample-log) exists and is not of that kind
/// (report::outputProblem, the check of every output option).
bool outputsProblem(const Environment &env, const std::string &profilePath, const char *command);

// ---- The program as a watched child (RunWatch.cpp) ---------------------------
/// How `causal run` watches the program it runs as a child.
struct WatchPlan {
  std::string profilePath;    // what the run appends to (read from its size at the start)
  bool statusLine = false;    // a live status line on stderr (a terminal)
  bool summaryLine = false;   // one line at the end
  bool untilStable = false;   // create \p stopFile once the ranking is stable
  std::string stopFile;       // CAUSAL_STOP_FILE of the program
  double durationSeconds = 0; // --duration (0: none), for the summary
};
/// Runs \p program with \p env added as a child, watching its profile as
/// \p plan says; signals sent to `causal run` go on to it. Returns its wait
/// status, or -1 (after saying why) when it could not be started.
int watchProgram(const Environment &env, const Args &program, const WatchPlan &plan);
/// Ends `causal run` as the program ended: its exit status, or its signal
/// raised again (returns 128 + N if that signal does not end the process).
int exitLikeChild(int status);
/// The exit status a shell shows for wait status \p status (128 + N for
/// signal N; 126 for -1).
int statusNumber(int status);

// ---- Confirmation runs (Confirm.cpp) ----------------------------------------

/// What `causal confirm` (and `causal run --confirm`) do.
struct ConfirmPlan {
  size_t lines = 3;             // the report's top K lines
  double budgetSeconds = 60;    // per line, for its A/B runs
  unsigned speedupPercent = 50; // the B arm's speedup
};

/// Parses --<prefix>budget SECONDS and --<prefix>speedup PERCENT (either as
/// the next word or after '='); returns as OwnRunOption does.
int parseConfirmTuning(const Args &args, size_t &i, const char *command, const std::string &prefix,
                       ConfirmPlan &plan);

/// A decimal integer in [low, high].
bool parseCount(const std::string &text, size_t low, size_t high, size_t &value);

/// Runs \p program as a child with \p env added; returns its exit status
/// (128 + N when killed by signal N, 127/126 when it could not be run).
int runProgram(const Environment &env, const Args &program, const char *command);

/// "exited with status N" or "was killed by signal N (NAME)".
std::string describeStatus(int status);

/// True, after saying why, when \p env asks for --end-to-end runs, which
/// cannot be A/B runs (one experiment each).
bool endToEndProblem(const Environment &env, const char *command);

/// Reads \p profilePath, takes the top lines of its ranking and runs A/B
/// runs of \p program on each until its interval is narrow or the budget is
/// spent; prints the verdicts. Returns the exit status.
int confirmLines(const std::string &profilePath, const ConfirmPlan &plan, const Environment &env,
                 const Args &program, const char *command);

} // namespace causal

#endif
