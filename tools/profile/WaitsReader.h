//===- WaitsReader.h - Read the waits sidecar (PROFILE.waits) -------------===//
//
// Reads the binary file of blocking episodes that `causal run --waits` writes
// next to the profile (layout: include/causal/waits_format.h; prose:
// docs/waits.md). A file may hold several runs and processes appended; each
// becomes one WaitRun.
//
// Every byte is checked: magic, version, header and chunk sizes, truncation,
// string ids defined before use, episode fields (end before start, unknown
// kinds). Damage is an error naming the byte offset; what a reader can go on
// from (an unknown chunk type, a run without its RunEnd, a thread that lost
// episodes to a full buffer, episodes of a thread with no Thread chunk) is a
// warning. Never a crash: test/fuzz/WaitsReaderFuzzer.cpp.
//
// No LLVM dependency (built with -fsanitize=fuzzer too).
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_PROFILE_WAITSREADER_H
#define CAUSAL_PROFILE_WAITSREADER_H

#include "ProfileReader.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace causal::profile {

/// One program thread of a run (from its Thread chunk, or made up from its
/// episodes when the chunk is missing: then `described` is false).
struct WaitThread {
  uint32_t tid = 0;
  uint32_t parentTid = 0;
  std::string name;         // "" if none was recorded
  std::string startRoutine; // FILE:LINE of its start routine; "" for main/unknown
  uint64_t startNs = 0, endNs = 0, cpuNs = 0, blockedNs = 0, dropped = 0;
  bool described = false;
};

/// One blocking episode (waits_format::Episode with its texts looked up).
struct WaitEpisode {
  uint32_t tid = 0;
  uint32_t waker = 0; // a tid or a waits_format::PseudoThread (0 read as unknown)
  uint64_t startNs = 0, endNs = 0;
  uint64_t object = 0;
  uint32_t line = 0, wakerLine = 0; // ids into WaitRun::strings (0: none)
  uint8_t kind = 0, end = 0;        // waits_format::WaitKind, WaitEnd
  uint16_t flags = 0;               // waits_format::EpisodeFlags (format 2)
};

struct WaitRun {
  uint64_t id = 0;      // RunId
  uint64_t offset = 0;  // byte offset of its RunBegin chunk
  uint64_t startNs = 0; // CLOCK_MONOTONIC
  uint64_t realtimeNs = 0;
  uint32_t pid = 0;
  uint32_t what = 0; // WaitClass mask
  uint64_t binaryHash = 0;
  std::string program;
  bool hasEnd = false;
  uint64_t endNs = 0; // RunEnd, or the latest time seen in the run without one
  uint64_t episodesWritten = 0, dropped = 0, bufferBytes = 0; // RunEnd totals
  std::map<uint32_t, std::string> strings;
  std::map<uint32_t, WaitThread> threads;
  std::vector<WaitEpisode> episodes; // in file order

  /// The text of a string id; "" for 0 or an id never defined.
  const std::string &text(uint32_t id) const;
  uint64_t durationNs() const { return endNs > startNs ? endNs - startNs : 0; }
};

struct WaitsFile {
  std::string path;
  uint32_t version = 0; // the format version of its header
  std::vector<WaitRun> runs;
  std::vector<std::string> warnings; // "path: message"
};

/// The sidecar that belongs to a profile: PROFILE + ".waits".
std::string waitsPathFor(const std::string &profilePath);

/// Whether \p head, the first bytes of a file, starts like a waits sidecar
/// (its magic). What the runtime's `--waits` may append to.
bool startsLikeWaitsFile(std::string_view head);

/// Reads the bytes of a sidecar named \p name. Returns false with \p error
/// ("name: offset N: message") on damage. Never throws for bad input.
bool readWaitsData(std::string_view bytes, const std::string &name, WaitsFile &into,
                   std::string &error);

/// Reads a file. A missing file is an error that says to record one with
/// `causal run --waits`.
bool readWaitsFile(const std::string &path, WaitsFile &into, std::string &error);

/// Whether the sidecar's runs are the profile's. profile.coz records no
/// binary hash, so this compares what both record: every sidecar run's
/// CLOCK_REALTIME start must lie within kWaitsRunMatchSlackNs of a profile
/// run's `startup time=` (both are taken at the runtime's start-up). Returns
/// "" when they match (or when the profile gives no startup times to compare),
/// else a message saying which runs match none. Separately, runs of one
/// sidecar with different RunBegin::binary_hash are reported by the reader as
/// a warning.
std::string waitsProfileMismatch(const WaitsFile &waits, const Profile &profile);

/// Names for messages and listings.
const char *waitKindName(uint8_t kind);
const char *waitEndName(uint8_t end);

} // namespace causal::profile

#endif
