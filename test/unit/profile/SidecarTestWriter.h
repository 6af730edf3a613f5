//===- SidecarTestWriter.h - The framing of synthetic sidecars for tests --===//
//
// A test aid: what WaitsTestWriter.h and PathsTestWriter.h share, the
// framing of include/causal/sidecar_format.h built byte by byte: the file
// header, chunks, and String chunks with the text ids of each run. Not the
// runtime's writer.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_TEST_SIDECARTESTWRITER_H
#define CAUSAL_TEST_SIDECARTESTWRITER_H

#include "causal/sidecar_format.h"

#include <cstring>
#include <map>
#include <string>

namespace causal::test {

class SidecarTestWriter {
public:
  /// A file header of \p magic and \p version; String chunks are of type
  /// \p stringType (the format's ChunkType::String).
  SidecarTestWriter(const char (&magic)[8], uint32_t version, uint32_t stringType)
      : stringType(stringType) {
    sidecar_format::FileHeader header{};
    std::memcpy(header.magic, magic, sizeof header.magic);
    header.version = version;
    header.header_size = sizeof header;
    put(header);
  }

  void chunk(uint32_t type, uint64_t run, const std::string &payload) {
    sidecar_format::ChunkHeader header{type, uint32_t(payload.size()), run};
    put(header);
    bytes += payload;
  }

  /// The id of \p text in \p run, defining it on first use.
  uint32_t text(uint64_t run, const std::string &value) {
    if (value.empty())
      return 0;
    auto &ids = strings[run];
    auto found = ids.find(value);
    if (found != ids.end())
      return found->second;
    uint32_t id = reserve(run, value);
    define(run, id, value);
    return id;
  }

  std::string bytes;

protected:
  std::map<uint64_t, std::map<std::string, uint32_t>> strings;

  /// The next id of \p run for \p value, not yet defined (define).
  uint32_t reserve(uint64_t run, const std::string &value) {
    auto &ids = strings[run];
    uint32_t id = uint32_t(ids.size() + 1);
    ids[value] = id;
    return id;
  }
  /// A String chunk giving \p id of \p run the text \p value.
  void define(uint64_t run, uint32_t id, const std::string &value) {
    sidecar_format::StringHead head{id, uint32_t(value.size())};
    chunk(stringType, run, raw(head) + value);
  }

  template <class T> static std::string raw(const T &value) {
    return std::string(reinterpret_cast<const char *>(&value), sizeof value);
  }
  template <class T> void put(const T &value) { bytes += raw(value); }

private:
  uint32_t stringType;
};

} // namespace causal::test

#endif
