//===- ProfileReader.h - Read causal and Coz profiles ---------------------===//
//
// Reads the records a causal profile consists of, in both spellings that
// exist: the legacy tab-separated form (`type\tkey=value\t...`, what our
// runtime and Coz up to 0.2.x write) and JSON Lines (one flat JSON object per
// line with a "type" member, what newer Coz writes by default). Old record
// spellings are accepted too (`progress-point` for `throughput-point`,
// `throughput_point`/`latency_point` and `selected_samples` in JSON Lines).
//
// A file may hold several runs appended one after the other (every `startup`
// record opens a new run); several files may be read into one Profile.
//
// Bad input never crashes the reader: in strict mode the first bad line is an
// error naming file and line; in lenient mode bad lines are skipped and each
// one becomes a warning.
//
// No LLVM dependency: this library is also built with -fsanitize=fuzzer.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_PROFILE_PROFILEREADER_H
#define CAUSAL_PROFILE_PROFILEREADER_H

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace causal::profile {

enum class PointKind { Throughput, Latency };

const char *pointKindName(PointKind kind);

/// One progress point's counters over one experiment.
struct PointMeasurement {
  std::string name;
  PointKind kind = PointKind::Throughput;
  double delta = 0;      // throughput: visits during the experiment
  double arrivals = 0;   // latency: visits to the begin point
  double departures = 0; // latency: visits to the end point
  double difference = 0; // latency: requests in flight (ours: time-averaged)
};

/// Where a record came from, for messages.
struct SourcePlace {
  std::string file;
  size_t line = 0;
};

/// One performance experiment and the progress it measured.
struct Experiment {
  std::string selected;        // FILE:LINE that was virtually sped up
  double speedup = 0;          // 0..1
  double durationNs = 0;       // effective duration: elapsed minus inserted delay
  double selectedSamples = -1; // samples in the selected line, -1 if not written
  double delayNs = -1;         // inserted delay (causal extension), -1 if not written
  // How saturated the process was (causal extension, -1 if not written):
  // CPUs it may use, threads on a CPU and waiting for one (averages), and
  // the part of delayNs accounted from shared CPUs (docs/runtime.md).
  double cpus = -1;
  double running = -1;
  double waiting = -1;
  double sharedCpuDelayNs = -1;
  /// A/B confirmation run (causal extension, -1 if not written): the
  /// speedup this run's experiments alternate with 0 % (`causal confirm`).
  /// Such experiments are kept out of the ranking (docs/report.md).
  double abSpeedup = -1;
  size_t run = 0;    // index into Profile::runs
  SourcePlace place; // the experiment record
  std::vector<PointMeasurement> points;
};

/// One execution of the profiled program (from one `startup` record to the next).
struct Run {
  SourcePlace place;            // the startup record (or first record of the file)
  bool hasStartup = false;      // false: records before any startup record
  bool writtenByCausal = false; // startup carried profiler=causal
  double runtimeNs = -1;        // last `runtime time=` of the run, -1 if none
  double startupTimeNs = -1;    // `startup time=` (CLOCK_REALTIME ns), -1 if none
  double samplePeriodNs = -1;   // `startup sample-period=` (causal extension), -1 if none
  double shutdownSamples = -1;  // `shutdown samples=` (old Coz), -1 if none
  double samplesOutside = 0;    // last `runtime samples-outside=` (causal): no line to charge
  double samplesExpected = -1;  // last `runtime samples-expected=` (causal, schema 5), -1 if none
  double samplesArrived = -1;   // last `runtime samples-arrived=`, -1 if none
  /// Samples per FILE:LINE. Coz writes cumulative counts, possibly several
  /// times per run; the last value written for a location wins.
  std::map<std::string, double> samples;
};

struct Profile {
  std::vector<std::string> files; // in the order they were read
  std::vector<Run> runs;
  std::vector<Experiment> experiments;
  std::vector<std::string> warnings; // "file:line: message"
  size_t tabRecords = 0;
  size_t jsonRecords = 0;
};

struct ReadOptions {
  bool lenient = false; // skip bad lines with a warning instead of failing
};

/// Reads one profile's text (the contents of \p fileName) into \p into.
/// Returns false and sets \p error ("file:line: message") on the first bad
/// line unless lenient. Never throws for bad input.
bool readProfileText(std::string_view text, const std::string &fileName, Profile &into,
                     const ReadOptions &options, std::string &error);

/// Reads a file; "-" reads standard input.
bool readProfileFile(const std::string &path, Profile &into, const ReadOptions &options,
                     std::string &error);

/// One record split into its type and key/value fields (values as text).
struct Record {
  std::string type;
  std::vector<std::pair<std::string, std::string>> fields;
  const std::string *find(std::string_view key) const;
};

/// Splits one line of either spelling into a Record with canonical type and
/// key names. Returns false with \p error set for a malformed line.
bool parseRecordLine(std::string_view line, Record &record, std::string &error);

/// Parses a number as written in profiles: decimal integer or floating point,
/// finite. Integers of 2^63 or more are read as the 64-bit two's complement
/// negative they wrap to (Coz writes size_t differences that underflowed).
bool parseNumber(std::string_view text, double &value);

} // namespace causal::profile

#endif
