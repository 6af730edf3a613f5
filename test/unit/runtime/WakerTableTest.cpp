//===- WakerTableTest.cpp - The last waking call per object (--waits) -----===//

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
  EXPECT_FALSE(table->lookup(0x1000, &found));
  EXPECT_FALSE(table->lookup(0, &found)) << "an empty slot must not match object 0";
}

TEST(WakerTable, LookupReturnsTheLastRecordOfTheObject) {
  auto table = std::make_unique<Table>();
  ASSERT_TRUE(table->record(wake(0x1000, 7, 0x400123, 55)));
  ASSERT_TRUE(table->record(wake(0x1000, 9, 0x400456, 66)));
  WakeRecord found;
  ASSERT_TRUE(table->lookup(0x1000, &found));
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
  EXPECT_FALSE(table->lookup(second, &found)) << "the slot holds another object";
  ASSERT_TRUE(table->record(wake(second, 2, 0x20, 2)));
  EXPECT_FALSE(table->lookup(first, &found)) << "overwritten";
  ASSERT_TRUE(table->lookup(second, &found));
  EXPECT_EQ(found.tid, 2u);
}

TEST(WakerTable, ClearForgetsEverything) {
  auto table = std::make_unique<Table>();
  ASSERT_TRUE(table->record(wake(0x3000, 3, 0x30, 3)));
  table->clear();
  WakeRecord found;
  EXPECT_FALSE(table->lookup(0x3000, &found));
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
    if (!table->lookup(kObject, &found))
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
