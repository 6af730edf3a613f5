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
// Memory: the reader holds one line of the file at a time, never the file.
// What it keeps grows with the experiments (a fixed-size tuple each, for the
// bootstrap) and with the distinct names (FILE:LINE, progress points, each
// stored once), not with the text: a run's `samples` records are folded into
// per-line totals when the run ends (docs/report.md, "Memory").
//
// No LLVM dependency: this library is also built with -fsanitize=fuzzer.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_PROFILE_PROFILEREADER_H
#define CAUSAL_PROFILE_PROFILEREADER_H

#include <cstddef>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace causal::profile {

enum class PointKind { Throughput, Latency };

const char *pointKindName(PointKind kind);

/// Sample period assumed for a run that did not record one (`startup
/// sample-period=`): 1 ms, the default of causal's runtime and Coz's fixed
/// period.
constexpr double kDefaultSamplePeriodNs = 1e6;

/// One progress point's counters over one experiment.
struct PointMeasurement {
  std::string_view name; // in Profile::names
  PointKind kind = PointKind::Throughput;
  double delta = 0; // throughput: visits during the experiment
  // Throughput, when the runtime timed the visits (schema 6), else -1: the
  // time from the first timed visit to the last, the sum of the squared gaps
  // between consecutive ones (us^2), in the experiment's effective time, and
  // how many were timed.
  double spanNs = -1;
  double gapSquaresUs2 = -1;
  double timedVisits = -1;
  double arrivals = 0;   // latency: visits to the begin point
  double departures = 0; // latency: visits to the end point
  double difference = 0; // latency: requests in flight (ours: time-averaged)
};

/// Memory for the blocks of the reader's large tables (experiments, their
/// points): whole multiples of 2 MiB, aligned to 2 MiB and offered to the
/// kernel for transparent huge pages (madvise): a page fault per 2 MiB
/// instead of one per 4 KiB (reading a 200 MB profile: 28,500 faults became
/// 520, docs/benchmarks.md "Report scale"). The memory is uninitialized.
struct TableBlockFree {
  void operator()(void *block) const;
};
using TableBlock = std::unique_ptr<void, TableBlockFree>;
constexpr size_t kTableBlockBytes = size_t(2) << 20;
TableBlock allocateTableBlock(size_t bytes);

/// The progress points of one experiment: a view of the Profile's
/// PointStore, where they lie side by side.
class PointSpan {
public:
  size_t size() const { return count; }
  bool empty() const { return count == 0; }
  const PointMeasurement &operator[](size_t i) const { return first[i]; }
  const PointMeasurement *begin() const { return first; }
  const PointMeasurement *end() const { return first + count; }

private:
  friend class PointStore;
  PointMeasurement *first = nullptr;
  size_t count = 0;
};

/// Where a Profile's progress points are kept: in table blocks that never
/// move, each experiment's points side by side, so that reading an
/// experiment allocates nothing of its own (one vector per experiment cost a
/// malloc each, and a reallocation at its second point).
class PointStore {
public:
  /// Adds \p point after the points of \p points. Those are moved to the
  /// end of the store first unless they end where the next point goes (as
  /// they do when only the newest experiment gets points, which is how the
  /// reader adds them).
  void append(PointSpan &points, const PointMeasurement &point);

private:
  static constexpr size_t kBlock = kTableBlockBytes / sizeof(PointMeasurement);
  PointMeasurement *last() const { return static_cast<PointMeasurement *>(blocks.back().get()); }
  std::vector<TableBlock> blocks;
  size_t capacity = 0; // points in blocks.back()
  size_t used = 0;     // of them
};

/// Where a record came from, for messages.
struct SourcePlace {
  std::string file;
  size_t line = 0;
};

/// One performance experiment and the progress it measured.
struct Experiment {
  std::string_view selected;   // FILE:LINE that was virtually sped up (in Profile::names)
  double speedup = 0;          // 0..1
  double durationNs = 0;       // effective duration: elapsed minus inserted delay
  double selectedSamples = -1; // samples in the selected line, -1 if not written
  double delayNs = -1;         // inserted delay (causal extension), -1 if not written
  // How saturated the process was (causal extension, -1 if not written):
  // CPUs it may use, threads on a CPU and waiting for one, those CPUs idle
  // (averages), and the part of delayNs accounted from shared CPUs
  // (docs/runtime.md).
  double cpus = -1;
  double running = -1;
  double waiting = -1;
  double idle = -1;
  double sharedCpuDelayNs = -1;
  /// A/B confirmation run (causal extension, -1 if not written): the
  /// speedup this run's experiments alternate with 0 % (`causal confirm`).
  /// Such experiments are kept out of the ranking (docs/report.md).
  double abSpeedup = -1;
  size_t run = 0;   // index into Profile::runs
  PointSpan points; // in Profile::pointStore
};

/// The experiments of a Profile in the order they were read, in table
/// blocks: an experiment never moves once read (no copy of all of them as
/// the list grows, as a vector would make) and reading one allocates
/// nothing (a deque allocates a node every few experiments).
class ExperimentList {
public:
  size_t size() const { return count; }
  bool empty() const { return count == 0; }
  Experiment &operator[](size_t i) { return block(i / kBlock)[i % kBlock]; }
  const Experiment &operator[](size_t i) const { return block(i / kBlock)[i % kBlock]; }
  void push_back(Experiment experiment);

  template <typename List, typename Item> class Iterator {
  public:
    Iterator(List *list, size_t index) : list(list), index(index) {}
    Item &operator*() const { return (*list)[index]; }
    Item *operator->() const { return &(*list)[index]; }
    Iterator &operator++() {
      ++index;
      return *this;
    }
    bool operator==(const Iterator &other) const { return index == other.index; }
    bool operator!=(const Iterator &other) const { return index != other.index; }

  private:
    List *list;
    size_t index;
  };
  using iterator = Iterator<ExperimentList, Experiment>;
  using const_iterator = Iterator<const ExperimentList, const Experiment>;
  iterator begin() { return {this, 0}; }
  iterator end() { return {this, count}; }
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, count}; }

private:
  static constexpr size_t kBlock = kTableBlockBytes / sizeof(Experiment);
  Experiment *block(size_t b) const { return static_cast<Experiment *>(blocks[b].get()); }
  std::vector<TableBlock> blocks;
  size_t count = 0;
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
  /// An A/B run of `causal confirm`: one of its experiments carries
  /// ab-speedup (docs/report.md, "Confirmation").
  bool abRun = false;
  size_t sampledLines = 0; // FILE:LINEs with a samples record
  /// Callers whose per-context samples the run recorded (samples records
  /// named FILE:LINE (via CALLER): `causal run --path`, --path-experiments);
  /// views into Profile::names. The whole-run time of a per-caller line is
  /// that of these runs only (docs/report.md, "Per calling context").
  std::vector<std::string_view> contexts;
  /// A run written in parts (causal's periodic flush): the run= its parts
  /// name ("" for a run written whole), and whether its last part, which
  /// ends with `shutdown`, is there (not when the process was killed).
  std::string partsId;
  bool shutdownSeen = false;
  double samplesExpected = -1; // last `runtime samples-expected=` (causal, schema 5), -1 if none
  double samplesArrived = -1;  // last `runtime samples-arrived=`, -1 if none
  double samplesExpectedSpread = 0; // last `runtime samples-expected-spread=` (schema 9), 0 if none
  double timerSamples = 0;          // last `runtime timer-samples=` (schema 8), 0 if none
};

/// The samples of one FILE:LINE summed over runs. Coz writes cumulative
/// counts, possibly several times per run: of each run, the last value
/// written for the location counts. Folded when the run ends.
struct SampleTotals {
  double all = 0;      // every run
  double ordinary = 0; // runs that are not A/B runs
  /// Ordinary runs with a runtime record: their samples, and the samples
  /// times each run's sample period (kDefaultSamplePeriodNs where not written).
  double ordinaryTimed = 0;
  double ordinaryTimedNs = 0;
};

/// Everything read from one or more profile files. Names (FILE:LINE,
/// progress points) are stored once in `names`; experiments and points
/// refer to them, so a Profile can be moved but not copied.
struct Profile {
  Profile() = default;
  Profile(Profile &&) = default;
  Profile &operator=(Profile &&) = default;
  Profile(const Profile &) = delete;
  Profile &operator=(const Profile &) = delete;

  std::vector<std::string> files; // in the order they were read
  std::vector<Run> runs;
  ExperimentList experiments;
  PointStore pointStore; // the experiments' points
  /// Per FILE:LINE, ordered by name; complete once the reading ended.
  std::map<std::string_view, SampleTotals> samples;
  std::vector<std::string> warnings; // "file:line: message"
  /// Function of each FILE:LINE, demangled, from `samples function=`
  /// (causal: the binary's line table); lines without one are absent.
  std::map<std::string, std::string> functions;
  std::vector<std::string> notes; // "file:line: message": not a problem of the file
  size_t tabRecords = 0;
  size_t jsonRecords = 0;
  /// The names the records refer to, each stored once: views into
  /// `nameStore`, whose strings stay where they are as it grows and when the
  /// Profile moves.
  std::deque<std::string> nameStore;
  std::unordered_set<std::string_view> names;
  std::string_view intern(std::string_view name);
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

/// Whether \p head, the first bytes of a file, starts like a profile: its
/// first line that is not blank is a record of a known type (either
/// spelling). What `causal run --output` may append to.
bool startsLikeProfile(std::string_view head);

/// One record split into its type and key/value fields (values as text).
/// The views point into the line parsed (tab-separated) or into
/// `jsonMembers` (JSON Lines): valid while both stay unchanged.
struct Record {
  std::string_view type; // canonical name
  std::vector<std::pair<std::string_view, std::string_view>> fields;
  /// Tab-separated: text values are escaped as causal/profile_text.h says
  /// (JSON Lines carry JSON's own escapes, decoded by the parser).
  bool escapedText = false;
  /// JSON Lines: the members as decoded, which type and fields view.
  std::vector<std::pair<std::string, std::string>> jsonMembers;
  /// The value of the first field named \p key, or null.
  const std::string_view *find(std::string_view key) const;
};

/// Splits one line of either spelling into a Record with canonical type and
/// key names, viewing \p line. Returns false with \p error set for a
/// malformed line.
bool parseRecordLine(std::string_view line, Record &record, std::string &error);

/// Parses a number as written in profiles: decimal integer or floating point,
/// finite. Integers of 2^63 or more are read as the 64-bit two's complement
/// negative they wrap to (Coz writes size_t differences that underflowed).
bool parseNumber(std::string_view text, double &value);

} // namespace causal::profile

#endif
