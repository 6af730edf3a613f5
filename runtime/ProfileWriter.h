//===- runtime/ProfileWriter.h - Coz-format records appended at exit ------===//
//
// Renders the end-of-run block in Coz's legacy tab-separated format:
//   startup\ttime=<CLOCK_REALTIME ns at start>\tprofiler=causal\tsample-period=<ns>
//   runtime\ttime=<ns since start>
//   samples\tlocation=<file>:<line>\tcount=<n>     (one per line with n > 0)
// and appends it to a file opened with O_APPEND, in as few write() calls as
// possible, each ending at a line boundary, so that several processes can
// append to one profile without tearing lines.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_RUNTIME_PROFILEWRITER_H
#define CAUSAL_RUNTIME_PROFILEWRITER_H

#include <stddef.h>
#include <stdint.h>

namespace causal::rt {

class ModuleRegistry;

/// A growable text buffer (malloc-backed; never used in a signal handler).
class TextBuffer {
public:
  TextBuffer() = default;
  TextBuffer(const TextBuffer &) = delete;
  TextBuffer &operator=(const TextBuffer &) = delete;
  ~TextBuffer();
  void append(const char *text, size_t size);
  void appendf(const char *format, ...) __attribute__((format(printf, 2, 3)));
  const char *data() const { return data_ ? data_ : ""; }
  size_t size() const { return size_; }
  bool failed() const { return failed_; }

private:
  bool reserve(size_t extra);
  char *data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
  bool failed_ = false;
};

/// Appends the block of one run to |out|: the startup record (marked
/// profiler=causal, with the sampling period in ns when |sample_period_ns| is
/// not 0: the report needs it for each line's physical bound), |experiments| (pre-formatted
/// experiment and progress point records, may be null), the runtime record and the samples records.
void renderProfile(const ModuleRegistry &registry, uint64_t startup_realtime_ns,
                   uint64_t runtime_ns, TextBuffer *out, const char *experiments = nullptr,
                   size_t experiments_size = 0, uint64_t sample_period_ns = 0);

/// Async-signal-safe version for fatal signals: formats the same block
/// into a static buffer (no malloc, no stdio) and appends it to |path| with
/// O_APPEND, whole lines per write(). Returns 0 or an errno value.
int appendProfileSignalSafe(const char *path, const ModuleRegistry &registry,
                            uint64_t startup_realtime_ns, uint64_t runtime_ns,
                            const char *experiments, size_t experiments_size,
                            uint64_t sample_period_ns = 0);

/// Appends |size| bytes to |path| (created 0644 if missing) with O_APPEND.
/// Writes in chunks of at most |max_chunk| bytes that end at a '\n'.
/// Returns 0 or an errno value.
int appendToFile(const char *path, const char *data, size_t size, size_t max_chunk = 1u << 20);

} // namespace causal::rt

#endif // CAUSAL_RUNTIME_PROFILEWRITER_H
