//===- runtime/WakerTable.h - The last waking call on each object ---------===//
//
// For `--waits` (runtime/Waits.cpp): a thread about to wake others (unlock,
// signal, broadcast, post, barrier arrival, thread exit, a write to a pipe)
// records itself against the object; a thread whose wait on that object
// returns reads who it was. Direct-mapped, fixed size, lock-free: a slot is
// written under a sequence count (odd while written), a writer that finds the
// slot being written gives up rather than wait (it may be a signal handler
// that interrupted the other writer), and a reader that sees the count move
// finds nothing. Two objects that share a slot overwrite each other: the
// reader checks the object. Constant-initialized; async-signal-safe.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_RUNTIME_WAKERTABLE_H
#define CAUSAL_RUNTIME_WAKERTABLE_H

#include <atomic>
#include <stdint.h>

namespace causal::rt {

/// A waking call: who (tid), where (return address of the call) and when.
struct WakeRecord {
  uint64_t object = 0;
  uint64_t pc = 0;
  uint64_t time_ns = 0;
  uint32_t tid = 0;
};

template <uint32_t Slots> class WakerTable {
  static_assert(Slots && (Slots & (Slots - 1)) == 0, "a power of two");

public:
  /// Records |record| as the last waking call on its object. False when the
  /// slot was being written by another call (nothing recorded).
  bool record(const WakeRecord &record) {
    Slot &slot = slots_[indexOf(record.object)];
    uint32_t seq = slot.seq.load(std::memory_order_relaxed);
    if ((seq & 1) || !slot.seq.compare_exchange_strong(seq, seq + 1, std::memory_order_acquire,
                                                       std::memory_order_relaxed))
      return false;
    std::atomic_thread_fence(std::memory_order_release);
    slot.object.store(record.object, std::memory_order_relaxed);
    slot.pc.store(record.pc, std::memory_order_relaxed);
    slot.time_ns.store(record.time_ns, std::memory_order_relaxed);
    slot.tid.store(record.tid, std::memory_order_relaxed);
    slot.seq.store(seq + 2, std::memory_order_release);
    return true;
  }

  /// The last waking call recorded on |object|, if its slot still holds it
  /// and was not being written.
  bool lookup(uint64_t object, WakeRecord *out) const {
    const Slot &slot = slots_[indexOf(object)];
    uint32_t before = slot.seq.load(std::memory_order_acquire);
    if (before & 1)
      return false;
    WakeRecord found;
    found.object = slot.object.load(std::memory_order_relaxed);
    found.pc = slot.pc.load(std::memory_order_relaxed);
    found.time_ns = slot.time_ns.load(std::memory_order_relaxed);
    found.tid = slot.tid.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (slot.seq.load(std::memory_order_relaxed) != before || before == 0 || found.object != object)
      return false;
    *out = found;
    return true;
  }

  /// Forgets every record (fork child: the wakers were the parent's threads).
  void clear() {
    for (Slot &slot : slots_) {
      slot.seq.store(0, std::memory_order_relaxed);
      slot.object.store(0, std::memory_order_relaxed);
    }
  }

  static uint32_t indexOf(uint64_t object) {
    return uint32_t((object * 0x9e3779b97f4a7c15ull) >> 40) & (Slots - 1);
  }

private:
  struct Slot {
    std::atomic<uint32_t> seq{0};
    std::atomic<uint32_t> tid{0};
    std::atomic<uint64_t> object{0};
    std::atomic<uint64_t> pc{0};
    std::atomic<uint64_t> time_ns{0};
  };
  Slot slots_[Slots];
};

} // namespace causal::rt

#endif // CAUSAL_RUNTIME_WAKERTABLE_H
