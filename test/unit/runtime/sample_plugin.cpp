//===- test/unit/runtime/sample_plugin.cpp - A DSO dlopen'ed by the target -===//
//
// Stands in for an instrumented shared library: its constructor registers a
// line table for pluginSpinFor (line 30), its destructor (dlclose)
// unregisters it, as the pass's module constructor/destructor do.
//
//===----------------------------------------------------------------------===//

#include "TargetSupport.h"

#include <time.h>

extern "C" void __causal_register_module(const void *start, const void *stop);
extern "C" void __causal_unregister_module(const void *start);
extern "C" const char __start_causal_test_plugin[], __stop_causal_test_plugin[];

extern "C" __attribute__((noinline, section("causal_test_plugin"), visibility("default"))) uint64_t
pluginSpinFor(uint64_t cpu_ns) {
  return causal::test::burnCpu(cpu_ns, 200000);
}

// Not in the plugin's table: its samples are unwound. Calls nothing and reads
// no constant (the unloading test makes the plugin's read-only data
// unreadable while it spins).
extern "C" __attribute__((noinline, visibility("default"))) uint64_t
pluginPlainSpin(uint64_t iterations) {
  uint64_t sum = 0;
  for (uint64_t i = 0; i < iterations; ++i)
    asm volatile("" : "+r"(sum) : "r"(i));
  return sum;
}

static causal::test::InMemoryLineTable *g_table;

__attribute__((constructor)) static void registerPlugin() {
  g_table = causal::test::registerSectionLine(__start_causal_test_plugin, __stop_causal_test_plugin,
                                              "causal_test_plugin.cpp", 30)
                .release();
}

__attribute__((destructor)) static void unregisterPlugin() {
  __causal_unregister_module(g_table->start());
  delete g_table;
  g_table = nullptr;
}
