//===- runtime/SeqlockTable.h - A fixed, lock-free table keyed by 64 bits -===//
//
// For --waits: the one table behind the waker table (WakerTable.h) and the
// descriptors' tables (hooks/Descriptors.cpp). Direct-mapped, fixed size,
// constant-initialized, async-signal-safe: no allocation, no lock. A slot is
// written under a sequence count (odd while written); a writer that finds
// the slot being written gives up rather than wait (it may be a signal
// handler that interrupted the other writer), and a reader that sees the
// count move finds nothing. Keys that share a slot overwrite each other: the
// reader checks the key. The value is kept as 64-bit words in relaxed
// atomics, so that a reader racing a writer reads no torn word and no
// data race exists for the sanitizers.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_RUNTIME_SEQLOCKTABLE_H
#define CAUSAL_RUNTIME_SEQLOCKTABLE_H

#include <atomic>
#include <stdint.h>
#include <string.h>
#include <type_traits>

namespace causal::rt {

/// What a slot held when a key's value was changed.
enum class SlotHeld : uint8_t {
  Nothing,  // never written (or cleared)
  OtherKey, // another key's value, now replaced
  Key,      // the key's own value
};

template <typename Value, uint32_t Slots> class SeqlockTable {
  static_assert(Slots && (Slots & (Slots - 1)) == 0, "a power of two");
  static_assert(std::is_trivially_copyable_v<Value> && sizeof(Value) % 8 == 0,
                "kept as 64-bit words");
  static constexpr size_t kWords = sizeof(Value) / 8;

public:
  /// Under the slot's sequence count, |change|(value, held) changes the value
  /// kept for |key|: |held| (a SlotHeld) says what the slot held; unless it
  /// held |key|, |value| is a zero Value. False when the slot was being
  /// written by another call (nothing changed).
  template <typename Change> bool update(uint64_t key, Change &&change) {
    Slot &slot = slots_[indexOf(key)];
    uint32_t seq = slot.seq.load(std::memory_order_relaxed);
    if ((seq & 1) || !slot.seq.compare_exchange_strong(seq, seq + 1, std::memory_order_acquire,
                                                       std::memory_order_relaxed))
      return false;
    std::atomic_thread_fence(std::memory_order_release);
    SlotHeld held = seq == 0                                          ? SlotHeld::Nothing
                    : slot.key.load(std::memory_order_relaxed) == key ? SlotHeld::Key
                                                                      : SlotHeld::OtherKey;
    Value value{};
    if (held == SlotHeld::Key)
      load(slot, &value);
    change(value, held);
    slot.key.store(key, std::memory_order_relaxed);
    uint64_t words[kWords];
    memcpy(words, &value, sizeof value);
    for (size_t i = 0; i < kWords; ++i)
      slot.words[i].store(words[i], std::memory_order_relaxed);
    slot.seq.store(seq + 2, std::memory_order_release);
    return true;
  }

  /// Replaces the value kept for |key|.
  bool put(uint64_t key, const Value &value) {
    return update(key, [&](Value &kept, SlotHeld) { kept = value; });
  }

  /// The value kept for |key|, if its slot holds it and was not being
  /// written.
  bool lookup(uint64_t key, Value *out) const {
    const Slot &slot = slots_[indexOf(key)];
    uint32_t before = slot.seq.load(std::memory_order_acquire);
    if ((before & 1) || before == 0)
      return false;
    uint64_t found = slot.key.load(std::memory_order_relaxed);
    Value value;
    load(slot, &value);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (slot.seq.load(std::memory_order_relaxed) != before || found != key)
      return false;
    *out = value;
    return true;
  }

  /// Forgets every key (fork child: the values were the parent's).
  void clear() {
    for (Slot &slot : slots_) {
      slot.seq.store(0, std::memory_order_relaxed);
      slot.key.store(0, std::memory_order_relaxed);
    }
  }

  static uint32_t indexOf(uint64_t key) {
    return uint32_t((key * 0x9e3779b97f4a7c15ull) >> 40) & (Slots - 1);
  }

private:
  struct Slot {
    std::atomic<uint32_t> seq{0};
    std::atomic<uint64_t> key{0};
    std::atomic<uint64_t> words[kWords] = {};
  };
  static void load(const Slot &slot, Value *value) {
    uint64_t words[kWords];
    for (size_t i = 0; i < kWords; ++i)
      words[i] = slot.words[i].load(std::memory_order_relaxed);
    memcpy(value, words, sizeof *value);
  }
  Slot slots_[Slots];
};

} // namespace causal::rt

#endif // CAUSAL_RUNTIME_SEQLOCKTABLE_H
