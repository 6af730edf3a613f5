//===- runtime/SidecarFile.h - Appending chunks to a sidecar file ---------===//
//
// What the writers of the binary sidecars (Waits.cpp: PROFILE.waits;
// Paths.cpp: PROFILE.paths) do the same way: open the file for appending
// whole chunks, with the framing's header (causal/sidecar_format.h) first in a
// new or empty file, and write with raw system calls (the program's open and
// write may be hooked, --waits).
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

/// Writes all of |data|, retrying after EINTR. False on an error or a short
/// write that makes no progress.
bool writeAllRaw(int fd, const char *data, size_t size);

} // namespace causal::rt

#endif // CAUSAL_RUNTIME_SIDECARFILE_H
