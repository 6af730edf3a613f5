//===- runtime/SidecarFile.cpp - Appending chunks to a sidecar file -------===//
#include "SidecarFile.h"

#include "Support.h"

#include "causal/sidecar_format.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>

namespace causal::rt {

namespace {

int rawOpen(const char *path, int flags) {
  return int(rawSyscall(SYS_openat, AT_FDCWD, long(path), flags | O_CLOEXEC, 0644));
}

} // namespace

bool writeAllRaw(int fd, const char *data, size_t size) {
  while (size > 0) {
    long n = rawSyscall(SYS_write, fd, long(data), long(size));
    if (n == -EINTR)
      continue;
    if (n <= 0)
      return false;
    data += n;
    size -= size_t(n);
  }
  return true;
}

int openSidecarForAppend(const char *path, const char (&magic)[8], uint32_t version) {
  int fd = rawOpen(path, O_WRONLY | O_APPEND | O_CREAT | O_EXCL);
  bool fresh = fd >= 0;
  if (!fresh) {
    fd = rawOpen(path, O_WRONLY | O_APPEND | O_CREAT);
    if (fd < 0)
      return -1;
    struct stat st;
    fresh = rawSyscall(SYS_fstat, fd, long(&st)) == 0 && st.st_size == 0;
  }
  if (fresh) {
    sidecar_format::FileHeader header;
    memcpy(header.magic, magic, sizeof(header.magic));
    header.version = version;
    header.header_size = sizeof(header);
    writeAllRaw(fd, reinterpret_cast<const char *>(&header), sizeof(header));
  }
  return fd;
}

// Opens the sidecar for appending; a new or empty file gets its header.
bool SidecarWriter::open() {
  if (fd_ < 0)
    fd_ = openSidecarForAppend(path_, magic_, version_);
  return fd_ >= 0;
}

void SidecarWriter::writeStaged() {
  if (staged_ == 0)
    return;
  if (!open() || !writeAllRaw(fd_, buffer_, staged_)) {
    if (!complained_)
      message("cannot write the %s to %s", what_, path_);
    complained_ = true;
  }
  staged_ = 0;
}

void SidecarWriter::close() {
  writeStaged();
  if (fd_ >= 0)
    rawSyscall(SYS_close, fd_);
  fd_ = -1;
}

char *SidecarWriter::stageChunk(uint32_t type, uint64_t run, size_t payload) {
  size_t total = sizeof(sidecar_format::ChunkHeader) + payload;
  if (total > capacity_)
    return nullptr;
  if (staged_ + total > capacity_)
    writeStaged();
  sidecar_format::ChunkHeader header;
  header.type = type;
  header.size = uint32_t(payload);
  header.run = run;
  memcpy(buffer_ + staged_, &header, sizeof(header));
  char *at = buffer_ + staged_ + sizeof(header);
  staged_ += total;
  return at;
}

} // namespace causal::rt
