//===- runtime/ProfileWriter.h - Coz-format records appended at exit ------===//
//
// Formats the profile's records from their one description,
// include/causal/profile_records.def: one struct per record (records::Startup,
// records::Experiment, ...) with a member per field, and writeRecord(), which
// writes a record as one line of Coz's legacy tab-separated format
// (type<TAB>key=value...) to any sink (TextBuffer, the fatal-signal writer).
//
// A run written whole (it ended before the first periodic flush) is one block
//   startup\ttime=<CLOCK_REALTIME ns at start>\tprofiler=causal\tsample-period=<ns>
//   (experiment and progress point records, formatted by the experiment thread)
//   runtime\ttime=<ns since start>
//   samples\tlocation=<file>:<line>\tcount=<n>[\tfunction=<name>]  (one per line with n > 0)
// A run written in parts (the periodic flush) names itself: its first part is
// the same block with run=<id> in startup; each later part starts with
//   runtime\ttime=<ns since start>\trun=<id>
// followed by the experiments finished since the last part and the samples
// records of the lines whose count changed since then (counts cumulative),
// and its last part ends with `shutdown`. Blocks are appended to a file opened
// with O_APPEND, in as few write() calls as possible, each ending at a line
// boundary, so that several processes can append to one profile without
// tearing lines.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_RUNTIME_PROFILEWRITER_H
#define CAUSAL_RUNTIME_PROFILEWRITER_H

#include "causal/abi.h"
#include "causal/profile_schema.h"
#include "causal/profile_text.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

namespace causal::rt {

/// The records' C types, one struct per record of profile_records.def.
namespace records {
using Count = uint64_t;
using Text = const char *;
struct Location {
  const char *file = nullptr; // null: "<unknown>"
  uint32_t line = 0;
  const char *wait = nullptr;   // a wait target's kind: "FILE:LINE (KIND wait)"
  const char *caller = nullptr; // a calling context's caller: "FILE:LINE (via CALLER)"
};
struct Fixed2 {
  Fixed2(double value = 0) : value(value) {}
  double value;
};
struct Fixed4 {
  Fixed4(double value = 0) : value(value) {}
  double value;
};

#define CAUSAL_PROFILE_FIELD(member, key, type, presence, check, since) type member{};
#define CAUSAL_PROFILE_RECORD(Id, name, since, role, ...)                                          \
  struct Id {                                                                                      \
    __VA_ARGS__                                                                                    \
  };
#include "causal/profile_records.def"

/// A sink has put(text), putUnsigned(n), putFixed(x, decimals), endLine().
template <class Sink> void putValue(Sink &out, Count value) { out.putUnsigned(value); }
/// Text is escaped (causal/profile_text.h): any bytes a program passes keep
/// the record on one line of tab-separated fields.
template <class Sink> void putValue(Sink &out, Text value) {
  if (value)
    profile_text::escape(value, strlen(value),
                         [&out](const char *text, size_t size) { out.put(text, size); });
}
template <class Sink> void putValue(Sink &out, Fixed2 value) { out.putFixed(value.value, 2); }
template <class Sink> void putValue(Sink &out, Fixed4 value) { out.putFixed(value.value, 4); }
template <class Sink> void putValue(Sink &out, Location value) {
  putValue(out, Text(value.file ? value.file : "<unknown>"));
  out.put(":");
  out.putUnsigned(value.line);
  if (value.wait) {
    out.put(" (");
    out.put(value.wait);
    out.put(" wait)");
  }
  if (value.caller) {
    out.put(" (via ");
    putValue(out, Text(value.caller));
    out.put(")");
  }
}
inline bool isSet(Count value) { return value != 0; }
inline bool isSet(Text value) { return value != nullptr; }
inline bool isSet(Fixed2 value) { return value.value != 0; }
inline bool isSet(Fixed4 value) { return value.value != 0; }
inline bool isSet(Location) { return true; }

template <class Sink, class T>
void putField(Sink &out, const char *key, profile_schema::Presence presence, const T &value) {
  if (presence == profile_schema::Presence::IfSet && !isSet(value))
    return;
  out.put("\t");
  out.put(key);
  out.put("=");
  putValue(out, value);
}

/// writeRecord(sink, record): the record as one line, fields in the order
/// of profile_records.def.
#define CAUSAL_PROFILE_FIELD(member, key, type, presence, check, since)                            \
  putField(out, key, profile_schema::Presence::presence, record.member);
#define CAUSAL_PROFILE_RECORD(Id, name, since, role, ...)                                          \
  template <class Sink> void writeRecord(Sink &out, const Id &record) {                            \
    out.put(name);                                                                                 \
    __VA_ARGS__                                                                                    \
    out.endLine();                                                                                 \
  }
#include "causal/profile_records.def"
} // namespace records

using records::writeRecord;

/// The samples records of one line table: one per line whose count
/// (count_of(line index)) is not 0.
template <class Sink, class CountOf>
void writeSamples(Sink &out, const causal_linetab_header *table, CountOf count_of) {
  const causal_linetab_line *lines = causal_linetab_lines(table);
  for (uint32_t i = 0; i < table->num_lines; ++i) {
    records::Samples samples;
    samples.count = count_of(i);
    if (!samples.count)
      continue;
    samples.location.file = causal_linetab_file(table, lines[i].file_index);
    samples.location.line = lines[i].line;
    samples.function = causal_linetab_function(table, i);
    writeRecord(out, samples);
  }
}

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
  // As a sink of records::writeRecord.
  void put(const char *text) { append(text, strlen(text)); }
  void put(const char *text, size_t size) { append(text, size); }
  void putUnsigned(uint64_t value) { appendf("%llu", (unsigned long long)value); }
  void putFixed(double value, int decimals) { appendf("%.*f", decimals, value); }
  void putLines(const char *text, size_t size) { append(text, size); }
  void endLine() { append("\n", 1); }
  /// Hands the text (malloc'd, or null if empty or failed) to the caller.
  char *release();
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

/// One block of a run's profile: what it holds and which part of the run it is.
struct ContextSamples; // Paths.h

struct ProfileBlock {
  uint64_t startup_realtime_ns = 0; ///< startup time= (CLOCK_REALTIME)
  uint64_t runtime_ns = 0;          ///< runtime time= (ns since startup)
  /// Pre-formatted experiment and progress point records (may be null).
  const char *experiments = nullptr;
  size_t experiments_size = 0;
  uint64_t sample_period_ns = 0;   ///< startup sample-period= (0: left out)
  uint64_t samples_outside = 0;    ///< runtime samples-outside= (0: left out)
  uint64_t samples_attributed = 0; ///< shutdown samples= (last part of a run in parts)
  /// runtime samples-expected= and samples-arrived= (docs/runtime.md)
  uint64_t samples_expected = 0;
  uint64_t samples_arrived = 0;
  uint64_t samples_expected_spread = 0; ///< runtime samples-expected-spread= (0: left out)
  uint64_t timer_samples = 0;           ///< runtime timer-samples= (0: left out)
  /// Null: the run is written whole, in this one block. Else the run's
  /// identity: every part names it, the first in startup, the others in the
  /// runtime record they start with; the last part ends with shutdown.
  const char *run_id = nullptr;
  bool first = true; ///< opens the run (startup)
  bool last = true;  ///< closes the run (shutdown, in a run in parts)
  /// A line's samples per calling context (Paths.h takeContextSamples; null:
  /// none), written after the lines' own.
  bool (*take_context_samples)(uint32_t *cursor, ContextSamples *out) = nullptr;
};

/// Appends |block| to |out|: the startup record (first part; marked
/// profiler=causal, with the sampling period: the report needs it for each
/// line's physical bound) or the runtime record naming the run (later
/// parts), the experiments, the runtime record (with the samples taken
/// outside instrumented code, when not 0), the samples records of the lines
/// whose count changed since the last part (all of them in a first part)
/// and, in the last part of a run in parts, the shutdown record. Records the
/// counts written (ModuleRegistry::takeCountToWrite).
void renderProfile(const ModuleRegistry &registry, const ProfileBlock &block, TextBuffer *out);

/// Async-signal-safe version for fatal signals and the periodic flush:
/// formats the same block into a static buffer (no malloc, no stdio) and
/// appends it to |path| with O_APPEND, whole lines per write(). The caller
/// keeps other users of the static buffer out. Returns 0 or an errno value.
int appendProfileSignalSafe(const char *path, const ModuleRegistry &registry,
                            const ProfileBlock &block);

/// Appends |size| bytes to |path| (created 0644 if missing) with O_APPEND.
/// Writes in chunks of at most |max_chunk| bytes that end at a '\n'.
/// Returns 0 or an errno value.
int appendToFile(const char *path, const char *data, size_t size, size_t max_chunk = 1u << 20);

} // namespace causal::rt

#endif // CAUSAL_RUNTIME_PROFILEWRITER_H
