//===- WakerTableTest.cpp - The recent waking calls per object (--waits) --===//

#include "WakerTable.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

namespace {

using causal::rt::WakeRecord;
using Table = causal::rt::WakerTable<64>;
constexpr uint32_t kNobody = 0; // the looking thread, in lookups where it never woke

WakeRecord wake(uint64_t object, uint32_t tid, uint64_t pc, uint64_t time) {
  WakeRecord record;
  record.object = object;
  record.tid = tid;
  record.pc = pc;
  record.time_ns = time;
  return record;
}

// Another object that falls in |object|'s slot.
uint64_t collidingWith(uint64_t object) {
  for (uint64_t other = object + 8;; other += 8)
    if (Table::indexOf(other) == Table::indexOf(object))
      return other;
}

TEST(WakerTable, UnknownObjectHasNoWaker) {
  auto table = std::make_unique<Table>();
  WakeRecord found;
  EXPECT_FALSE(table->lookupLast(0x1000, kNobody, &found));
  EXPECT_FALSE(table->lookupLast(0, kNobody, &found)) << "an empty slot must not match object 0";
}

TEST(WakerTable, LookupReturnsTheLastRecordOfTheObject) {
  auto table = std::make_unique<Table>();
  ASSERT_TRUE(table->record(wake(0x1000, 7, 0x400123, 55)));
  ASSERT_TRUE(table->record(wake(0x1000, 9, 0x400456, 66)));
  WakeRecord found;
  ASSERT_TRUE(table->lookupLast(0x1000, kNobody, &found));
  EXPECT_EQ(found.tid, 9u);
  EXPECT_EQ(found.pc, 0x400456u);
  EXPECT_EQ(found.time_ns, 66u);
  EXPECT_EQ(found.object, 0x1000u);
}

TEST(WakerTable, ObjectsSharingASlotOverwriteEachOtherAndAreNotConfused) {
  auto table = std::make_unique<Table>();
  uint64_t first = 0x2000, second = collidingWith(first);
  ASSERT_TRUE(table->record(wake(first, 1, 0x10, 1)));
  WakeRecord found;
  EXPECT_FALSE(table->lookupLast(second, kNobody, &found)) << "the slot holds another object";
  ASSERT_TRUE(table->record(wake(second, 2, 0x20, 2)));
  EXPECT_FALSE(table->lookupLast(first, kNobody, &found)) << "overwritten";
  ASSERT_TRUE(table->lookupLast(second, kNobody, &found));
  EXPECT_EQ(found.tid, 2u);
}

TEST(WakerTable, AThreadIsNeverItsOwnWaker) {
  auto table = std::make_unique<Table>();
  ASSERT_TRUE(table->record(wake(0x1000, 7, 0x10, 10)));
  WakeRecord found;
  EXPECT_FALSE(table->lookupLast(0x1000, 7, &found));
  EXPECT_TRUE(table->lookupLast(0x1000, 8, &found));
  EXPECT_FALSE(table->lookupFirstSince(0x1000, 5, 7, &found));
}

// A condition waited on from time 100: a broadcaster wakes it at 90 (before
// the wait), the producer at 120 (the wake that ended it), the broadcaster
// again at 130 and 140 (the waiter was already woken). The wait's waker is
// the producer; the last wake is the broadcaster's.
TEST(WakerTable, FirstWakeSinceAWaitBeganIsTheOneThatEndedIt) {
  auto table = std::make_unique<Table>();
  ASSERT_TRUE(table->record(wake(0xC0, 43, 0xb1, 90)));
  ASSERT_TRUE(table->record(wake(0xC0, 44, 0xa1, 120)));
  ASSERT_TRUE(table->record(wake(0xC0, 43, 0xb1, 130)));
  ASSERT_TRUE(table->record(wake(0xC0, 43, 0xb1, 140)));
  WakeRecord found;
  ASSERT_TRUE(table->lookupFirstSince(0xC0, 100, kNobody, &found));
  EXPECT_EQ(found.tid, 44u);
  EXPECT_EQ(found.pc, 0xa1u);
  EXPECT_EQ(found.time_ns, 120u);
  ASSERT_TRUE(table->lookupLast(0xC0, kNobody, &found));
  EXPECT_EQ(found.tid, 43u);
  EXPECT_EQ(found.time_ns, 140u);
  ASSERT_TRUE(table->lookupFirstSince(0xC0, 125, kNobody, &found));
  EXPECT_EQ(found.time_ns, 130u);
  EXPECT_FALSE(table->lookupFirstSince(0xC0, 141, kNobody, &found)) << "no wake since";

  // An object's first wake ever, in an empty slot: nothing earlier was lost.
  ASSERT_TRUE(table->record(wake(0xD0, 45, 0xc1, 50)));
  ASSERT_TRUE(table->lookupFirstSince(0xD0, 40, kNobody, &found));
  EXPECT_EQ(found.tid, 45u);
}

// When more wakes followed than the history keeps, the first one since the
// wait began may be gone: nothing rather than a later waker.
TEST(WakerTable, AFirstWakeNoLongerKeptIsUnknown) {
  auto table = std::make_unique<Table>();
  for (uint64_t time = 10; time <= 10 * (causal::rt::kWakeHistory + 2); time += 10)
    ASSERT_TRUE(table->record(wake(0xC0, uint32_t(time), time, time)));
  WakeRecord found;
  EXPECT_FALSE(table->lookupFirstSince(0xC0, 15, kNobody, &found)) << "the wake at 20 is gone";
  uint64_t oldest_kept = 10 * 3;
  ASSERT_TRUE(table->lookupFirstSince(0xC0, oldest_kept, kNobody, &found))
      << "the wakes from " << oldest_kept << " on are kept, and the one before came earlier";
  EXPECT_EQ(found.time_ns, oldest_kept);
}

// An object whose slot another object took over starts again: its earlier
// wakes are unknown, so a wait begun before the take-over has no waker.
TEST(WakerTable, AnObjectTakingASlotOverKnowsNoEarlierWake) {
  auto table = std::make_unique<Table>();
  uint64_t first = 0x2000, second = collidingWith(first);
  ASSERT_TRUE(table->record(wake(first, 1, 0x10, 10)));
  ASSERT_TRUE(table->record(wake(second, 2, 0x20, 20)));
  ASSERT_TRUE(table->record(wake(first, 3, 0x30, 30)));
  WakeRecord found;
  EXPECT_FALSE(table->lookupFirstSince(first, 5, kNobody, &found));
  ASSERT_TRUE(table->lookupFirstSince(first, 30, kNobody, &found));
  EXPECT_EQ(found.tid, 3u);
}

TEST(WakerTable, ClearForgetsEverything) {
  auto table = std::make_unique<Table>();
  ASSERT_TRUE(table->record(wake(0x3000, 3, 0x30, 3)));
  table->clear();
  WakeRecord found;
  EXPECT_FALSE(table->lookupLast(0x3000, kNobody, &found));
}

// Writers on several threads and a reader on one object: whatever the reader
// finds is one writer's whole record, never a mix of two (each writer's pc
// and time are functions of its tid).
TEST(WakerTable, ConcurrentRecordsAreNeverTorn) {
  auto table = std::make_unique<Table>();
  constexpr uint64_t kObject = 0x4000;
  std::atomic<bool> stop{false};
  std::vector<std::thread> writers;
  // Writers pause a little between records (wakers do work between wake-ups)
  // so that the reader finds the slot at rest now and then.
  for (uint32_t tid = 1; tid <= 3; ++tid)
    writers.emplace_back([&, tid] {
      while (!stop.load(std::memory_order_relaxed)) {
        table->record(wake(kObject, tid, tid * 0x1111ull, tid * 0x2222ull));
        for (volatile int spin = 0; spin < 200; ++spin)
          ;
      }
    });
  uint64_t found_count = 0, torn = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (uint64_t i = 0;
       (found_count < 10000 || i < 1000000) && std::chrono::steady_clock::now() < deadline; ++i) {
    WakeRecord found;
    if (!table->lookupLast(kObject, kNobody, &found))
      continue;
    ++found_count;
    if (found.pc != found.tid * 0x1111ull || found.time_ns != found.tid * 0x2222ull ||
        found.tid < 1 || found.tid > 3)
      ++torn;
  }
  stop.store(true);
  for (std::thread &writer : writers)
    writer.join();
  EXPECT_GT(found_count, 0u);
  EXPECT_EQ(torn, 0u);
}

} // namespace
