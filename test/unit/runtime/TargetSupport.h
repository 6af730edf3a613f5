//===- test/unit/runtime/TargetSupport.h - What the test programs share ---===//
//
// For the programs the runtime tests run (sample_target, sample_plugin,
// experiment_target, sleep_target): clocks, a CPU burner that stays in its
// caller's code, and a line table of one line for a code section.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_TEST_UNIT_RUNTIME_TARGETSUPPORT_H
#define CAUSAL_TEST_UNIT_RUNTIME_TARGETSUPPORT_H

#include "TestLineTable.h"

#include "causal/abi.h"

#include <memory>
#include <stdint.h>
#include <time.h>

namespace causal::test {

inline uint64_t nowNs(clockid_t clock = CLOCK_MONOTONIC) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

inline uint64_t threadCpuNs() { return nowNs(CLOCK_THREAD_CPUTIME_ID); }

/// CLOCK_REALTIME |ns| from now (|ns| under a second): a timed wait's deadline.
inline timespec realtimeIn(long ns) {
  timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_nsec += ns;
  if (deadline.tv_nsec >= 1000000000) {
    deadline.tv_sec++;
    deadline.tv_nsec -= 1000000000;
  }
  return deadline;
}

/// Burns |cpu_ns| of this thread's CPU time in rounds of |inner| additions.
/// Always inlined: the samples fall in the caller's code (its section, the
/// line its table gives it).
__attribute__((always_inline)) inline uint64_t burnCpu(uint64_t cpu_ns, int inner) {
  uint64_t start = threadCpuNs();
  volatile uint64_t sink = 0;
  while (threadCpuNs() - start < cpu_ns)
    for (int i = 0; i < inner; ++i)
      sink = sink + uint64_t(i);
  return sink;
}

/// A line table that gives the code section [start, stop) one line,
/// FILE:LINE, registered with the runtime as an image's table is.
inline std::unique_ptr<InMemoryLineTable> registerSectionLine(const char *start, const char *stop,
                                                              const char *file, uint32_t line) {
  auto table = std::make_unique<InMemoryLineTable>(
      InMemoryLineTable::singleLine(start, uint32_t(stop - start), file, line));
  __causal_register_module(table->start(), table->stop());
  return table;
}

} // namespace causal::test

#endif // CAUSAL_TEST_UNIT_RUNTIME_TARGETSUPPORT_H
