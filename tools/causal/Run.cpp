//===- Run.cpp - `causal run`: run a program with profiling settings ------===//
//
// Turns options into the environment variables the runtime reads (names and
// defaults in include/causal/tunables.h) and execs the program, so the program
// keeps its pid, its exit status and its signals: `causal run` adds nothing
// between the shell and the program.
//
//===----------------------------------------------------------------------===//
#include "Commands.h"
#include "InstallLayout.h"

#include "causal/tunables.h"

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

// One row per option that maps to a runtime environment variable. An option
// with a |fixed_value| takes no argument and sets the variable to it.
struct EnvOption {
  const char *flag;
  const char *env;
  const char *metavar;
  const char *help;
  bool (*valid)(const std::string &);
  const char *fixed_value = nullptr;
  const char *alias = nullptr; // Coz's name for the same option
};

bool anyValue(const std::string &v) { return !v.empty(); }
bool anyInteger(const std::string &v) {
  return !v.empty() && v.size() <= 19 &&
         std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
}
bool positiveInteger(const std::string &v) {
  return v.size() <= 18 && anyInteger(v) && std::strtoull(v.c_str(), nullptr, 10) > 0;
}
bool samplerName(const std::string &v) { return v == "auto" || v == "perf" || v == "timer"; }
bool percent(const std::string &v) {
  return anyInteger(v) && v.size() <= 3 && std::strtoul(v.c_str(), nullptr, 10) <= 100;
}
bool fileColonLine(const std::string &v) {
  size_t colon = v.rfind(':');
  return colon != std::string::npos && colon > 0 && positiveInteger(v.substr(colon + 1));
}

const EnvOption envOptions[] = {
    {"--output", CAUSAL_ENV_OUTPUT, "FILE",
     "profile to append to (default " CAUSAL_DEFAULT_OUTPUT " in the working directory)", anyValue},
    {"--sampler", CAUSAL_ENV_SAMPLER, "auto|perf|timer",
     "sample source; auto uses perf_event and falls back to a CPU-time timer", samplerName},
    {"--sample-period", CAUSAL_ENV_SAMPLE_PERIOD, "NS",
     "CPU time between samples of a thread, in nanoseconds (default 1000000)", positiveInteger},
    {"--sample-log", CAUSAL_ENV_SAMPLE_LOG, "FILE",
     "also write every sample's address (for `causal lines --check --samples`)", anyValue},
    {"--scope", CAUSAL_ENV_SCOPE, "GLOBS",
     "source files whose lines experiments may select (':'-separated fnmatch globs; default: "
     "all but /usr/include, /usr/lib)",
     anyValue, nullptr, "--source-scope"},
    {"--binary-scope", CAUSAL_ENV_BINARY_SCOPE, "GLOBS",
     "executables/libraries whose lines experiments may select (default: all instrumented)",
     anyValue},
    {"--fixed-line", CAUSAL_ENV_FIXED_LINE, "FILE:LINE", "every experiment selects this line",
     fileColonLine},
    {"--fixed-speedup", CAUSAL_ENV_FIXED_SPEEDUP, "PERCENT",
     "every experiment uses this virtual speedup (0-100)", percent},
    {"--end-to-end", CAUSAL_ENV_END_TO_END, "",
     "one experiment per run, the end of the run is the progress point", anyValue, "1"},
    {"--seed", CAUSAL_ENV_SEED, "N", "seed of the speedup choice (default: from the clock)",
     anyInteger},
    {"--experiment-length", CAUSAL_ENV_EXPERIMENT_NS, "NS",
     "first and shortest experiment length (default 100000000; doubled while progress points "
     "see fewer than 5 visits)",
     positiveInteger},
    {"--cooloff", CAUSAL_ENV_COOLOFF_NS, "NS", "pause between experiments (default 10000000)",
     anyInteger},
    {"--no-experiments", CAUSAL_ENV_EXPERIMENTS, "", "sample only: no experiments, no delays",
     anyValue, "0"},
    {"--no-shared-cpus", CAUSAL_ENV_SHARED_CPUS, "",
     "Coz's model: treat every thread as having a CPU of its own (no shared-CPU accounting "
     "when threads outnumber CPUs)",
     anyValue, "0"},
};

void printUsage(FILE *out) {
  std::fprintf(out, "usage: causal run [options] -- PROGRAM [ARGS...]\n\n"
                    "Runs PROGRAM (built with -fcausal-profile) and appends its profile.\n\n"
                    "options:\n");
  for (const EnvOption &o : envOptions) {
    std::string lhs = o.fixed_value ? std::string(o.flag) : std::string(o.flag) + " " + o.metavar;
    if (o.alias)
      lhs += std::string(", ") + o.alias;
    std::fprintf(out, "  %-26s %s [%s]\n", lhs.c_str(), o.help, o.env);
  }
  std::fprintf(out, "  %-26s %s [%s]\n", "--verbose", "the runtime says what it does on stderr",
               CAUSAL_ENV_VERBOSE);
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

int runCommand(const Args &args) {
  std::vector<std::pair<const char *, std::string>> env;
  bool verbose = false;
  size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string &arg = args[i];
    if (arg == "--" || arg == "---") { // "---": Coz's separator
      ++i;
      break;
    }
    if (arg == "-h" || arg == "--help") {
      printUsage(stdout);
      return 0;
    }
    if (arg == "--verbose") {
      verbose = true;
      continue;
    }
    if (arg.empty() || arg[0] != '-')
      break; // first word of the program
    const EnvOption *match = nullptr;
    std::string value;
    for (const EnvOption &o : envOptions) {
      if (o.fixed_value && (arg == o.flag || (o.alias && arg == o.alias))) {
        match = &o;
        value = o.fixed_value;
        break;
      }
      if (o.fixed_value)
        continue;
      const char *flag =
          o.alias && arg.compare(0, std::strlen(o.alias), o.alias) == 0 &&
                  (arg.size() == std::strlen(o.alias) || arg[std::strlen(o.alias)] == '=')
              ? o.alias
              : o.flag;
      size_t len = std::strlen(flag);
      if (arg == flag) {
        if (i + 1 >= args.size()) {
          std::fprintf(stderr, "causal run: error: %s needs a value (%s)\n", o.flag, o.metavar);
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
      std::fprintf(stderr, "causal run: error: unknown option '%s' (see causal run --help)\n",
                   arg.c_str());
      return 2;
    }
    if (!match->valid(value)) {
      std::fprintf(stderr, "causal run: error: invalid value '%s' for %s (expected %s)\n",
                   value.c_str(), match->flag, match->metavar);
      return 2;
    }
    env.emplace_back(match->env, value);
  }
  if (i >= args.size()) {
    std::fprintf(stderr, "causal run: error: no program given\n");
    printUsage(stderr);
    return 2;
  }

  std::vector<char *> argv;
  for (size_t j = i; j < args.size(); ++j)
    argv.push_back(const_cast<char *>(args[j].c_str()));
  argv.push_back(nullptr);

  std::string resolved = resolveProgram(args[i]);
  if (!resolved.empty() && !looksInstrumented(resolved))
    std::fprintf(stderr,
                 "causal run: warning: '%s' does not look built with -fcausal-profile; "
                 "no profile will be written\n",
                 args[i].c_str());

  unsetenv(CAUSAL_ENV_DISABLE);
  for (auto &[name, value] : env)
    setenv(name, value.c_str(), 1);
  if (verbose)
    setenv(CAUSAL_ENV_VERBOSE, "1", 1);

  execvp(argv[0], argv.data());
  int err = errno;
  std::fprintf(stderr, "causal run: error: cannot execute '%s': %s\n", argv[0], std::strerror(err));
  return err == ENOENT ? 127 : 126;
}

} // namespace causal
