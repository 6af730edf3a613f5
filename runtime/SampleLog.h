//===- runtime/SampleLog.h - Per-address sample counts (CAUSAL_SAMPLE_LOG) -===//
//
// When CAUSAL_SAMPLE_LOG is set, every attributed sample address is counted
// here, keyed by (module slot, link-time address), and written at exit as
// "<module path> <link-time address hex> <count>" lines for
// `causal lines --check`. A fixed-size open-addressing table in one
// anonymous mapping, filled lock-free from signal handlers (CAS on empty
// keys); when a probe sequence is full the sample is counted as overflow.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_RUNTIME_SAMPLELOG_H
#define CAUSAL_RUNTIME_SAMPLELOG_H

#include <atomic>
#include <stddef.h>
#include <stdint.h>

namespace causal::rt {

class ModuleRegistry;

class SampleLog {
public:
  /// Maps |slots| entries (rounded up to a power of two). False on failure.
  bool init(uint32_t slots);
  bool enabled() const { return entries_ != nullptr; }

  /// Signal-safe.
  void add(uint32_t module, uint64_t link_address, uint64_t count);

  uint64_t overflowed() const { return overflow_.load(std::memory_order_relaxed); }
  uint32_t capacity() const { return mask_ + 1; }

  /// Renders all entries as text lines into a malloc'd buffer (caller
  /// frees); returns null if empty. Not signal-safe.
  char *render(const ModuleRegistry &registry, size_t *size) const;

  /// Zeroes the table (fork child).
  void reset();
  void destroy();

private:
  struct Entry {
    std::atomic<uint64_t> key; // 0 = empty; else bit 63 | module << 48 | address
    std::atomic<uint64_t> count;
  };
  static constexpr unsigned kMaxProbes = 64;

  Entry *entries_ = nullptr;
  uint32_t mask_ = 0;
  size_t bytes_ = 0;
  std::atomic<uint64_t> overflow_{0};
};

} // namespace causal::rt

#endif // CAUSAL_RUNTIME_SAMPLELOG_H
