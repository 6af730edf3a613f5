//===- causal/sidecar_format.h - The framing every sidecar shares -*- C++ -*-===//
//
// Part of the contract between the runtime (the writer) and the profile
// library (the reader): the file header and the chunk header that the binary
// sidecars next to a profile share (PROFILE.waits, causal/waits_format.h;
// PROFILE.paths, causal/paths_format.h). Each format gives its own magic,
// version and chunk types; the framing is here once.
//
// A file: a FileHeader, then chunks, each a ChunkHeader and `size` bytes of
// payload. Several runs and processes append to one file: each process writes
// whole chunks with single write(2) calls on an O_APPEND descriptor, so chunks
// never interleave, and every chunk names the run (RunId: (pid << 32) ^ the
// low 32 bits of its start time in ns) it belongs to. A reader skips chunks of
// a type it does not know (their size says how far), and stops with a clear
// error at a truncated chunk. Integers little-endian, no implicit padding.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_SIDECAR_FORMAT_H
#define CAUSAL_SIDECAR_FORMAT_H

#include <stdint.h>

namespace causal::sidecar_format {

struct FileHeader {
  char magic[8];        // the format's, e.g. "CAUSALW\0"
  uint32_t version;     // the format's; a reader refuses newer ones
  uint32_t header_size; // sizeof(FileHeader) when written; chunks start here
};

struct ChunkHeader {
  uint32_t type; // the format's ChunkType
  uint32_t size; // payload bytes after this header
  uint64_t run;  // RunId of the chunk's run
};

/// A String chunk's payload: this head, then `length` bytes of text (no
/// NUL). It gives a text id of its run the text; id 0 is "no text" and is
/// never defined; ids are defined before the records that use them.
struct StringHead {
  uint32_t id;
  uint32_t length;
};

static_assert(sizeof(FileHeader) == 16, "layout");
static_assert(sizeof(StringHead) == 8, "layout");
static_assert(sizeof(ChunkHeader) == 16, "layout");

} // namespace causal::sidecar_format

#endif
