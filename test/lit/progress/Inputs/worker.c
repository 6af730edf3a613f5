/* Second translation unit (and shared library) using the same progress point
 * names as markers.c. */
#include "causal/causal.h"

int worker(int n) {
  int s = 0;
  for (int i = 0; i < n; ++i) {
    s += i;
    CAUSAL_PROGRESS_NAMED("item");
  }
  return s;
}
