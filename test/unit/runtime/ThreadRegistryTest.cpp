//===- ThreadRegistryTest.cpp - Per-thread states: reuse and enumeration --===//

#include "ThreadState.h"

#include <gtest/gtest.h>

#include <memory>
#include <set>

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

} // namespace
