//===- runtime/WakerTable.h - The recent waking calls on each object ------===//
//
// For `--waits` (runtime/Waits.cpp): a thread about to wake others (unlock,
// signal, broadcast, post, barrier arrival, thread exit, a write to a pipe)
// records itself against the object; a thread whose wait on that object
// returns reads who it was. Each object keeps its last kWakeHistory waking
// calls, oldest first, so that a waiter can take either the last wake before
// it returned (a lock: whoever released it last) or the first wake after its
// wait began (a condition: the signal or broadcast that ended the wait, not a
// later broadcast that found it already woken). A SeqlockTable: fixed size,
// lock-free, async-signal-safe; two objects that share a slot overwrite each
// other, and the object that takes a slot over from another starts a history
// with its earlier wakes unknown.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_RUNTIME_WAKERTABLE_H
#define CAUSAL_RUNTIME_WAKERTABLE_H

#include "SeqlockTable.h"

#include <stdint.h>

namespace causal::rt {

/// A waking call: who (tid), where (return address of the call) and when.
struct WakeRecord {
  uint64_t object = 0;
  uint64_t pc = 0;
  uint64_t time_ns = 0;
  uint32_t tid = 0;
};

/// The waking calls kept per object.
inline constexpr uint32_t kWakeHistory = 4;

/// One object's recent waking calls.
struct WakeHistory {
  struct Wake {
    uint64_t pc;
    uint64_t time_ns;
    uint32_t tid;
    uint32_t unused;
  };
  uint64_t count;   // wakes recorded since the object took the slot
  uint64_t lost_ns; // the latest time of a wake no longer kept (0: none)
  Wake wakes[kWakeHistory];
};

template <uint32_t Slots> class WakerTable {
public:
  /// Records |record| as the latest waking call on its object. False when
  /// the slot was being written by another call (nothing recorded).
  bool record(const WakeRecord &record) {
    return table_.update(record.object, [&](WakeHistory &history, SlotHeld held) {
      if (held == SlotHeld::OtherKey) // its earlier wakes may have been overwritten
        history.lost_ns = record.time_ns ? record.time_ns - 1 : 0;
      WakeHistory::Wake &slot = history.wakes[history.count % kWakeHistory];
      if (history.count >= kWakeHistory)
        history.lost_ns = slot.time_ns;
      slot.pc = record.pc;
      slot.time_ns = record.time_ns;
      slot.tid = record.tid;
      slot.unused = 0;
      ++history.count;
    });
  }

  /// The last waking call recorded on |object| (a wait that returns: whoever
  /// woke it last), unless it was |self|'s (a thread is never its own waker).
  bool lookupLast(uint64_t object, uint32_t self, WakeRecord *out) const {
    WakeHistory history;
    if (!table_.lookup(object, &history) || history.count == 0)
      return false;
    const WakeHistory::Wake &last = history.wakes[(history.count - 1) % kWakeHistory];
    if (last.tid == self)
      return false;
    fill(object, last, out);
    return true;
  }

  /// The first waking call recorded on |object| at or after |since_ns| (the
  /// one that ended a wait begun then), if it is still kept: false when a
  /// wake that may have been it is no longer kept, or when it is |self|'s.
  bool lookupFirstSince(uint64_t object, uint64_t since_ns, uint32_t self, WakeRecord *out) const {
    WakeHistory history;
    if (!table_.lookup(object, &history) || history.count == 0 || history.lost_ns >= since_ns)
      return false;
    uint64_t kept = history.count < kWakeHistory ? history.count : kWakeHistory;
    for (uint64_t i = history.count - kept; i < history.count; ++i) {
      const WakeHistory::Wake &wake = history.wakes[i % kWakeHistory];
      if (wake.time_ns < since_ns)
        continue;
      if (wake.tid == self)
        return false;
      fill(object, wake, out);
      return true;
    }
    return false;
  }

  /// Forgets every record (fork child: the wakers were the parent's threads).
  void clear() { table_.clear(); }

  static uint32_t indexOf(uint64_t object) {
    return SeqlockTable<WakeHistory, Slots>::indexOf(object);
  }

private:
  static void fill(uint64_t object, const WakeHistory::Wake &wake, WakeRecord *out) {
    out->object = object;
    out->pc = wake.pc;
    out->time_ns = wake.time_ns;
    out->tid = wake.tid;
  }
  SeqlockTable<WakeHistory, Slots> table_;
};

} // namespace causal::rt

#endif // CAUSAL_RUNTIME_WAKERTABLE_H
