// TEMPORARY placeholder, replaced by the helper that owns this subcommand.
#include "Commands.h"
#include <cstdio>
int causal::diffCommand(const Args &) {
  std::fprintf(stderr, "causal diff: not built yet\n");
  return 1;
}
