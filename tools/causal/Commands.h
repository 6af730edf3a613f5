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

#include <string>
#include <vector>

namespace causal {

using Args = std::vector<std::string>;

int runCommand(const Args &args);    // causal run [options] -- PROG ARGS
int linesCommand(const Args &args);  // causal lines [--check ...] BINARY
int reportCommand(const Args &args); // causal report [options] PROFILE...
int diffCommand(const Args &args);   // causal diff A B
int waitsCommand(const Args &args);  // causal waits [options] [PROFILE]

} // namespace causal

#endif
