// TEMPORARY placeholder, replaced by the helper that owns this subcommand.
#include "Commands.h"
#include <cstdio>
int causal::reportCommand(const Args &) {
  std::fprintf(stderr, "causal report: not built yet\n");
  return 1;
}
