// TEMPORARY placeholder, replaced by the helper that owns this subcommand.
#include "Commands.h"
#include <cstdio>
int causal::linesCommand(const Args &) {
  std::fprintf(stderr, "causal lines: not built yet\n");
  return 1;
}
