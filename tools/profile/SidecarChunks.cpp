//===- SidecarChunks.cpp - The framing of the binary sidecars -------------===//
#include "SidecarChunks.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

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
  // O_NONBLOCK: opening a FIFO with no writer does not wait (it is refused
  // below, as is every file that is not a regular one).
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    int saved = errno;
    error = path + ": " + std::strerror(saved);
    if (saved == ENOENT && missingHint)
      error += missingHint;
    return false;
  }
  struct stat info;
  if (fstat(fd, &info) != 0) {
    int saved = errno;
    close(fd);
    error = path + ": cannot read it: " + std::strerror(saved);
    return false;
  }
  if (!S_ISREG(info.st_mode)) {
    close(fd);
    const char *kind = S_ISDIR(info.st_mode)    ? "is a directory"
                       : S_ISFIFO(info.st_mode) ? "is a FIFO"
                       : S_ISCHR(info.st_mode)  ? "is a character device"
                       : S_ISBLK(info.st_mode)  ? "is a block device"
                       : S_ISSOCK(info.st_mode) ? "is a socket"
                                                : "is not a regular file";
    error = path + ": " + kind +
            ", not a sidecar file (causal run writes them next to the profile: PROFILE.waits, "
            "PROFILE.paths)";
    return false;
  }
  bytes.clear();
  bytes.reserve(size_t(info.st_size));
  char buffer[1 << 16];
  for (;;) {
    ssize_t got = read(fd, buffer, sizeof buffer);
    if (got < 0 && (errno == EINTR || errno == EAGAIN))
      continue;
    if (got < 0) {
      int saved = errno;
      close(fd);
      error = path + ": cannot read it: " + std::strerror(saved);
      return false;
    }
    if (got == 0)
      break;
    bytes.append(buffer, size_t(got));
  }
  close(fd);
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
