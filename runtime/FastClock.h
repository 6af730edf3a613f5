//===- runtime/FastClock.h - CLOCK_MONOTONIC from the TSC -----------------===//
//
// A cheaper CLOCK_MONOTONIC for what --waits times (runtime/Waits.cpp and the
// hooks that record episodes): clock_gettime costs about 30 ns on our VMs,
// and falls back to a system call under some clocksources; a recorded
// blocking call reads the clock twice. fastMonotonicNs() computes the same
// clock from rdtsc and an anchor (a TSC value, its CLOCK_MONOTONIC time and
// the nanoseconds per tick) calibrated against clock_gettime and re-anchored
// every CAUSAL_FAST_CLOCK_ANCHOR_NS, its rate steered by at most
// CAUSAL_FAST_CLOCK_MAX_STEER_PPM toward clock_gettime, so that it stays
// continuous and monotonic; a drift above CAUSAL_FAST_CLOCK_STEP_NS steps it
// to clock_gettime. Without a usable TSC (not invariant, per cpuid and the
// kernel's clocksource, or not cheaper to read than clock_gettime) it is
// clock_gettime(CLOCK_MONOTONIC). docs/runtime.md, "The waits clock".
//
// Readers take no lock and never wait for a writer (the anchor is published
// through a seqlock over two slots; a writer fills the one readers do not
// use): signal-safe, malloc-free.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_RUNTIME_FASTCLOCK_H
#define CAUSAL_RUNTIME_FASTCLOCK_H

#include <stdint.h>

namespace causal::rt {

/// CLOCK_MONOTONIC in nanoseconds, from the TSC when it is usable (within a
/// few microseconds of clock_gettime; see above). The first call calibrates
/// (about 1 ms) unless initFastClock() did. Signal-safe.
uint64_t fastMonotonicNs();

/// Decides whether the TSC is used and calibrates it (about 1 ms). Idempotent;
/// called at start-up when --waits is on, so that no hook pays for it.
void initFastClock();

/// Re-anchors if the anchor is older than CAUSAL_FAST_CLOCK_ANCHOR_NS (and no
/// other thread is re-anchoring). The profiler thread's poll step calls it.
void tickFastClock();

/// In a forked child: a writer of the parent (another thread) no longer
/// exists; its flag is cleared.
void fastClockForkChild();

/// Whether the TSC is used (false before initialization and in the fallback).
bool fastClockUsesTsc();

/// Counts since initialization, for tests and diagnostics: re-anchors
/// (steered or stepped) and steps alone.
struct FastClockStats {
  uint64_t anchors;
  uint64_t steps;
};
FastClockStats fastClockStats();

/// Tests only: start again from the uninitialized state; with
/// |force_fallback| the clock is clock_gettime whatever the TSC.
void resetFastClockForTesting(bool force_fallback);
/// Tests only: take (or release) the writer's flag as a re-anchoring thread
/// would, e.g. to fork while "another thread" re-anchors.
void holdFastClockWriterForTesting(bool hold);
/// Tests only: moves the clock by |ns| (a new anchor |ns| away from the
/// current one), as a drift of that size would, for the re-anchoring to
/// make up.
void offsetFastClockForTesting(int64_t ns);

} // namespace causal::rt

#endif // CAUSAL_RUNTIME_FASTCLOCK_H
