//===- runtime/SidecarFile.h - Appending chunks to a sidecar file ---------===//
//
// What the writers of the binary sidecars (Waits.cpp: PROFILE.waits;
// Paths.cpp: PROFILE.paths) do the same way: stage whole chunks in a buffer,
// open the file for appending them, with the framing's header
// (causal/sidecar_format.h) first in a new or empty file, and write with raw
// system calls (the program's open and write may be hooked, --waits).
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_RUNTIME_SIDECARFILE_H
#define CAUSAL_RUNTIME_SIDECARFILE_H

#include <stddef.h>
#include <stdint.h>

namespace causal::rt {

/// Opens |path| (O_WRONLY | O_APPEND | O_CREAT, mode 0644, close-on-exec); a
/// file this call creates, or finds empty, gets a header of |magic| and
/// |version| first. Returns the descriptor, or -1.
int openSidecarForAppend(const char *path, const char (&magic)[8], uint32_t version);

/// Creates |path| anew (O_WRONLY | O_CREAT | O_TRUNC, mode 0644,
/// close-on-exec) with a header of |magic| and |version|. Returns the
/// descriptor, or -1.
int createSidecar(const char *path, const char (&magic)[8], uint32_t version);

/// Renames |from| over |to| (both written by the runtime), and removes
/// |path|: raw system calls, async-signal-safe. False on failure.
bool renameRaw(const char *from, const char *to);
bool unlinkRaw(const char *path);

/// Writes all of |data|, retrying after EINTR. False on an error or a short
/// write that makes no progress.
bool writeAllRaw(int fd, const char *data, size_t size);

/// The chunks of one sidecar, staged in a buffer and written whole chunks at
/// a time (one write per buffer) to the file, opened for appending
/// (openSidecarForAppend) at the first write and open until close(); or,
/// after replaceInto(), to a file of their own that replaces another. It
/// allocates nothing and takes no lock: the caller maps the buffer
/// (setBuffer) and serializes the calls (its write lock). Constant-initialized:
/// a global needs no constructor.
class SidecarWriter {
public:
  /// |path| (the caller's, filled in later) is written with |magic| and
  /// |version|; a failed write says once "cannot write the |what| to |path|".
  constexpr SidecarWriter(const char *path, const char (&magic)[8], uint32_t version,
                          const char *what, size_t capacity)
      : path_(path), magic_(magic), version_(version), what_(what), capacity_(capacity) {}

  bool hasBuffer() const { return buffer_ != nullptr; }
  /// The staging buffer: |capacity| bytes (null: none).
  void setBuffer(char *buffer) { buffer_ = buffer; }

  /// Room for a chunk of |type| in |run| with |payload| bytes in the buffer
  /// (writing out what is staged if needed); null if it can never fit.
  char *stageChunk(uint32_t type, uint64_t run, size_t payload);
  /// The chunks staged from now until close() replace the file |target|
  /// instead of being appended: they go to |temp|, created anew with the
  /// header, which close() renames over |target| if every write succeeded
  /// (else removes). Both paths are the caller's, kept until close().
  void replaceInto(const char *temp, const char *target) {
    temp_ = temp;
    target_ = target;
  }
  /// Writes the staged chunks and closes the file. Returns whether every
  /// chunk staged since the last close() was written (and, replacing, the
  /// file renamed).
  bool close();
  /// Forgets the staged chunks.
  void clearStaged() { staged_ = 0; }
  /// Says nothing when a write fails (a signal handler writes).
  void keepQuiet() { complained_ = true; }
  /// Forgets the staged chunks and the descriptor, without closing it (a new
  /// run; in a fork child, the parent's).
  void restart() {
    staged_ = 0;
    fd_ = -1;
  }

private:
  bool open();
  /// Writes the staged chunks (whole chunks, one write).
  void writeStaged();

  const char *path_;
  const char (&magic_)[8];
  uint32_t version_;
  const char *what_;
  size_t capacity_;
  char *buffer_ = nullptr;
  size_t staged_ = 0;
  int fd_ = -1; // open between the first write and close()
  bool complained_ = false;
  bool failed_ = false;        // a write since the last close() failed
  const char *temp_ = nullptr; // replaceInto()'s, until close()
  const char *target_ = nullptr;
};

} // namespace causal::rt

#endif // CAUSAL_RUNTIME_SIDECARFILE_H
