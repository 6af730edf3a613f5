//===- test/unit/runtime/sample_plugin.cpp - A DSO dlopen'ed by the target -===//
//
// Stands in for an instrumented shared library: its constructor registers a
// line table for pluginSpinFor (line 30), its destructor (dlclose)
// unregisters it, as the pass's module constructor/destructor do.
//
//===----------------------------------------------------------------------===//

#include "TestLineTable.h"

#include <time.h>

extern "C" void __causal_register_module(const void *start, const void *stop);
extern "C" void __causal_unregister_module(const void *start);
extern "C" const char __start_causal_test_plugin[], __stop_causal_test_plugin[];

static uint64_t threadCpuNs() {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

extern "C" __attribute__((noinline, section("causal_test_plugin"), visibility("default"))) uint64_t
pluginSpinFor(uint64_t cpu_ns) {
  uint64_t start = threadCpuNs();
  volatile uint64_t sink = 0;
  while (threadCpuNs() - start < cpu_ns)
    for (int i = 0; i < 200000; ++i)
      sink = sink + uint64_t(i);
  return sink;
}

static causal::test::InMemoryLineTable *g_table;

__attribute__((constructor)) static void registerPlugin() {
  using causal::test::InMemoryLineTable;
  g_table = new InMemoryLineTable(InMemoryLineTable::singleLine(
      __start_causal_test_plugin, uint32_t(__stop_causal_test_plugin - __start_causal_test_plugin),
      "causal_test_plugin.cpp", 30));
  __causal_register_module(g_table->start(), g_table->stop());
}

__attribute__((destructor)) static void unregisterPlugin() {
  __causal_unregister_module(g_table->start());
  delete g_table;
  g_table = nullptr;
}
