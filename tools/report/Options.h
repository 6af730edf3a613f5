//===- Options.h - Command-line options shared by report and diff ---------===//
#ifndef CAUSAL_REPORT_OPTIONS_H
#define CAUSAL_REPORT_OPTIONS_H

#include "Analysis.h"
#include "ProfileReader.h"

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace causal::report {

enum class ColorMode { Auto, Always, Never };

/// Options both `causal report` and `causal diff` understand.
struct CommonOptions {
  profile::AnalysisOptions analysis;
  profile::ReadOptions read;
  ColorMode color = ColorMode::Auto;
  bool json = false;
  size_t top = 0; // 0: the command's default
  bool topGiven = false;
};

/// Result of trying one argument.
enum class OptionResult { NotMine, Consumed, Error };

/// Tries args[i] (and its value, as the next argument or after '='); on
/// success advances \p i past what it consumed.
OptionResult parseCommonOption(const std::vector<std::string> &args, size_t &i,
                               CommonOptions &options, std::string &error);

/// A command's own options: like parseCommonOption, for one argument.
using OwnOptionParser = std::function<OptionResult(const std::vector<std::string> &args, size_t &i,
                                                   std::string &error)>;

/// Parses the command line of `causal report` or `causal diff` (\p command):
/// profiles (any word not starting with '-', "-", everything after "--"),
/// -h/--help (prints \p usage), the command's own options (\p own), then the
/// common ones. Returns -1 to go on, or the exit status after --help (0) or a
/// usage error it printed (2).
int parseCommandLine(const std::vector<std::string> &args, const char *command,
                     void (*usage)(FILE *), const OwnOptionParser &own, CommonOptions &common,
                     std::vector<std::string> &inputs);

/// Flushes standard output: the exit status of a command that printed there.
int finishOutput();

/// The help text of the common options.
const char *commonOptionsHelp();

/// Colour decision for a stream: never on a non-terminal, never when NO_COLOR
/// is set or TERM=dumb, unless --color=always.
bool useColor(ColorMode mode, int fd);

/// Reads each path into one Profile; prints warnings to stderr (at most
/// \p maxWarnings, then a count). Returns false after printing the error.
bool readProfiles(const std::vector<std::string> &paths, const profile::ReadOptions &options,
                  profile::Profile &profile, const char *command, size_t maxWarnings = 20);

/// What a command writes to a file the user names.
enum class OutputKind {
  HtmlPage,     // `causal report --html`: replaces an earlier page
  Profile,      // `causal run --output`, `causal confirm`: appends to a profile
  WaitsSidecar, // PROFILE.waits of `--waits`: appended to
  SampleLog     // `--sample-log`: appended to
};

/// The one check of every option that names an output file: why writing
/// \p kind to \p output (given as \p option) would destroy data, or "" when
/// it would not. Refused: \p output is one of the command's \p inputs
/// (`causal report --html profile.coz` reads profile.coz by default), a
/// directory, or an existing non-empty file that is not of \p kind (a
/// profile, a source file). A new or empty file, a device or a pipe is fine.
std::string outputProblem(const std::string &output, OutputKind kind,
                          const std::vector<std::string> &inputs, const char *option);

} // namespace causal::report

#endif
