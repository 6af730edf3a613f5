// bench/paths/paths_cost.cpp - what an entry and exit of a chosen function cost (--paths).
//
// A chosen function (its descriptor, its entry/exit calls and the module's
// counter written by hand, as the pass emits them) called N times at the bottom of a chain of ten
// functions, all in one code section that a line table built in memory
// describes (as an instrumented image's table would): the walk at each entry
// goes through ten frames of instrumented code, then main's frame and the
// C library's start (cut at the base after the first call). Prints the
// thread CPU time per call of the fastest of 7 loops, and whether the entry
// was recorded (the descriptor enabled).
//
// usage: paths_cost N [plain]   (plain: the same chain, its leaf not chosen)
//        paths_cost N clocks    the two clocks an entry and exit may read, per
//                               read: the TSC (rdtsc, the runtime's wall clock
//                               where the TSC is usable) and clock_gettime
//                               (CLOCK_MONOTONIC, its fallback)
#include "TestLineTable.h"

#include "causal/abi.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

extern "C" void __causal_register_module(const void *start, const void *stop);

__attribute__((section(CAUSAL_PATH_FN_SECTION), used, aligned(8)))
causal_path_fn g_leaf_fn = {0, {0, 0, 0}, 0, "_Z4leafi", "leaf(int)"};
extern "C" causal_path_fn __start_causal_path_fns[];
extern "C" causal_path_fn __stop_causal_path_fns[];
__attribute__((constructor)) void registerPathFns() {
  __causal_register_path_fns(__start_causal_path_fns, __stop_causal_path_fns);
}

#define CODE __attribute__((noinline, section("causal_bench_paths")))
extern "C" const char __start_causal_bench_paths[];
extern "C" const char __stop_causal_bench_paths[];

volatile int g_sink;

// The module's counter, as the pass emits it (causal.path.count, abi.h):
// the thread's countdown of the function, and the runtime's entry by a
// tail call when it runs out.
extern "C" __thread int32_t *__causal_path_countdowns __attribute__((tls_model("initial-exec")));
__attribute__((noinline, cold)) uint32_t pathCount(causal_path_fn *fn, const char *inlined_at) {
  if (__atomic_load_n(&fn->enabled, __ATOMIC_RELAXED) == CAUSAL_PATH_FN_COUNTED) {
    if (int32_t *countdowns = __causal_path_countdowns) {
      int32_t *slot = countdowns + __atomic_load_n(&fn->id, __ATOMIC_RELAXED);
      int32_t left = __atomic_load_n(slot, __ATOMIC_RELAXED) - 1;
      __atomic_store_n(slot, left, __ATOMIC_RELAXED);
      if (left >= 0)
        return 0;
    }
  }
  [[clang::musttail]] return __causal_path_enter(fn, inlined_at);
}

CODE int leaf(int x) {
  uint32_t token = 0;
  if (__builtin_expect(__atomic_load_n(&g_leaf_fn.enabled, __ATOMIC_RELAXED) != 0, 0))
    token = pathCount(&g_leaf_fn, nullptr);
  g_sink = x;
  if (token != 0)
    __causal_path_exit(&g_leaf_fn, token);
  return x + 1;
}

// The same function not chosen (no check): the baseline of the check's cost.
CODE int plainLeaf(int x) {
  g_sink = x;
  return x + 1;
}

// Ten frames above the leaf (each keeps its frame: noinline, and the work
// after the call keeps it from being a tail call).
#define LEVEL(name, next)                                                                          \
  CODE int name(int x) { return next(x + 1) * 3 + g_sink; }
#define CHAIN(p, bottom)                                                                           \
  LEVEL(p##1, bottom)                                                                              \
  LEVEL(p##2, p##1)                                                                                \
  LEVEL(p##3, p##2)                                                                                \
  LEVEL(p##4, p##3)                                                                                \
  LEVEL(p##5, p##4)                                                                                \
  LEVEL(p##6, p##5)                                                                                \
  LEVEL(p##7, p##6)                                                                                \
  LEVEL(p##8, p##7)                                                                                \
  LEVEL(p##9, p##8)                                                                                \
  LEVEL(p##10, p##9)
CHAIN(f, leaf)
CHAIN(g, plainLeaf)

static uint64_t threadCpuNs() {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

CODE double run(long n, bool chosen) {
  double best = 1e30;
  int (*top)(int) = chosen ? f10 : g10;
  for (int loop = 0; loop < 7; ++loop) {
    uint64_t start = threadCpuNs();
    for (long i = 0; i < n; ++i)
      g_sink = top(int(i));
    double ns = double(threadCpuNs() - start) / double(n);
    best = ns < best ? ns : best;
  }
  return best;
}

static uint64_t monotonicNs() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

// Thread CPU time per call of |read|, the fastest of 7 loops of |n| calls.
template <class Read> double perRead(long n, Read read) {
  double best = 1e30;
  for (int loop = 0; loop < 7; ++loop) {
    uint64_t sum = 0, start = threadCpuNs();
    for (long i = 0; i < n; ++i)
      sum += read();
    double ns = double(threadCpuNs() - start) / double(n);
    g_sink = int(sum & 1);
    best = ns < best ? ns : best;
  }
  return best;
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000000;
  if (argc > 2 && !strcmp(argv[2], "clocks")) {
#if defined(__x86_64__)
    double tsc = perRead(n, [] { return uint64_t(__rdtsc()); });
#else
    double tsc = 0;
#endif
    printf("tsc_ns=%.1f monotonic_ns=%.1f\n", tsc, perRead(n, monotonicNs));
    return 0;
  }
  static causal::test::InMemoryLineTable *table =
      new causal::test::InMemoryLineTable(causal::test::InMemoryLineTable::singleLine(
          __start_causal_bench_paths,
          uint32_t(__stop_causal_bench_paths - __start_causal_bench_paths), "paths_cost.cpp", 1));
  __causal_register_module(table->start(), table->stop());
  bool chosen = !(argc > 2 && argv[2][0] == 'p'); // "plain": the chain without the check
  double ns = run(n, chosen);
  printf("ns_per_call=%.1f enabled=%u\n", ns, unsigned(g_leaf_fn.enabled));
  return 0;
}
