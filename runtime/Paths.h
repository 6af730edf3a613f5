//===- runtime/Paths.h - Call paths of chosen functions (--paths) ---------===//
//
// `causal run --paths[=NAME,...]` (CAUSAL_PATHS): the calling contexts of the
// functions chosen at build time (causal/abi.h, "Call paths of chosen
// functions"), with their calls, wall, CPU and blocked time and samples,
// written to PROFILE.paths in the layout of causal/paths_format.h
// (docs/paths.md, "Collecting paths").
//
//   * Registration (__causal_register_path_fns, from image constructors,
//     possibly before the runtime's own): each distinct symbol gets an id;
//     the descriptors CAUSAL_PATHS chooses are enabled.
//   * __causal_path_enter / __causal_path_exit: per thread, no lock, no
//     malloc. The thread's PathThread (mmap'd at its first entry, kept with
//     its ThreadState) holds the stack of active entries and an
//     open-addressing table of its paths, keyed by (function, inlined_at,
//     return addresses). The calling context is found by walking the frame
//     pointers from the entry call, finished by libunwind where the chain
//     leaves instrumented code.
//   * Blocked time: the blocking hooks add their calls' time to
//     ThreadState::path_blocked_ns while ThreadState::path_depth != 0; the
//     pauses that pay experiments' delays add theirs to path_paused_ns
//     (and the CPU spun to path_paused_cpu_ns), which entries leave out.
//   * A thread that ends merges its paths into the process's table (under a
//     spin lock) and empties its own for the next owner of its state.
//   * Writing (process end: exit, _exit, exec, a fatal or terminating
//     signal; and the profiler thread's periodic flush): the process's table
//     and every live thread's, merged, each time the whole run so far, with
//     the entries under way in every thread as if they ended then (read, not
//     changed: their threads go on). No malloc, no lock another thread may
//     hold for long, no C library formatting: a fatal signal's handler writes
//     it too (writePathsOnSignal).
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_RUNTIME_PATHS_H
#define CAUSAL_RUNTIME_PATHS_H

#include "ThreadState.h"

#include <stdint.h>

namespace causal::rt {

/// Whether any descriptor may be enabled (CAUSAL_PATHS chose something). Set
/// at start-up or at the first registration, whichever comes first.
bool pathsRequested();

/// Start-up (Runtime.cpp), after the settings: |profile_path| + ".paths" is
/// the sidecar; |cpu_clock|: --paths-cpu-clock; |time_one_in|:
/// --paths-time-one-in; |walk_one_in|: --paths-walk-one-in (after
/// setupPathContexts, which makes it 1). Enables the descriptors registered
/// before.
void setupPaths(const char *profile_path, bool cpu_clock, uint32_t time_one_in,
                uint32_t walk_one_in);

/// The calling thread ends (Threads.cpp): its active entries are closed and
/// its paths merged into the process's.
void pathsThreadEnds(ThreadState *state);

/// Fork child (Fork.cpp): the parent's paths are dropped; the entries
/// |self| had active go on, as if entered at the fork.
void pathsForkChild(ThreadState *self);

/// An image is about to be unregistered (its destructor: dlclose, or the
/// executable's at exit, which runs before the runtime writes): the frames of
/// the paths so far that are in |image|, and the inlined_at strings the pass
/// put there, are kept as text for the writer.
void pathsBeforeUnload(AddressRange image);

/// Writes PROFILE.paths: the whole run so far (|last|: the process's end:
/// RunEnd is written, the unmatched names of CAUSAL_PATHS are said, and no
/// entry is recorded afterwards).
void writePaths(bool last);

/// writePaths(true) from a fatal or terminating signal's handler
/// (ProcessEnd.cpp): async-signal-safe; says nothing; waits at most
/// CAUSAL_PART_WAIT_NS for another thread that is writing, and writes
/// nothing if the signal interrupted the writer's lock in this thread.
void writePathsOnSignal();

// ---- Calling contexts of experiments (--path, --path-experiments) ------------
//
// An experiment may select a line in a calling context: only the line's
// samples taken while their thread is inside an entry of a chosen function
// whose path matches count (Experiment.cpp, ExperimentPolicy.h packContext).
// Each path record gets a context id when it is first interned:
//   Fixed    (CAUSAL_FIXED_PATH): 1 if a caller of the chosen function, on
//            the walked frames or in its inlined_at chain, is named by the
//            glob, else 0;
//   Callers  (CAUSAL_PATH_EXPERIMENTS): the id of the immediate caller's name
//            (the function that inlined the chosen function, else the
//            function of the first walked caller), interned in a process-wide
//            table of CAUSAL_PATHS_CONTEXTS names; 0 if it has none.
// ThreadState::path_context is the innermost active entry's record's id,
// kept by the entries and exits; the sample handler reads it. The sampler
// signals every sample then (batch 1, Runtime.cpp), so a sample is handled
// while its thread is still where the sample found it.

enum class PathContextMode { None, Fixed, Callers };
/// The fixed context's id.
constexpr uint32_t kFixedPathContext = 1;

/// Start-up (Runtime.cpp), before setupPaths: the mode, and for Fixed the
/// glob (copied). A mode other than None turns collection on for every chosen
/// function when CAUSAL_PATHS chose none.
void setupPathContexts(PathContextMode mode, const char *fixed_glob);

/// The name of context |id| ("" if it has none; the glob for the fixed one).
/// Any thread; the text stays.
const char *pathContextName(uint32_t id);

/// Signal-safe (the sample handler): a sample of |weight| of a line in a
/// context (ExperimentPolicy.h packContext). The profile's `samples` records
/// then count the line in each context as well as whole, as
/// "FILE:LINE (via CALLER)": the whole-run figures of a per-caller curve
/// (phase correction, bound). Beyond CAUSAL_PATHS_CONTEXT_SAMPLES distinct
/// pairs, a pair's samples count for the whole line only.
/// |file|, |line| and |function| name the line (the line table's texts; kept
/// as copies when its image is unloaded).
void countContextSample(uint64_t line_in_context, uint64_t weight, const char *file, uint32_t line,
                        const char *function);

/// A pair's samples not yet written.
struct ContextSamples {
  const char *file, *function, *caller;
  uint32_t line;
  uint64_t count;
};
/// Signal-safe, for the profile's writer (one at a time): the next pair at or
/// after |*cursor| whose count grew since it was last taken, with its count
/// so far (a run's parts each write a changed line's whole count, the last
/// one counts: ModuleRegistry::takeCountToWrite); false when none is left.
bool takeContextSamples(uint32_t *cursor, ContextSamples *out);
/// A part of the profile was lost: the next one writes every pair's count.
void forgetContextSamplesWritten();

// ---- Live control (PathsControl.cpp, the profiler thread) ---------------------

/// Chosen functions registered so far.
uint32_t pathsFunctionCount();

/// PROFILE.paths, as the writer opens it (set at start-up).
const char *pathsSidecarPath();

struct PathsChange {
  uint32_t matched = 0;   // chosen functions the patterns matched
  uint32_t changed = 0;   // of them, those whose state changed
  uint32_t functions = 0; // chosen functions registered
  uint32_t enabled = 0;   // of them, enabled now
};

/// Enables (|enable|) or disables the chosen functions |patterns| names (as
/// CAUSAL_PATHS: comma-separated names or globs, "all"), in every image;
/// enabling sets up the collection if --paths did not. |unmatched| gets the
/// patterns that matched nothing, one a line. False with |error| when
/// nothing could be done. Entries under way end with their exits.
bool changePaths(const char *patterns, bool enable, PathsChange *out, char *unmatched,
                 size_t unmatched_size, const char **error);

/// Writes PROFILE.paths now (writePaths(false)), even with no function
/// enabled yet (its Function chunks say what there is). False with |error|
/// after the profile's end.
bool flushPathsNow(const char **error);

/// Chosen functions registered, and of them enabled now.
void pathsEnabledCounts(uint32_t *functions, uint32_t *enabled);

} // namespace causal::rt

#endif // CAUSAL_RUNTIME_PATHS_H
