// A library with chosen functions, opened and closed by unloaded_main.c:
// its paths must keep their names after dlclose unmapped it.
static volatile int sink;

static inline __attribute__((always_inline)) void lib_inlined(int i) { sink = sink + i; }

__attribute__((noinline)) void lib_work(int i) { sink = sink + 2 * i; }

void lib_entry(int calls) {
  for (int i = 0; i < calls; ++i) {
    lib_work(i);
    lib_inlined(i);
  }
}
