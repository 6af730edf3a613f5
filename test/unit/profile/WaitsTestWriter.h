//===- WaitsTestWriter.h - Write synthetic waits sidecars for tests -------===//
//
// A test aid: builds a sidecar byte by byte with the layout of
// include/causal/waits_format.h, so that the reader and the analysis can be
// checked on waits with known answers. Not the runtime's writer.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_TEST_WAITSTESTWRITER_H
#define CAUSAL_TEST_WAITSTESTWRITER_H

#include "SidecarTestWriter.h"

#include "causal/waits_format.h"

#include <string>
#include <vector>

namespace causal::test {

namespace wf = causal::waits_format;

/// Milliseconds as nanoseconds.
constexpr uint64_t ms(double value) { return uint64_t(value * 1e6); }

class WaitsWriter : public SidecarTestWriter {
public:
  explicit WaitsWriter(uint32_t version = wf::kVersion)
      : SidecarTestWriter(wf::kMagic, version, uint32_t(wf::ChunkType::String)) {}

  void begin(uint64_t run, uint64_t startNs, uint64_t realtimeNs = 0, uint64_t hash = 0,
             uint32_t pid = 100) {
    wf::RunBegin record{};
    record.start_ns = startNs;
    record.realtime_ns = realtimeNs;
    record.pid = pid;
    record.what = wf::kWaitSync | wf::kWaitIo;
    record.binary_hash = hash;
    chunk(uint32_t(wf::ChunkType::RunBegin), run, raw(record));
  }

  void thread(uint64_t run, uint32_t tid, const std::string &name, const std::string &routine,
              uint64_t startNs, uint64_t endNs, uint64_t cpuNs, uint64_t blockedNs,
              uint64_t dropped = 0) {
    wf::Thread record{};
    record.tid = tid;
    record.name = text(run, name);
    record.start_routine = text(run, routine);
    record.start_ns = startNs;
    record.end_ns = endNs;
    record.cpu_ns = cpuNs;
    record.blocked_ns = blockedNs;
    record.dropped = dropped;
    chunk(uint32_t(wf::ChunkType::Thread), run, raw(record));
  }

  wf::Episode episode(uint64_t run, uint64_t startNs, uint64_t endNs, uint32_t waker,
                      wf::WaitKind kind, const std::string &line = "",
                      const std::string &wakerLine = "", uint64_t object = 0,
                      wf::WaitEnd end = wf::WaitEnd::Woken) {
    wf::Episode record{};
    record.start_ns = startNs;
    record.end_ns = endNs;
    record.object = object;
    record.line = text(run, line);
    record.waker = waker;
    record.waker_line = text(run, wakerLine);
    record.kind = uint8_t(kind);
    record.end = uint8_t(end);
    return record;
  }

  void episodes(uint64_t run, uint32_t tid, const std::vector<wf::Episode> &list) {
    std::string payload;
    uint32_t head[2] = {tid, uint32_t(list.size())};
    payload.append(reinterpret_cast<const char *>(head), sizeof head);
    for (const wf::Episode &e : list)
      payload += raw(e);
    chunk(uint32_t(wf::ChunkType::Episodes), run, payload);
  }

  void end(uint64_t run, uint64_t endNs, uint64_t episodes = 0) {
    wf::RunEnd record{};
    record.end_ns = endNs;
    record.episodes = episodes;
    chunk(uint32_t(wf::ChunkType::RunEnd), run, raw(record));
  }
};

} // namespace causal::test

#endif
