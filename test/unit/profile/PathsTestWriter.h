//===- PathsTestWriter.h - Write synthetic paths sidecars for tests -------===//
//
// A test aid: builds a sidecar byte by byte with the layout of
// include/causal/paths_format.h, so that the reader and the trees can be
// checked on paths with known answers. Not the runtime's writer.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_TEST_PATHSTESTWRITER_H
#define CAUSAL_TEST_PATHSTESTWRITER_H

#include "SidecarTestWriter.h"

#include "causal/paths_format.h"

#include <string>
#include <utility>
#include <vector>

namespace causal::test {

namespace pf = causal::paths_format;

/// A frame as texts: (function, location).
using Frame = std::pair<std::string, std::string>;

/// The metrics of a Path record.
struct PathValues {
  uint64_t calls = 0, recursiveCalls = 0, cpuNs = 0, wallNs = 0, blockedNs = 0, samples = 0,
           threads = 1;
};

class PathsWriter : public SidecarTestWriter {
public:
  explicit PathsWriter(uint32_t version = pf::kVersion)
      : SidecarTestWriter(pf::kMagic, version, uint32_t(pf::ChunkType::String)) {}

  /// A RunBegin; a second one for the same run starts its state again (the
  /// periodic flush): the string ids of the run are defined anew.
  void begin(uint64_t run, uint32_t flags = 0, uint64_t samplePeriodNs = 1000000,
             uint32_t pid = 100, const std::string &program = "") {
    strings.erase(run);
    pf::RunBegin record{};
    record.start_ns = 1000;
    record.realtime_ns = 2000;
    record.pid = pid;
    record.flags = flags;
    record.sample_period_ns = samplePeriodNs;
    record.program_name = program.empty() ? 0 : reserve(run, program);
    chunk(uint32_t(pf::ChunkType::RunBegin), run, raw(record));
    if (!program.empty())
      define(run, record.program_name, program);
  }

  void function(uint64_t run, uint32_t id, const std::string &symbol, const std::string &name,
                bool enabled = true) {
    pf::Function record{};
    record.id = id;
    record.symbol = text(run, symbol);
    record.name = text(run, name);
    record.enabled = enabled ? 1 : 0;
    chunk(uint32_t(pf::ChunkType::Function), run, raw(record));
  }

  /// A Path record: \p frames outermost first, the function's own last.
  void path(uint64_t run, uint32_t id, uint32_t function, const std::vector<Frame> &frames,
            const PathValues &v, uint32_t flags = 0) {
    std::vector<pf::Frame> records;
    for (const Frame &f : frames)
      records.push_back({text(run, f.first), text(run, f.second)});
    pathRaw(run, id, function, uint32_t(records.size()), records, v, flags);
  }

  /// A Path record with any depth and frame ids (for damaged records).
  void pathRaw(uint64_t run, uint32_t id, uint32_t function, uint32_t depth,
               const std::vector<pf::Frame> &frames, const PathValues &v, uint32_t flags = 0) {
    pf::PathHead head{};
    head.id = id;
    head.function = function;
    head.depth = depth;
    head.flags = flags;
    head.calls = v.calls;
    head.recursive_calls = v.recursiveCalls;
    head.cpu_ns = v.cpuNs;
    head.wall_ns = v.wallNs;
    head.blocked_ns = v.blockedNs;
    head.samples = v.samples;
    head.threads = v.threads;
    std::string payload = raw(head);
    for (const pf::Frame &f : frames)
      payload += raw(f);
    chunk(uint32_t(pf::ChunkType::Path), run, payload);
  }

  void end(uint64_t run, uint64_t paths, uint64_t dropped = 0, uint64_t truncated = 0) {
    pf::RunEnd record{};
    record.end_ns = 5000;
    record.paths = paths;
    record.dropped_entries = dropped;
    record.truncated_walks = truncated;
    chunk(uint32_t(pf::ChunkType::RunEnd), run, raw(record));
  }
};

} // namespace causal::test

#endif
