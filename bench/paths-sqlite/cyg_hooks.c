// The hooks -finstrument-functions calls at every function entry and exit:
// the cheapest useful ones for choosing two functions at run time. Each call
// compares the function's address with the chosen ones (set from
// PATHS_BENCH_CHOSEN_* by the bench's constructor) and counts a match; the
// cost measured is the instrumentation of every function, which is what
// -finstrument-functions makes a user pay to watch a few.
#include <stdint.h>

static void *chosen[2];
static unsigned long entries[2];

__attribute__((no_instrument_function)) void paths_bench_choose(void *first, void *second) {
  chosen[0] = first;
  chosen[1] = second;
}

__attribute__((no_instrument_function)) unsigned long paths_bench_entries(int which) {
  return __atomic_load_n(&entries[which], __ATOMIC_RELAXED);
}

__attribute__((no_instrument_function)) void __cyg_profile_func_enter(void *fn, void *site) {
  (void)site;
  if (fn == chosen[0])
    __atomic_fetch_add(&entries[0], 1, __ATOMIC_RELAXED);
  else if (fn == chosen[1])
    __atomic_fetch_add(&entries[1], 1, __ATOMIC_RELAXED);
}

__attribute__((no_instrument_function)) void __cyg_profile_func_exit(void *fn, void *site) {
  (void)fn;
  (void)site;
}
