// Loaded and unloaded over and over by dlclose_cycles.c: one progress point.
#include "causal/causal.h"

static volatile unsigned long sink;

void cycle_work(unsigned n) {
  for (unsigned i = 0; i < n; ++i) // LIB-HOT
    sink += i;
  CAUSAL_PROGRESS_NAMED("work");
}
