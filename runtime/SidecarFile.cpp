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

namespace {

void writeHeader(int fd, const char (&magic)[8], uint32_t version) {
  sidecar_format::FileHeader header;
  memcpy(header.magic, magic, sizeof(header.magic));
  header.version = version;
  header.header_size = sizeof(header);
  writeAllRaw(fd, reinterpret_cast<const char *>(&header), sizeof(header));
}

} // namespace

int createSidecar(const char *path, const char (&magic)[8], uint32_t version) {
  int fd = rawOpen(path, O_WRONLY | O_CREAT | O_TRUNC);
  if (fd >= 0)
    writeHeader(fd, magic, version);
  return fd;
}

bool renameRaw(const char *from, const char *to) {
#ifdef SYS_renameat2
  return rawSyscall(SYS_renameat2, AT_FDCWD, long(from), AT_FDCWD, long(to), 0) == 0;
#else
  return rawSyscall(SYS_renameat, AT_FDCWD, long(from), AT_FDCWD, long(to)) == 0;
#endif
}

bool unlinkRaw(const char *path) { return rawSyscall(SYS_unlinkat, AT_FDCWD, long(path), 0) == 0; }

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
  if (fresh)
    writeHeader(fd, magic, version);
  return fd;
}

// Opens the sidecar for appending; a new or empty file gets its header.
// Replacing, creates the temporary file.
bool SidecarWriter::open() {
  if (fd_ < 0)
    fd_ = temp_ ? createSidecar(temp_, magic_, version_)
                : openSidecarForAppend(path_, magic_, version_);
  return fd_ >= 0;
}

void SidecarWriter::writeStaged() {
  if (staged_ == 0)
    return;
  if (!open() || !writeAllRaw(fd_, buffer_, staged_)) {
    if (!complained_)
      message("cannot write the %s to %s", what_, temp_ ? temp_ : path_);
    complained_ = true;
    failed_ = true;
  }
  staged_ = 0;
}

bool SidecarWriter::close() {
  writeStaged();
  bool opened = fd_ >= 0;
  if (opened)
    rawSyscall(SYS_close, fd_);
  fd_ = -1;
  bool ok = !failed_;
  if (temp_ && opened) {
    if (ok && !renameRaw(temp_, target_)) {
      ok = false;
      if (!complained_)
        message("cannot write the %s to %s", what_, target_);
      complained_ = true;
    }
    if (!ok)
      unlinkRaw(temp_);
  }
  temp_ = target_ = nullptr;
  failed_ = false;
  return ok;
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
