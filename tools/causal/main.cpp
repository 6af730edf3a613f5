//===- main.cpp - The `causal` command -----------------------------------===//
#include "Commands.h"

#include <cstdio>
#include <cstring>

namespace {

struct Subcommand {
  const char *name;
  int (*run)(const causal::Args &);
  const char *summary;
};

const Subcommand subcommands[] = {
    {"run", causal::runCommand, "run a program built with -fcausal-profile and record a profile"},
    {"report", causal::reportCommand, "read profiles: ranked lines, curves, --html, --json"},
    {"diff", causal::diffCommand, "compare two profiles line by line"},
    {"confirm", causal::confirmCommand, "check the report's top lines with A/B runs of a program"},
    {"waits", causal::waitsCommand, "what the threads wait for: wait-for graph and its knots"},
    {"paths", causal::pathsCommand,
     "calling contexts of chosen functions: `causal paths report|enable|disable|top`"},
    {"lines", causal::linesCommand, "print or check the line table embedded in a binary"},
};

void printUsage(FILE *out) {
  std::fprintf(out, "usage: causal <command> [options]\n\ncommands:\n");
  for (const Subcommand &s : subcommands)
    std::fprintf(out, "  %-8s %s\n", s.name, s.summary);
  std::fprintf(out, "\n'causal <command> --help' describes a command.\n");
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    printUsage(stderr);
    return 2;
  }
  if (!std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") ||
      !std::strcmp(argv[1], "help")) {
    printUsage(stdout);
    return 0;
  }
  if (!std::strcmp(argv[1], "--version")) {
    std::printf("causal " CAUSAL_VERSION "\n");
    return 0;
  }
  for (const Subcommand &s : subcommands)
    if (!std::strcmp(argv[1], s.name))
      return s.run(causal::Args(argv + 2, argv + argc));
  std::fprintf(stderr, "causal: error: unknown command '%s'\n", argv[1]);
  printUsage(stderr);
  return 2;
}
