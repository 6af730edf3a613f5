//===- SidecarChunks.cpp - The framing of the binary sidecars -------------===//
#include "SidecarChunks.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

namespace causal::profile {

namespace sf = causal::sidecar_format;

std::string sidecarError(const std::string &name, uint64_t offset, const std::string &message) {
  return name + ": offset " + std::to_string(offset) + ": " + message;
}

std::string hexNumber(uint64_t value) {
  char text[32];
  std::snprintf(text, sizeof text, "%#llx", static_cast<unsigned long long>(value));
  return text;
}

bool readSidecarFile(const std::string &path, std::string &bytes, std::string &error,
                     const char *missingHint) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    int saved = errno;
    error = path + ": " + std::strerror(saved);
    if (saved == ENOENT && missingHint)
      error += missingHint;
    return false;
  }
  bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (in.bad()) {
    error = path + ": cannot read it";
    return false;
  }
  return true;
}

bool readSidecarChunks(std::string_view bytes, const std::string &name, const SidecarFormat &format,
                       uint32_t &version, const SidecarChunkFn &chunk, std::string &error) {
  auto fail = [&](uint64_t offset, const std::string &message) {
    error = sidecarError(name, offset, message);
    return false;
  };
  const std::string what = format.what;
  if (bytes.size() < sizeof(sf::FileHeader))
    return fail(0, bytes.empty() ? "the file is empty: the program recorded no " + what +
                                       " (was it run with `causal run " + format.recordFlag + "`?)"
                                 : "too short for a " + what + " sidecar header (" +
                                       std::to_string(bytes.size()) + " bytes)");
  auto header = loadRecord<sf::FileHeader>(bytes.data());
  if (std::memcmp(header.magic, format.magic, sizeof header.magic) != 0)
    return fail(0, "not a " + what + " sidecar (bad magic; expected \"" +
                       std::string(format.magic, strnlen(format.magic, 8)) + "\")");
  if (header.version == 0)
    return fail(8, "format version 0 does not exist");
  if (header.version > format.version)
    return fail(8, "written in format version " + std::to_string(header.version) +
                       ", newer than this reader's " + std::to_string(format.version) +
                       ": read it with the causal that recorded it");
  version = header.version;
  if (header.header_size < sizeof(sf::FileHeader) || header.header_size > bytes.size())
    return fail(12, "header size " + std::to_string(header.header_size) + " is wrong");
  uint64_t at = header.header_size;
  while (at < bytes.size()) {
    if (bytes.size() - at < sizeof(sf::ChunkHeader))
      return fail(at, "truncated chunk header (the file ends inside it)");
    auto head = loadRecord<sf::ChunkHeader>(bytes.data() + at);
    uint64_t payload = at + sizeof(sf::ChunkHeader);
    if (bytes.size() - payload < head.size)
      return fail(at, "truncated chunk: it says " + std::to_string(head.size) +
                          " bytes follow, the file has " + std::to_string(bytes.size() - payload));
    if (!chunk(head, bytes.substr(payload, head.size), at, error))
      return false;
    at = payload + head.size;
  }
  return true;
}

} // namespace causal::profile
