// The library of live_dl.c: its chosen function, in an image the program
// loads with dlopen after start-up.
static volatile unsigned long sink;

__attribute__((noinline)) void lib_step(unsigned steps) {
  unsigned long x = steps;
  for (unsigned i = 0; i < steps; ++i)
    x = x * 6364136223846793005ul + 1442695040888963407ul;
  sink = x;
}
