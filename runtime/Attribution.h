//===- runtime/Attribution.h - Which program line a sample is charged to --===//
//
// A sample is charged to the first instrumented frame, innermost first:
//   1. the sampled IP itself;
//   2. otherwise the callers found by unwinding with libunwind: for perf
//      samples, the copied user stack is unwound with remote accessors
//      (registers from the sample, memory from the copy, unwind info from
//      the local address space); for timer ticks, the signal frame is
//      unwound locally. This finds the caller of a frameless leaf (libc),
//      which the kernel's frame-pointer chain skips;
//   3. otherwise (perf only) the kernel's user callchain.
// Return addresses are looked up at address - 1 (the call instruction).
// A frame in the runtime's own code met before any instrumented frame makes
// the sample profiler overhead (dropped); the runtime's thread-entry call
// ends the walk (the user's thread function was not instrumented): outside.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_RUNTIME_ATTRIBUTION_H
#define CAUSAL_RUNTIME_ATTRIBUTION_H

#include "ModuleRegistry.h"
#include "Support.h"

#include <stdint.h>

namespace causal::rt {

struct ThreadState;

enum class SampleOutcome { Line, Outside, Overhead };

/// Process-wide inputs of attribution, set once at start-up.
struct AttributionSetup {
  const ModuleRegistry *registry = nullptr;
  AddressRange runtime_code; ///< samples whose frames reach here first: overhead
  AddressRange thread_entry; ///< the call of user thread functions: stop, outside
  /// The hooks' code (runtime/hooks/): transparent, so a sample in
  /// libc's mutex code is charged to the program line that called it, as
  /// without the wrapper.
  AddressRange forwarding_code;
  unsigned max_frames = 128;
  /// False: do not load libunwind (initUnwinding only takes the setup).
  bool load_unwinder = true;
};

/// A decoded PERF_RECORD_SAMPLE (pointers into the ring or scratch buffer).
struct PerfSample {
  uint64_t ip = 0;
  const uint64_t *callchain = nullptr;
  uint64_t callchain_size = 0;
  bool has_regs = false;
  uint64_t reg_bp = 0, reg_sp = 0, reg_ip = 0;
  const unsigned char *stack = nullptr; ///< copy of [reg_sp, reg_sp + stack_size)
  uint64_t stack_size = 0;
};

/// Loads libunwind (dlopen, RTLD_LOCAL), creates the remote address space
/// and runs libunwind's initialization (mallocs). Call once before the
/// first sample. Returns false, with |*problem| set, if unavailable; then
/// only the sampled IP and the kernel callchain are used.
bool initUnwinding(const AttributionSetup &setup, const char **problem);

/// pthread_atfork prepare / parent+child: keeps fork from happening while a
/// thread is inside libunwind (holding its internal mutexes).
void beginFork();
void endFork();

/// Drops cached unwind rules (after code was unloaded).
void flushUnwindCache();

/// Signal-safe. Decides where |sample| goes; fills |out| for Line.
SampleOutcome attributePerfSample(const PerfSample &sample, ThreadState *thread,
                                  ResolvedAddress *out);

/// Signal-safe. Same for a timer tick: |ucontext| is the handler's third
/// argument.
SampleOutcome attributeSignalContext(void *ucontext, ThreadState *thread, ResolvedAddress *out);

/// Not signal-safe (the entry of a chosen function, runtime/Paths.cpp): unwinds
/// the calling thread's own stack with libunwind from here, skips frames
/// until the one whose IP is |ip| and stack pointer |sp|, then stores the
/// return addresses of its callers, innermost first, at most |max| (|*more|:
/// frames were left). Returns how many were stored, or -1 if libunwind is
/// not loaded, a fork is under way, or that frame was not found.
int unwindCallersOf(uintptr_t ip, uintptr_t sp, uintptr_t *out, unsigned max, bool *more);

} // namespace causal::rt

#endif // CAUSAL_RUNTIME_ATTRIBUTION_H
