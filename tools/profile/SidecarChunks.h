//===- SidecarChunks.h - The framing of the binary sidecars -----*- C++ -*-===//
//
// The readers of PROFILE.waits (WaitsReader) and PROFILE.paths (PathsReader)
// share their framing (causal/sidecar_format.h): a file header with the
// format's magic and version, then chunks. This walks it once for both: the
// checks and the messages of a damaged file are the same for every sidecar.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_TOOLS_PROFILE_SIDECARCHUNKS_H
#define CAUSAL_TOOLS_PROFILE_SIDECARCHUNKS_H

#include "causal/sidecar_format.h"

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>

namespace causal::profile {

/// What a sidecar's header must say, and how messages name it.
struct SidecarFormat {
  const char *what; // "waits", "paths"
  const char (&magic)[8];
  uint32_t version;       // the newest this reader knows
  const char *recordFlag; // the `causal run` option that records it: "--waits"
};

/// A chunk's header, its payload and the offset of the header in the file.
/// Returns false with the error set to stop reading.
using SidecarChunkFn =
    std::function<bool(const sidecar_format::ChunkHeader &chunk, std::string_view payload,
                       uint64_t offset, std::string &error)>;

/// Checks the header of the sidecar in |bytes| (|name| in messages) against
/// |format|, sets |version| to its version, and hands every chunk to |chunk|,
/// in the file's order. False at the first error, with |error| set to
/// "NAME: offset N: what is wrong" (or to what |chunk| set).
bool readSidecarChunks(std::string_view bytes, const std::string &name, const SidecarFormat &format,
                       uint32_t &version, const SidecarChunkFn &chunk, std::string &error);

/// "NAME: offset N: MESSAGE", the form of every framing and record error.
std::string sidecarError(const std::string &name, uint64_t offset, const std::string &message);

/// A record of type T read from |at| (no alignment needed).
template <class T> T loadRecord(const char *at) {
  T value;
  std::memcpy(&value, at, sizeof(T));
  return value;
}

/// |value| as "0x..." (0 as "0").
std::string hexNumber(uint64_t value);

} // namespace causal::profile

#endif
