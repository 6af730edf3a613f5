//===- causal/paths_control.h - Live control of call paths, byte by byte -*- C++ -*-===//
//
// Part of the contract between the runtime (which serves it) and the profile
// library (tools/profile/PathsControl, the one client: `causal paths
// enable|disable|top --pid PID`): the layout of the control block through
// which a running program's call paths (abi.h, "Call paths") are enabled,
// disabled and written while it runs. Every field is here and nowhere else;
// docs/paths.md, "Live control", describes the same in prose. C++17, header
// only, no library: the runtime includes it.
//
// The block is a file of sizeof(Block) bytes, mapped shared by both sides:
// kDirectory/causal-<uid>-<pid>.paths (kDirectory missing: kFallbackDirectory),
// mode 0600, created with O_EXCL|O_NOFOLLOW by a process whose runtime
// is active and which registered at least one chosen function, removed when
// its profiling ends (exit, exec, the end of bounded profiling). A fork child
// makes its own. A process killed leaves it behind: `pid` and `start_time`
// tell a reused pid apart.
//
// One command at a time. The client holds flock(LOCK_EX) on the file while it
// asks; it writes `op` and `patterns`, then stores Command::sequence + 1 with
// release order, and only when Ack::sequence equals Command::sequence (no
// command outstanding). The runtime's profiler thread polls Command::sequence
// (one relaxed load), and, when it differs from Ack::sequence, reads the
// command (acquire), carries it out, fills the Ack's fields and stores
// Ack::sequence = Command::sequence with release order: the client reads the
// Ack's fields only after seeing its sequence (acquire). No field is written
// by both sides, and neither reads the other's fields while they are written.
//
// All integers are little-endian, fields naturally aligned, no padding other
// than the explicit `reserved` fields; the sequence and state words are
// accessed with atomic operations (lock-free 64- and 32-bit atomics).
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_PATHS_CONTROL_H
#define CAUSAL_PATHS_CONTROL_H

#include <stdint.h>

namespace causal::paths_control {

/// "CAUSALC" and a NUL.
inline constexpr char kMagic[8] = {'C', 'A', 'U', 'S', 'A', 'L', 'C', '\0'};
/// Bumped with every change to a layout below; a client refuses another.
inline constexpr uint32_t kVersion = 1;
/// Where the file is; without this directory, kFallbackDirectory. Its name:
/// kPrefix, the uid, '-', the pid, kSuffix.
inline constexpr const char *kDirectory = "/dev/shm";
inline constexpr const char *kFallbackDirectory = "/tmp";
inline constexpr const char *kPrefix = "causal-";
inline constexpr const char *kSuffix = ".paths";

/// Block::state (atomic).
enum State : uint32_t {
  kIdle = 0,    // no profiler thread polls it (not yet, or no more)
  kServing = 1, // the profiler thread polls it
  kEnded = 2,   // profiling ended: the paths are written, nothing is served
};

/// Command::op.
enum Op : uint32_t {
  kNone = 0,
  kEnable = 1,  // enable the chosen functions `patterns` names
  kDisable = 2, // disable them (an entry under way still ends with its exit)
  kFlush = 3,   // write PROFILE.paths whole now (the sidecar's path: Block::sidecar)
};

/// Ack::status.
enum Status : uint32_t {
  kOk = 0,
  kFailed = 1, // Ack::error says why
};

inline constexpr uint32_t kPatternBytes = 4096;
inline constexpr uint32_t kUnmatchedBytes = 2048;
inline constexpr uint32_t kErrorBytes = 256;
inline constexpr uint32_t kPathBytes = 4096;

/// Written by the client only.
struct Command {
  uint64_t sequence; // the client's: the previous + 1, stored last (release)
  uint32_t op;       // Op
  uint32_t reserved;
  /// NUL-terminated: comma-separated names or fnmatch globs, matched as
  /// CAUSAL_PATHS is (the symbol, the demangled name, and that name without
  /// its parameter list; commas inside (), <> or [] belong to the name);
  /// "all": every chosen function. Unused by kFlush.
  char patterns[kPatternBytes];
};

/// Written by the runtime only.
struct Ack {
  uint64_t sequence;  // = the Command::sequence carried out, stored last (release)
  uint32_t status;    // Status
  uint32_t matched;   // kEnable/kDisable: chosen functions the patterns matched
  uint32_t changed;   // of them, those whose state changed
  uint32_t functions; // chosen functions registered in the process
  uint32_t enabled;   // of them, enabled now
  uint32_t reserved;
  uint64_t flush_generation; // kFlush: bumped by each write it made (0: none yet)
  /// NUL-terminated: the patterns that matched no chosen function, one a line.
  char unmatched[kUnmatchedBytes];
  char error[kErrorBytes]; // NUL-terminated: why, with kFailed
};

struct Block {
  char magic[8];       // kMagic
  uint32_t version;    // kVersion
  uint32_t size;       // sizeof(Block)
  uint32_t pid;        // the process that serves it
  uint32_t uid;        // its real uid
  uint64_t start_time; // its start: field 22 of /proc/PID/stat (clock ticks after boot)
  uint32_t state;      // State (atomic)
  uint32_t reserved;
  char sidecar[kPathBytes]; // NUL-terminated absolute path of PROFILE.paths
  Command command;
  Ack ack;
};

static_assert(sizeof(Command) == 16 + kPatternBytes, "layout");
static_assert(sizeof(Ack) == 40 + kUnmatchedBytes + kErrorBytes, "layout");
static_assert(sizeof(Block) == 40 + kPathBytes + sizeof(Command) + sizeof(Ack), "layout");

} // namespace causal::paths_control

#endif
