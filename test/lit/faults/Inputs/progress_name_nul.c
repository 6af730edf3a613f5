// A progress point's name with a NUL inside: refused at compile time.
#include "causal/causal.h"

void visit(void) { CAUSAL_PROGRESS_NAMED("part\0two"); }
