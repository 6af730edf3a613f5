// An instrumented library the fault suite loads and unloads 100 times.
#include <causal/causal.h>

long fault_library_work(long n) {
  long sum = 0;
  for (long i = 0; i < 20000; ++i)
    sum += (i ^ n) & 7; // LIBWORK
  CAUSAL_PROGRESS_NAMED("library");
  return sum & 1;
}
