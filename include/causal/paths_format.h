//===- causal/paths_format.h - The paths sidecar, byte by byte ---*- C++ -*-===//
//
// Part of the contract between the runtime (the writer, `causal run --paths`)
// and the profile library (the reader, `causal paths report`, `causal report
// --html`): the layout of PROFILE.paths, the binary file of the calling
// contexts of chosen functions (abi.h, "Call paths") written next to the
// profile. Every record layout is here and nowhere else; docs/paths.md
// describes the same in prose. C++17, header only, no library: the runtime
// includes it.
//
// The file has the shape of the waits sidecar (causal/waits_format.h): a
// FileHeader, then chunks, each a ChunkHeader and `size` bytes of payload.
// Several runs and processes append to one file: each process writes whole
// chunks with single write(2) calls on an O_APPEND descriptor, and every chunk
// names the run (RunId, as in the waits sidecar) it belongs to. A reader skips
// chunks of a type it does not know, and stops with a clear error at a
// truncated chunk.
//
// A run's chunks: RunBegin, then String, Function and Path chunks (ids
// defined before the records that use them), then RunEnd. The runtime merges
// the threads of a process: one Path record per distinct path. A process that
// writes its profile in parts (the periodic flush, live control) writes its
// run whole at each part, totals since the run began, into a part file of its
// own, PROFILE.paths.part-RUN (RUN: the RunId in hex), which each part
// replaces (written as PART.tmp, then renamed); the process's end appends the
// run to PROFILE.paths and removes the part file. A reader takes a run from
// PROFILE.paths when its write there is whole (it has its RunEnd), else from
// its part file: a run still going, or a process killed (SIGKILL). Per run it
// keeps the chunks after the last RunBegin of that run (files of older
// runtimes appended every part to PROFILE.paths).
//
// All integers are little-endian, fields naturally aligned, no padding other
// than the explicit `reserved` fields (static_asserts below keep it so).
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_PATHS_FORMAT_H
#define CAUSAL_PATHS_FORMAT_H

#include "causal/sidecar_format.h"

#include <stdint.h>

namespace causal::paths_format {

/// "CAUSALP" and a NUL.
inline constexpr char kMagic[8] = {'C', 'A', 'U', 'S', 'A', 'L', 'P', '\0'};
/// Bumped with every change to a layout below; a reader refuses newer majors.
inline constexpr uint32_t kVersion = 2;
/// The sidecar's name: the profile's name with this appended.
inline constexpr const char *kSuffix = ".paths";
/// A run's part file: the sidecar's name, this, and the RunId in hex.
inline constexpr const char *kPartInfix = ".part-";

using FileHeader = sidecar_format::FileHeader; // causal/sidecar_format.h

enum class ChunkType : uint32_t {
  RunBegin = 1, // once per process run and write, before its other chunks
  String = 2,   // a text id and its bytes
  Function = 3, // a chosen function
  Path = 4,     // one calling context of a chosen function and its metrics
  RunEnd = 5,   // totals; absent if the process died before writing it
};

using ChunkHeader = sidecar_format::ChunkHeader;

/// RunBegin::flags.
enum RunFlags : uint32_t {
  /// cpu_ns of Path records was measured with the thread CPU clock at each
  /// outermost entry and exit (`--paths-cpu-clock`). Without it cpu_ns is 0
  /// and a reader estimates CPU time as samples x sample_period_ns.
  kCpuClock = 1,
};

struct RunBegin {
  uint64_t start_ns;    // CLOCK_MONOTONIC at start-up
  uint64_t realtime_ns; // CLOCK_REALTIME at the same moment
  uint32_t pid;
  uint32_t flags;            // RunFlags
  uint64_t sample_period_ns; // CPU time per sample (the sampler's period)
  uint32_t program_name;     // String id: the executable's path
  // How a path's times were taken: each thread timed every call of the path
  // up to its 64th (CAUSAL_PATHS_EXACT_TIMED_CALLS), then one call in
  // time_one_in, drawn at random (--paths-time-one-in), and counted the
  // later calls' times as their number times the mean of those timed.
  // cpu_ns, and wall_ns less blocked_ns, are then unbiased estimates;
  // blocked_ns (from the blocking hooks' own clock reads), calls,
  // recursive_calls and samples count every call. 0 (runtimes before it,
  // where this was reserved) or 1: every call timed.
  uint32_t time_one_in;
  // Version 2. How often the stack was walked (--paths-walk-one-in): 1,
  // at every entry; K > 1, at each of a function's first 64 entries in a
  // thread (CAUSAL_PATHS_EXACT_WALKS), then at one entry in K on average.
  // Each walked entry stands for the entries of its function in its thread
  // since the last walked one (and the last for those after it), so a
  // function's calls summed over its paths are exact, and each path's
  // calls, recursive_calls, times, blocked_ns and samples are unbiased
  // estimates. Every walked entry is timed then.
  // 0: auto, the mean gap chosen per thread and function from how often it
  // is entered (CAUSAL_PATHS_WALK_BUDGET_PERMILLE).
  uint32_t walk_one_in;
  // The largest mean gap any thread used for any function (1: every entry
  // was walked: the paths are exact).
  uint32_t walk_gap_max;
};
/// Version 1's RunBegin: the fields up to time_one_in.
inline constexpr uint32_t kRunBeginV1Size = 40;

/// String payload: uint32_t id, uint32_t length, then `length` bytes (no NUL).
/// Id 0 is "no text" and never defined.
using StringHead = sidecar_format::StringHead;

/// A chosen function the program registered (enabled or not).
struct Function {
  uint32_t id;      // the runtime's id (causal_path_fn::id)
  uint32_t symbol;  // String id: linkage name
  uint32_t name;    // String id: demangled name
  uint32_t enabled; // 1 if paths were collected for it at any time of the run
};

/// One frame of a path.
struct Frame {
  uint32_t function; // String id: the function whose code the frame is in
                     // (0: unknown, code outside instrumented images)
  uint32_t location; // String id: "FILE:LINE" of the call (of the entry, for
                     // the chosen function's own frame), or "IMAGE+0xOFFSET"
                     // when the address has no line (0: unknown)
};

/// Path::flags.
enum PathFlags : uint32_t {
  /// The walk stopped before the stack's base (depth limit, a frame without
  /// a frame pointer that the fallback unwinder could not step either): the
  /// outermost frames are missing.
  kPathTruncated = 1,
};

/// Path payload: a PathHead, then `depth` Frame records, outermost first
/// (frames[depth - 1] is the chosen function itself).
struct PathHead {
  uint32_t id;              // unique in the run
  uint32_t function;        // Function::id of the chosen function
  uint32_t depth;           // frames that follow (>= 1)
  uint32_t flags;           // PathFlags
  uint64_t calls;           // outermost entries of the function on this path
  uint64_t recursive_calls; // entries while it was already active in the thread
                            // (not counted in calls; their time is the outer entry's)
  uint64_t cpu_ns;          // inclusive CPU time (RunFlags::kCpuClock), else 0
  uint64_t wall_ns;         // inclusive wall time, entry to exit, less the pauses
                            // that paid experiments' delays (and cpu_ns less the CPU
                            // spun in them)
  uint64_t blocked_ns;      // of which in the runtime's blocking hooks
  uint64_t samples;         // the sampler's samples of the thread between entry and exit
  uint64_t threads;         // distinct threads that took this path
};

struct RunEnd {
  uint64_t end_ns;          // CLOCK_MONOTONIC
  uint64_t paths;           // Path records written
  uint64_t dropped_entries; // entries not recorded: a thread's table or active stack full
  uint64_t truncated_walks; // walks that stopped early (kPathTruncated)
};

static_assert(sizeof(RunBegin) == 48 && kRunBeginV1Size == 40, "layout");
static_assert(sizeof(Function) == 16, "layout");
static_assert(sizeof(Frame) == 8, "layout");
static_assert(sizeof(PathHead) == 72, "layout");
static_assert(sizeof(RunEnd) == 32, "layout");

} // namespace causal::paths_format

#endif
