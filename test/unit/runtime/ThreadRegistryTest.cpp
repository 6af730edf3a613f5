//===- ThreadRegistryTest.cpp - Per-thread states: reuse and enumeration --===//

#include "ThreadState.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <set>
#include <thread>
#include <vector>

namespace {

using causal::rt::ThreadRegistry;
using causal::rt::ThreadState;

TEST(ThreadRegistry, GivenBackStatesAreReusedBeforeNewOnes) {
  auto registry = std::make_unique<ThreadRegistry>();
  ThreadState *a = registry->acquire();
  ThreadState *b = registry->acquire();
  ThreadState *c = registry->acquire();
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(std::set<ThreadState *>({a, b, c}).size(), 3u);
  EXPECT_EQ(registry->slotsUsed(), 3u);

  // None given back: a new state.
  registry->release(b);
  ThreadState *again = registry->acquire();
  EXPECT_EQ(again, b);
  EXPECT_EQ(registry->slotsUsed(), 3u);
  ThreadState *d = registry->acquire();
  EXPECT_NE(d, a);
  EXPECT_NE(d, b);
  EXPECT_NE(d, c);
  EXPECT_EQ(registry->slotsUsed(), 4u);

  // Two given back: both reused, in any order, and then a new one.
  registry->release(a);
  registry->release(c);
  std::set<ThreadState *> reused = {registry->acquire(), registry->acquire()};
  EXPECT_EQ(reused, std::set<ThreadState *>({a, c}));
  EXPECT_EQ(registry->slotsUsed(), 4u);
  ThreadState *e = registry->acquire();
  EXPECT_EQ(registry->slotsUsed(), 5u);
  EXPECT_EQ(std::set<ThreadState *>({a, b, c, d, e}).size(), 5u);
}

TEST(ThreadRegistry, AForkChildReusesEveryStateButItsOwn) {
  auto registry = std::make_unique<ThreadRegistry>();
  ThreadState *states[4];
  for (ThreadState *&state : states)
    state = registry->acquire();
  registry->releaseAllBut(states[2]);
  std::set<ThreadState *> reused;
  for (int i = 0; i < 3; ++i)
    reused.insert(registry->acquire());
  EXPECT_EQ(reused, std::set<ThreadState *>({states[0], states[1], states[3]}));
  EXPECT_EQ(registry->slotsUsed(), 4u);
  EXPECT_EQ(registry->acquire() == states[2], false); // the survivor stays its own
  EXPECT_EQ(registry->slotsUsed(), 5u);
}

// New states are carved from shared chunks without a lock: threads starting
// at once, across many chunks, each get states of their own.
TEST(ThreadRegistry, StatesTakenAtOnceByManyThreadsAreDistinctAndDoNotOverlap) {
  auto registry = std::make_unique<ThreadRegistry>();
  constexpr int kThreads = 8, kEach = 100; // 800 states: many chunks, raced for
  std::vector<std::vector<ThreadState *>> taken(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        ThreadState *state = registry->acquire();
        ASSERT_NE(state, nullptr);
        state->local_delay_ns.store(uint64_t(t * kEach + i) + 1);
        taken[t].push_back(state);
      }
    });
  for (std::thread &thread : threads)
    thread.join();

  std::vector<ThreadState *> all;
  for (int t = 0; t < kThreads; ++t)
    for (int i = 0; i < kEach; ++i) {
      ThreadState *state = taken[t][i];
      EXPECT_EQ(state->local_delay_ns.load(), uint64_t(t * kEach + i) + 1); // nobody else wrote it
      all.push_back(state);
    }
  std::sort(all.begin(), all.end());
  for (size_t i = 1; i < all.size(); ++i)
    EXPECT_GE(reinterpret_cast<char *>(all[i]) - reinterpret_cast<char *>(all[i - 1]),
              ptrdiff_t(sizeof(ThreadState)));
  EXPECT_EQ(registry->slotsUsed(), uint32_t(kThreads * kEach));
}

} // namespace
