//===- PathsReader.h - Read the paths sidecar (PROFILE.paths) -------------===//
//
// Reads the binary file of the calling contexts of chosen functions that
// `causal run --paths` writes next to the profile (layout:
// include/causal/paths_format.h; prose: docs/paths.md, "The paths sidecar").
// A file may hold several runs and processes appended; each becomes one
// PathRun. A process that flushes periodically writes its whole state again
// at each flush, each time after a new RunBegin of the same run: a run keeps
// what follows its last RunBegin.
//
// Every byte is checked: magic, version, header and chunk sizes, truncation,
// string and function ids defined before use, path depths. Damage is an
// error naming the file and the byte offset; what a reader can go on from
// (an unknown chunk type, a run without its RunEnd, entries the runtime could
// not record) is a warning. Never a crash: test/fuzz/PathsReaderFuzzer.cpp.
//
// No LLVM dependency (built with -fsanitize=fuzzer too).
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_PROFILE_PATHSREADER_H
#define CAUSAL_PROFILE_PATHSREADER_H

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace causal::profile {

/// A chosen function a run registered (paths_format::Function, texts looked up).
struct PathFunction {
  uint32_t id = 0;
  std::string symbol; // linkage name ("" if none was recorded)
  std::string name;   // demangled name ("" if none was recorded)
  bool enabled = false;
  /// What names it in every view: the demangled name, else the linkage
  /// name, else "function #ID".
  std::string displayName() const;
  /// What identifies it across runs: the linkage name, else the name.
  std::string key() const;
};

/// One frame of a path: texts, "" when unknown.
struct PathFrame {
  std::string function; // the function whose code the frame is in
  std::string location; // "FILE:LINE" of the call (of the entry, for the last frame)
  bool operator<(const PathFrame &o) const {
    return function != o.function ? function < o.function : location < o.location;
  }
  bool operator==(const PathFrame &o) const {
    return function == o.function && location == o.location;
  }
};

/// One Path record. cpuNs is the measured CPU time when the run used the CPU
/// clock, else samples x the run's sample period (PathRun::cpuEstimated).
struct PathRecord {
  uint32_t id = 0;
  uint32_t function = 0;         // PathFunction::id
  bool truncated = false;        // paths_format::kPathTruncated: outermost frames missing
  std::vector<PathFrame> frames; // outermost first; back() is the chosen function's own
  uint64_t calls = 0, recursiveCalls = 0, cpuNs = 0, wallNs = 0, blockedNs = 0, samples = 0,
           threads = 0;
};

struct PathRun {
  uint64_t id = 0;     // RunId
  uint64_t offset = 0; // byte offset of its last RunBegin chunk
  unsigned writes = 0; // RunBegin chunks seen (1 + the periodic re-writes)
  uint64_t startNs = 0, realtimeNs = 0;
  uint32_t pid = 0;
  uint32_t flags = 0; // paths_format::RunFlags
  uint64_t samplePeriodNs = 0;
  std::string program;
  /// No kCpuClock: every cpuNs of the run is samples x samplePeriodNs.
  bool cpuEstimated = true;
  /// Times of one call in this many, after a path's first 64 in a thread,
  /// stand for all (paths_format.h RunBegin::time_one_in; 1: every call).
  uint32_t timeOneIn = 1;
  /// How often the stack was walked (paths_format.h RunBegin::walk_one_in):
  /// 1, at every entry; K, at one entry in K after a function's first 64 in
  /// a thread; 0, auto (the gap chosen from how often the function was
  /// entered). walkGapMax: the largest mean gap used, 1 if every entry was
  /// walked; above 1 the paths' calls, times and samples are estimates, each
  /// function's total calls exact.
  uint32_t walkOneIn = 1;
  uint32_t walkGapMax = 1;
  bool hasEnd = false;
  uint64_t endNs = 0;                                                // RunEnd (0 without one)
  uint64_t pathsWritten = 0, droppedEntries = 0, truncatedWalks = 0; // RunEnd totals
  std::map<uint32_t, std::string> strings;
  std::map<uint32_t, PathFunction> functions; // by id
  std::vector<PathRecord> paths;              // in file order

  /// The text of a string id; "" for 0 or an id never defined.
  const std::string &text(uint32_t id) const;
};

struct PathsFile {
  std::string path;
  uint32_t version = 0;              // the format version of its header
  std::vector<PathRun> runs;         // in the order of their first RunBegin
  std::vector<std::string> warnings; // "path: message"
};

/// The sidecar that belongs to a profile: PROFILE + ".paths".
std::string pathsPathFor(const std::string &profilePath);

/// Whether \p head, the first bytes of a file, starts like a paths sidecar.
bool startsLikePathsFile(std::string_view head);

/// Reads the bytes of a sidecar named \p name. Returns false with \p error
/// ("name: offset N: message") on damage. Never throws for bad input.
bool readPathsData(std::string_view bytes, const std::string &name, PathsFile &into,
                   std::string &error);

/// The part files of the sidecar \p path (PATH.part-RUN, causal/
/// paths_format.h), sorted by name: runs still going, or killed.
std::vector<std::string> pathsPartFiles(const std::string &path);

/// Reads a sidecar and its part files: a run from the sidecar when its write
/// there has its RunEnd, else from its part file; runs only in part files
/// come after the sidecar's. A part file that cannot be read is a warning
/// and left out. ("name: No such file or directory" when neither the file
/// nor a part file exists: callers that know the profile say how to record
/// one.)
bool readPathsFile(const std::string &path, PathsFile &into, std::string &error);

} // namespace causal::profile

#endif
