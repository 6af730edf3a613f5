//===- runtime/FastClock.cpp - CLOCK_MONOTONIC from the TSC ---------------===//
//
// The clock of FastClock.h. The anchor lives in two slots, each a seqlock of
// its own, and g_active names the one readers use: a writer (one at a time,
// g_writer) fills the other slot and then makes it active, so a reader
// never finds the active slot half-written, even in a signal handler that
// interrupted the writer; a reader whose slot changed under it reads again.
//
//===----------------------------------------------------------------------===//

#include "FastClock.h"

#include "Support.h"

#include "causal/tunables.h"

#include <atomic>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <x86intrin.h>
#define CAUSAL_HAVE_TSC 1
#else
#define CAUSAL_HAVE_TSC 0
#endif

namespace causal::rt {

namespace {

// ns = ns0 + (tsc - tsc0) * mult >> kShift for one period after the
// anchor; beyond, at the true rate |rate| (a steered rate makes up a drift
// in one period: kept longer, by an anchor that comes late, it would turn
// the drift the other way). With 32 bits of fraction a tick of 0.2-1 ns is
// exact to 1e-9 relative; the products are 128 bits wide, so no delta
// overflows.
constexpr unsigned kShift = 32;

enum State : int { kUninitialized, kInitializing, kTsc, kFallback };

struct Slot {
  std::atomic<uint32_t> seq{0}; // odd while a writer fills the slot
  std::atomic<uint64_t> tsc0{0};
  std::atomic<uint64_t> ns0{0};
  std::atomic<uint64_t> mult{0};
  std::atomic<uint64_t> rate{0};
};

struct Anchor {
  uint64_t tsc0, ns0, mult, rate;
};

std::atomic<int> g_state{kUninitialized};
std::atomic<uint32_t> g_writer{0}; // 1 while a thread initializes or re-anchors
std::atomic<uint32_t> g_active{0}; // the slot readers use
Slot g_slots[2];
std::atomic<uint64_t> g_period_ticks{~0ull}; // CAUSAL_FAST_CLOCK_ANCHOR_NS in ticks
std::atomic<uint64_t> g_anchors{0}, g_steps{0};
bool g_force_fallback = false; // tests

// The writer's own state (under g_writer): the calibration's base pair, from
// which the TSC's true rate is measured over an ever longer interval.
uint64_t g_base_tsc = 0, g_base_ns = 0;
uint64_t g_true_mult = 0;

#if CAUSAL_HAVE_TSC
// The readers' TSC read: rdtsc alone, 12 ns on these VMs. Ordered (lfence
// first, as the vDSO does) it takes 25 ns, which would leave little of the
// gain over clock_gettime (33 ns). Readers read it before the anchor, so
// that its order with the anchor's loads does not matter: a TSC value older
// than the anchor it is evaluated with is read again (fastMonotonicNs).
// Consecutive rdtsc of a thread execute in order (no inputs: each issues
// as soon as it is dispatched).
inline uint64_t readTsc() { return __rdtsc(); }
// The writer's: lfence keeps it after everything before it, so that a pair
// of reads around clock_gettime brackets it.
inline uint64_t readTscOrdered() {
  _mm_lfence();
  return __rdtsc();
}
#else
inline uint64_t readTsc() { return 0; }
inline uint64_t readTscOrdered() { return 0; }
#endif

inline uint64_t evaluate(const Anchor &a, uint64_t tsc, uint64_t period_ticks) {
  if (tsc < a.tsc0)
    return a.ns0 - uint64_t((unsigned __int128)(a.tsc0 - tsc) * a.mult >> kShift);
  uint64_t ticks = tsc - a.tsc0;
  if (__builtin_expect(ticks <= period_ticks, 1))
    return a.ns0 + uint64_t((unsigned __int128)ticks * a.mult >> kShift);
  return a.ns0 + uint64_t((unsigned __int128)period_ticks * a.mult >> kShift) +
         uint64_t((unsigned __int128)(ticks - period_ticks) * a.rate >> kShift);
}

// A TSC value and the CLOCK_MONOTONIC time at it: the TSC read on both sides
// of clock_gettime, the narrowest of three brackets, its middle.
struct Pair {
  uint64_t tsc, ns;
};
Pair samplePair() {
  Pair best = {0, 0};
  uint64_t best_width = ~0ull;
  for (int i = 0; i < 3; ++i) {
    uint64_t before = readTscOrdered();
    uint64_t ns = monotonicNs();
    uint64_t after = readTscOrdered();
    if (after - before < best_width) {
      best_width = after - before;
      best = {before + (after - before) / 2, ns};
    }
  }
  return best;
}

// mult for |ns| nanoseconds in |ticks| ticks.
uint64_t multOf(uint64_t ns, uint64_t ticks) {
  return uint64_t(((unsigned __int128)ns << kShift) / ticks);
}

Anchor activeAnchor() { // the writer's view: nobody else changes the slots
  const Slot &slot = g_slots[g_active.load(std::memory_order_relaxed)];
  return {slot.tsc0.load(std::memory_order_relaxed), slot.ns0.load(std::memory_order_relaxed),
          slot.mult.load(std::memory_order_relaxed), slot.rate.load(std::memory_order_relaxed)};
}

void publish(const Anchor &anchor) {
  uint32_t index = g_active.load(std::memory_order_relaxed) ^ 1;
  Slot &slot = g_slots[index];
  uint32_t seq = slot.seq.load(std::memory_order_relaxed) | 1; // odd (a stale odd stays odd)
  slot.seq.store(seq, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  slot.tsc0.store(anchor.tsc0, std::memory_order_relaxed);
  slot.ns0.store(anchor.ns0, std::memory_order_relaxed);
  slot.mult.store(anchor.mult, std::memory_order_relaxed);
  slot.rate.store(anchor.rate, std::memory_order_relaxed);
  slot.seq.store(seq + 1, std::memory_order_release);
  g_active.store(index, std::memory_order_release);
  g_anchors.fetch_add(1, std::memory_order_relaxed);
}

// Re-anchors (the caller holds g_writer). The drift is clock_gettime minus
// this clock at one pair: the true rate (over the whole calibration) is
// steered to make it up within the next period, by at most
// CAUSAL_FAST_CLOCK_MAX_STEER_PPM; the new anchor continues the old one at
// its own TSC value, read just before it is published, so the clock neither
// jumps nor goes back. A drift beyond CAUSAL_FAST_CLOCK_STEP_NS (the TSC or
// the clock jumped: a VM paused or migrated) steps to clock_gettime and
// starts the calibration again from there.
void reanchor() {
  Anchor current = activeAnchor();
  uint64_t period = g_period_ticks.load(std::memory_order_relaxed);
  Pair pair = samplePair();
  int64_t drift = int64_t(pair.ns - evaluate(current, pair.tsc, period));
  uint64_t magnitude = drift < 0 ? uint64_t(-drift) : uint64_t(drift);
  if (magnitude > CAUSAL_FAST_CLOCK_STEP_NS || pair.tsc <= g_base_tsc) {
    g_steps.fetch_add(1, std::memory_order_relaxed);
    g_base_tsc = pair.tsc;
    g_base_ns = pair.ns;
    publish({pair.tsc, pair.ns, g_true_mult, g_true_mult});
    return;
  }
  if (pair.ns > g_base_ns)
    g_true_mult = multOf(pair.ns - g_base_ns, pair.tsc - g_base_tsc);
  // steer = drift / period, within +-MAX_STEER (ppm).
  __int128 limit = (__int128)g_true_mult * CAUSAL_FAST_CLOCK_MAX_STEER_PPM / 1000000;
  __int128 steer = (__int128)g_true_mult * drift / int64_t(CAUSAL_FAST_CLOCK_ANCHOR_NS);
  if (steer > limit)
    steer = limit;
  if (steer < -limit)
    steer = -limit;
  uint64_t mult = uint64_t((__int128)g_true_mult + steer);
  uint64_t tsc = readTscOrdered();
  publish({tsc, evaluate(current, tsc, period), mult, g_true_mult});
}

bool writeFlagTaken() { return g_writer.exchange(1, std::memory_order_acquire) == 0; }
void releaseWriteFlag() { g_writer.store(0, std::memory_order_release); }

#if CAUSAL_HAVE_TSC
// The TSC runs at a constant rate through frequency changes and idle states:
// the CPU says so (invariant TSC), or the kernel keeps time with it (in a VM
// the CPU often hides the flag; kvm-clock and Hyper-V's page are the TSC
// scaled by the hypervisor, which exposes them only when it is stable).
bool tscInvariant() {
  unsigned a, b, c, d;
  if (__get_cpuid_max(0x80000000u, nullptr) >= 0x80000007u &&
      __get_cpuid(0x80000007u, &a, &b, &c, &d) && (d & (1u << 8)))
    return true;
  char source[64];
  if (!readSmallFile("/sys/devices/system/clocksource/clocksource0/current_clocksource", source,
                     sizeof(source)))
    return false;
  source[strcspn(source, "\n")] = 0;
  return strcmp(source, "tsc") == 0 || strcmp(source, "kvm-clock") == 0 ||
         strcmp(source, "hyperv_clocksource_tsc_page") == 0;
}

// Whether 64 TSC reads take less time than 64 clock_gettime calls (best of
// three tries each): a hypervisor may trap rdtsc.
bool tscCheaper() {
  uint64_t tsc_best = ~0ull, clock_best = ~0ull;
  for (int attempt = 0; attempt < 3; ++attempt) {
    uint64_t sink = 0;
    uint64_t t0 = monotonicNs();
    for (int i = 0; i < 64; ++i)
      sink += readTsc();
    uint64_t t1 = monotonicNs();
    for (int i = 0; i < 64; ++i)
      sink += monotonicNs();
    uint64_t t2 = monotonicNs();
    __asm__ volatile("" ::"r"(sink));
    if (t1 - t0 < tsc_best)
      tsc_best = t1 - t0;
    if (t2 - t1 < clock_best)
      clock_best = t2 - t1;
  }
  return tsc_best < clock_best;
}
#endif

// The caller holds g_writer and moved g_state to kInitializing.
int initialize() {
#if CAUSAL_HAVE_TSC
  if (g_force_fallback || !tscInvariant() || !tscCheaper())
    return kFallback;
  Pair first = samplePair();
  uint64_t until = first.ns + CAUSAL_FAST_CLOCK_CALIBRATION_NS;
  for (uint64_t now = monotonicNs(); now < until; now = monotonicNs())
    rawSleepNs(until - now);
  Pair second = samplePair();
  if (second.tsc <= first.tsc || second.ns <= first.ns)
    return kFallback;
  g_base_tsc = first.tsc;
  g_base_ns = first.ns;
  g_true_mult = multOf(second.ns - first.ns, second.tsc - first.tsc);
  if (g_true_mult == 0)
    return kFallback;
  g_period_ticks.store(
      uint64_t(((unsigned __int128)CAUSAL_FAST_CLOCK_ANCHOR_NS << kShift) / g_true_mult),
      std::memory_order_relaxed);
  publish({second.tsc, second.ns, g_true_mult, g_true_mult});
  return kTsc;
#else
  return kFallback;
#endif
}

// Initializes if nobody has; false while another thread does (or this one,
// interrupted by a signal).
bool ensureInitialized() {
  int state = g_state.load(std::memory_order_acquire);
  if (state == kUninitialized) {
    if (!writeFlagTaken())
      return false;
    int expected = kUninitialized;
    if (g_state.compare_exchange_strong(expected, kInitializing, std::memory_order_acq_rel))
      g_state.store(initialize(), std::memory_order_release);
    releaseWriteFlag();
    state = g_state.load(std::memory_order_acquire);
  }
  return state == kTsc || state == kFallback;
}

} // namespace

uint64_t fastMonotonicNs() {
  if (__builtin_expect(g_state.load(std::memory_order_acquire) != kTsc, 0)) {
    if (!ensureInitialized() || g_state.load(std::memory_order_acquire) != kTsc)
      return monotonicNs();
  }
  for (int older = 0;;) {
    uint64_t tsc = readTsc();
    uint32_t index = g_active.load(std::memory_order_acquire);
    const Slot &slot = g_slots[index];
    uint32_t seq = slot.seq.load(std::memory_order_acquire);
    if (seq & 1)
      continue; // refilled since we read g_active: the active slot is another now
    Anchor anchor = {
        slot.tsc0.load(std::memory_order_relaxed), slot.ns0.load(std::memory_order_relaxed),
        slot.mult.load(std::memory_order_relaxed), slot.rate.load(std::memory_order_relaxed)};
    std::atomic_thread_fence(std::memory_order_acquire);
    if (slot.seq.load(std::memory_order_relaxed) != seq)
      continue;
    // An anchor newer than our TSC value (we were preempted in between, or
    // another CPU's TSC is a little ahead): its rate may differ from the
    // rate of the anchor that was current at our value, so the value is
    // read again. Twice at most: TSCs out of step between CPUs must not
    // make a reader spin; then the anchor is evaluated backwards.
    if (__builtin_expect(tsc < anchor.tsc0, 0) && ++older <= 2)
      continue;
    uint64_t period = g_period_ticks.load(std::memory_order_relaxed);
    if (__builtin_expect(tsc > anchor.tsc0 && tsc - anchor.tsc0 > period, 0) && writeFlagTaken()) {
      if (g_active.load(std::memory_order_relaxed) == index) // nobody re-anchored meanwhile
        reanchor();
      releaseWriteFlag();
      continue;
    }
    return evaluate(anchor, tsc, period);
  }
}

void initFastClock() { ensureInitialized(); }

void tickFastClock() {
  if (g_state.load(std::memory_order_acquire) != kTsc)
    return;
  Anchor anchor = activeAnchor();
  uint64_t tsc = readTsc();
  if (tsc > anchor.tsc0 && tsc - anchor.tsc0 > g_period_ticks.load(std::memory_order_relaxed) &&
      writeFlagTaken()) {
    // Read again under the flag: another thread may have re-anchored.
    Anchor now = activeAnchor();
    if (now.tsc0 == anchor.tsc0)
      reanchor();
    releaseWriteFlag();
  }
}

void fastClockForkChild() {
  // Only the forking thread exists: a writer was another thread (the
  // forking thread's own write cannot be under way inside fork).
  if (g_state.load(std::memory_order_relaxed) == kInitializing)
    g_state.store(kUninitialized, std::memory_order_relaxed);
  g_writer.store(0, std::memory_order_release);
}

bool fastClockUsesTsc() { return g_state.load(std::memory_order_acquire) == kTsc; }

FastClockStats fastClockStats() {
  return {g_anchors.load(std::memory_order_relaxed), g_steps.load(std::memory_order_relaxed)};
}

void resetFastClockForTesting(bool force_fallback) {
  g_force_fallback = force_fallback;
  g_state.store(kUninitialized, std::memory_order_relaxed);
  g_writer.store(0, std::memory_order_relaxed);
  g_active.store(0, std::memory_order_relaxed);
  for (Slot &slot : g_slots) {
    slot.seq.store(0, std::memory_order_relaxed);
    slot.tsc0.store(0, std::memory_order_relaxed);
    slot.ns0.store(0, std::memory_order_relaxed);
    slot.mult.store(0, std::memory_order_relaxed);
    slot.rate.store(0, std::memory_order_relaxed);
  }
  g_period_ticks.store(~0ull, std::memory_order_relaxed);
  g_anchors.store(0, std::memory_order_relaxed);
  g_steps.store(0, std::memory_order_relaxed);
  g_base_tsc = g_base_ns = g_true_mult = 0;
}

void offsetFastClockForTesting(int64_t ns) {
  while (!writeFlagTaken())
    ;
  Anchor anchor = activeAnchor();
  publish({anchor.tsc0, anchor.ns0 + uint64_t(ns), anchor.mult, anchor.rate});
  releaseWriteFlag();
}

void holdFastClockWriterForTesting(bool hold) {
  g_writer.store(hold ? 1 : 0, std::memory_order_release);
}

} // namespace causal::rt
