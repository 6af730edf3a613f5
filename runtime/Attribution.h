//===- runtime/Attribution.h - Which program line a sample is charged to --===//
//
// Every sample is a signal to the sampled thread itself (perf_event and the
// timer alike), taken in its handler from the interrupted registers
// (ucontext) over the thread's live stack. It is charged to the first
// instrumented frame, innermost first:
//   1. the interrupted IP itself;
//   2. otherwise the callers found by unwinding with libunwind through
//      remote accessors (registers from the ucontext, memory from the live
//      stack, at most |stack_bytes| above the stack pointer, unwind info
//      from the local address space). This finds the caller of a frameless
//      leaf (libc), which a frame-pointer chain skips;
//   3. otherwise the frame-pointer chain from the interrupted RBP.
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
  /// Bytes of the interrupted stack above its stack pointer that libunwind
  /// may read (CAUSAL_STACK_COPY_BYTES); 0: no libunwind for samples, the
  /// frame-pointer chain only.
  uint32_t stack_bytes = 2048;
  /// False: do not load libunwind (initUnwinding only takes the setup).
  bool load_unwinder = true;
};

/// Loads libunwind (dlopen, RTLD_LOCAL), creates the remote address space
/// and runs libunwind's initialization (mallocs). Call once before the
/// first sample. Returns false, with |*problem| set, if unavailable; then
/// only the sampled IP and the frame-pointer chain are used.
bool initUnwinding(const AttributionSetup &setup, const char **problem);

/// pthread_atfork prepare / parent+child: keeps fork from happening while a
/// thread is inside libunwind (holding its internal mutexes). beginFork
/// returns false if it gave up waiting (waitForReaders).
bool beginFork();
void endFork();

/// Drops cached unwind rules (after code was unloaded).
void flushUnwindCache();

/// Signal-safe. Decides where the sample that interrupted the calling thread
/// goes; fills |out| for Line. |ucontext| is the handler's third argument.
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
