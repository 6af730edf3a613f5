//===- runtime/ProfileWriter.cpp - Coz-format records appended at exit ----===//

#include "ProfileWriter.h"

#include "Paths.h"

#include "ModuleRegistry.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

namespace causal::rt {

TextBuffer::~TextBuffer() { free(data_); }

char *TextBuffer::release() {
  char *text = failed_ ? nullptr : data_;
  if (failed_)
    free(data_);
  data_ = nullptr;
  size_ = capacity_ = 0;
  failed_ = false;
  return text;
}

bool TextBuffer::reserve(size_t extra) {
  if (failed_)
    return false;
  if (size_ + extra + 1 <= capacity_)
    return true;
  size_t grown = capacity_ ? capacity_ * 2 : 4096;
  while (grown < size_ + extra + 1)
    grown *= 2;
  char *bigger = static_cast<char *>(realloc(data_, grown));
  if (!bigger) {
    failed_ = true;
    return false;
  }
  data_ = bigger;
  capacity_ = grown;
  return true;
}

void TextBuffer::append(const char *text, size_t size) {
  if (!reserve(size))
    return;
  memcpy(data_ + size_, text, size);
  size_ += size;
  data_[size_] = 0;
}

void TextBuffer::appendf(const char *format, ...) {
  va_list args;
  va_start(args, format);
  va_list copy;
  va_copy(copy, args);
  int needed = vsnprintf(nullptr, 0, format, copy);
  va_end(copy);
  if (needed > 0 && reserve(size_t(needed))) {
    vsnprintf(data_ + size_, capacity_ - size_, format, args);
    size_ += size_t(needed);
  }
  va_end(args);
}

namespace {

// One block of a run, to any sink (a TextBuffer, the signal-safe writer):
// startup (or, in a later part, a runtime record naming the run), the
// experiments' records (pre-formatted), runtime, and the samples records:
// each retired image's saved ones, then every line whose count changed since
// the last part; the last part of a run in parts ends with shutdown.
template <class Sink>
void writeRun(Sink &out, const ModuleRegistry &registry, const ProfileBlock &block) {
  records::Runtime runtime;
  runtime.time = block.runtime_ns;
  runtime.samples_outside = block.samples_outside;
  runtime.samples_expected = block.samples_expected;
  runtime.samples_arrived = block.samples_arrived;
  runtime.timer_samples = block.timer_samples;
  runtime.samples_expected_spread = block.samples_expected_spread;
  if (block.first) {
    records::Startup startup;
    startup.time = block.startup_realtime_ns;
    startup.profiler = "causal";
    startup.sample_period = block.sample_period_ns;
    startup.run = block.run_id;
    writeRecord(out, startup);
  } else {
    records::Runtime continues = runtime;
    continues.run = block.run_id;
    writeRecord(out, continues);
  }
  if (block.experiments && block.experiments_size)
    out.putLines(block.experiments, block.experiments_size);
  if (block.first)
    writeRecord(out, runtime);
  uint32_t used = registry.slotsUsed();
  for (uint32_t slot = 0; slot < used; ++slot) {
    if (const char *retired = registry.retiredText(slot)) {
      out.putLines(retired, strlen(retired));
      continue;
    }
    if (const causal_linetab_header *table = registry.table(slot))
      writeSamples(out, table,
                   [&](uint32_t line) { return registry.takeCountToWrite(slot, line); });
  }
  // A line's samples in each calling context (Paths.h), beside its whole
  // count: "FILE:LINE (via CALLER)".
  ContextSamples pair;
  for (uint32_t cursor = 0;
       block.take_context_samples && block.take_context_samples(&cursor, &pair);) {
    records::Samples samples;
    samples.count = pair.count;
    samples.location.file = pair.file;
    samples.location.line = pair.line;
    samples.location.caller = pair.caller;
    samples.function = pair.function;
    writeRecord(out, samples);
  }
  if (block.run_id && block.last) {
    records::Shutdown shutdown;
    shutdown.time = block.runtime_ns;
    shutdown.samples = block.samples_attributed;
    writeRecord(out, shutdown);
  }
}

} // namespace

void renderProfile(const ModuleRegistry &registry, const ProfileBlock &block, TextBuffer *out) {
  writeRun(*out, registry, block);
}

namespace {

// Fixed-buffer writer for the fatal-signal path.
class SignalSafeWriter {
public:
  explicit SignalSafeWriter(int fd) : fd_(fd) {}
  void put(const char *text, size_t size) {
    while (size) {
      if (used_ == sizeof(buffer_))
        flush(false);
      size_t room = sizeof(buffer_) - used_;
      size_t n = size < room ? size : room;
      memcpy(buffer_ + used_, text, n);
      used_ += n;
      text += n;
      size -= n;
    }
  }
  void put(const char *text) { put(text, strlen(text)); }
  /// Whole lines: the buffer is written out only between them.
  void putLines(const char *text, size_t size) {
    while (size) {
      const char *end = static_cast<const char *>(memchr(text, '\n', size));
      size_t line = end ? size_t(end - text) : size;
      put(text, line);
      endLine();
      text += line + (end ? 1 : 0);
      size -= line + (end ? 1 : 0);
    }
  }
  void putUnsigned(uint64_t value) {
    char digits[24];
    size_t n = 0;
    do {
      digits[sizeof(digits) - 1 - n++] = char('0' + value % 10);
      value /= 10;
    } while (value);
    put(digits + sizeof(digits) - n, n);
  }
  /// Ends a line; writes out when the buffer is mostly full, at a line end.
  void endLine() {
    put("\n", 1);
    if (used_ > sizeof(buffer_) - 4096)
      flush(true);
  }
  void flush(bool at_line_end) {
    (void)at_line_end;
    size_t done = 0;
    while (done < used_) {
      ssize_t n = ownWrite(fd_, buffer_ + done, used_ - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0) {
        error_ = n < 0 ? errno : EIO;
        break;
      }
      done += size_t(n);
    }
    used_ = 0;
  }
  int error() const { return error_; }

private:
  int fd_;
  int error_ = 0;
  size_t used_ = 0;
  static char buffer_[1 << 16];
};
char SignalSafeWriter::buffer_[1 << 16];

} // namespace

int appendProfileSignalSafe(const char *path, const ModuleRegistry &registry,
                            const ProfileBlock &block) {
  int fd = ownOpen(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0)
    return errno;
  SignalSafeWriter out(fd);
  writeRun(out, registry, block);
  out.flush(true);
  ownClose(fd);
  return out.error();
}

int appendToFile(const char *path, const char *data, size_t size, size_t max_chunk) {
  int fd = ownOpen(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0)
    return errno;
  int error = 0;
  while (size && !error) {
    // Whole lines per write(): with O_APPEND each write() lands at the end
    // of the file as one piece, so concurrent writers interleave at line
    // (in practice: block) boundaries only.
    size_t chunk = size;
    if (chunk > max_chunk) {
      chunk = max_chunk;
      while (chunk > 0 && data[chunk - 1] != '\n')
        --chunk;
      if (chunk == 0)
        chunk = max_chunk; // a single line longer than a chunk
    }
    ssize_t n = ownWrite(fd, data, chunk);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      error = errno;
      break;
    }
    if (n == 0) {
      error = EIO;
      break;
    }
    data += n;
    size -= size_t(n);
  }
  if (ownClose(fd) != 0 && !error && errno != EINTR)
    error = errno;
  return error;
}

} // namespace causal::rt
