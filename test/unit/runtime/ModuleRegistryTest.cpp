//===- test/unit/runtime/ModuleRegistryTest.cpp ---------------------------===//

#include "ModuleRegistry.h"
#include "SampleLog.h"
#include "TestLineTable.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <stdio.h>
#include <string>
#include <thread>
#include <unistd.h>

using causal::rt::ModuleRegistry;
using causal::rt::ResolvedAddress;
using causal::test::InMemoryLineTable;
using causal::test::LineTableSpec;
using Result = ModuleRegistry::RegisterResult;

namespace {

// Some code of this test binary the tables can describe.
__attribute__((noinline)) int describedFunction(int x) { return x * 3 + 1; }

// Three lines in two files over [code, code + 0x60): [0x00,0x10) line 0,
// [0x10,0x20) no line (gap), [0x20,0x40) line 1, [0x40,0x60) line 2.
LineTableSpec threeLineSpec(uint64_t code) {
  LineTableSpec spec;
  spec.code_vaddr = code;
  spec.rows = {{0x00, 0}, {0x10, CAUSAL_NO_LINE}, {0x20, 1}, {0x40, 2}, {0x60, CAUSAL_NO_LINE}};
  spec.lines = {{0, 5}, {0, 7}, {1, 42}};
  spec.files = {"/src/a.cpp", "/src/b.h"};
  return spec;
}

class ModuleRegistryTest : public ::testing::Test {
protected:
  void TearDown() override { registry->destroyForTesting(); }
  // The registry is large (a fixed array of slots): keep it off the stack.
  std::unique_ptr<ModuleRegistry> registry = std::make_unique<ModuleRegistry>();
  uintptr_t code = reinterpret_cast<uintptr_t>(&describedFunction);
};

TEST_F(ModuleRegistryTest, ResolvesAddressesAtRowBoundaries) {
  InMemoryLineTable table(threeLineSpec(code));
  ASSERT_EQ(registry->registerModule(table.start(), table.stop(), "/bin/test"), Result::Registered);
  ResolvedAddress r;
  ASSERT_TRUE(registry->resolve(code + 0x00, &r));
  EXPECT_EQ(r.line, 0u);
  EXPECT_EQ(r.link_address, code); // bias 0
  ASSERT_TRUE(registry->resolve(code + 0x0f, &r));
  EXPECT_EQ(r.line, 0u);
  EXPECT_FALSE(registry->resolve(code + 0x10, &r)) << "gap row has no line";
  EXPECT_FALSE(registry->resolve(code + 0x1f, &r));
  ASSERT_TRUE(registry->resolve(code + 0x20, &r));
  EXPECT_EQ(r.line, 1u);
  ASSERT_TRUE(registry->resolve(code + 0x3f, &r));
  EXPECT_EQ(r.line, 1u);
  ASSERT_TRUE(registry->resolve(code + 0x40, &r));
  EXPECT_EQ(r.line, 2u);
  ASSERT_TRUE(registry->resolve(code + 0x5f, &r));
  EXPECT_EQ(r.line, 2u);
  EXPECT_FALSE(registry->resolve(code + 0x60, &r)) << "terminator ends the table";
  EXPECT_FALSE(registry->resolve(code - 1, &r)) << "before the first row";
  EXPECT_STREQ(registry->path(0), "/bin/test");
}

TEST_F(ModuleRegistryTest, AppliesLoadBias) {
  InMemoryLineTable table(threeLineSpec(0x401000));
  // Pretend the table was linked at 0x500000: bias = runtime - link address.
  uintptr_t runtime_table = reinterpret_cast<uintptr_t>(table.start());
  table.header()->table_vaddr = 0x500000;
  uintptr_t bias = runtime_table - 0x500000;
  ASSERT_EQ(registry->registerModule(table.start(), table.stop(), "x"), Result::Registered);
  EXPECT_EQ(registry->bias(0), bias);
  ResolvedAddress r;
  ASSERT_TRUE(registry->resolve(0x401020 + bias, &r));
  EXPECT_EQ(r.line, 1u);
  EXPECT_EQ(r.link_address, 0x401020u);
  EXPECT_FALSE(registry->resolve(0x401020, &r)) << "unbiased address must not match";
}

TEST_F(ModuleRegistryTest, RegistrationIsIdempotent) {
  InMemoryLineTable table(threeLineSpec(code));
  uint32_t before = registry->changes();
  EXPECT_EQ(registry->registerModule(table.start(), table.stop(), "x"), Result::Registered);
  uint32_t registered = registry->changes();
  EXPECT_NE(registered, before) << "a registration is a change (Paths.cpp forgets return kinds)";
  EXPECT_EQ(registry->registerModule(table.start(), table.stop(), "x"), Result::AlreadyRegistered);
  EXPECT_EQ(registry->changes(), registered) << "nothing changed";
  EXPECT_EQ(registry->slotsUsed(), 1u);
}

TEST_F(ModuleRegistryTest, RejectsMissingAndCorruptTables) {
  EXPECT_EQ(registry->registerModule(nullptr, nullptr, "x"), Result::NoTable);

  InMemoryLineTable bad_magic(threeLineSpec(code));
  bad_magic.bytes()[0] = 'X';
  EXPECT_EQ(registry->registerModule(bad_magic.start(), bad_magic.stop(), "x"),
            Result::InvalidTable);

  InMemoryLineTable bad_version(threeLineSpec(code));
  bad_version.header()->version = CAUSAL_LINETAB_VERSION + 1;
  EXPECT_EQ(registry->registerModule(bad_version.start(), bad_version.stop(), "x"),
            Result::InvalidTable);

  InMemoryLineTable rows_out_of_bounds(threeLineSpec(code));
  rows_out_of_bounds.header()->num_rows = 100000;
  EXPECT_EQ(registry->registerModule(rows_out_of_bounds.start(), rows_out_of_bounds.stop(), "x"),
            Result::InvalidTable);

  InMemoryLineTable truncated(threeLineSpec(code));
  const char *cut = static_cast<const char *>(truncated.stop()) - 16;
  EXPECT_EQ(registry->registerModule(truncated.start(), cut, "x"), Result::InvalidTable)
      << "section smaller than total_size";

  InMemoryLineTable too_small(threeLineSpec(code));
  EXPECT_EQ(registry->registerModule(too_small.start(),
                                     static_cast<const char *>(too_small.start()) + 8, "x"),
            Result::InvalidTable);

  EXPECT_EQ(registry->slotsUsed(), 0u);
}

TEST_F(ModuleRegistryTest, SeveralModulesResolveIndependently) {
  // Two tables over disjoint halves of the same code.
  LineTableSpec first;
  first.code_vaddr = code;
  first.rows = {{0, 0}, {0x20, CAUSAL_NO_LINE}};
  first.lines = {{0, 1}};
  first.files = {"first.c"};
  LineTableSpec second;
  second.code_vaddr = code + 0x20;
  second.rows = {{0, 0}, {0x20, CAUSAL_NO_LINE}};
  second.lines = {{0, 2}};
  second.files = {"second.c"};
  InMemoryLineTable a(first), b(second);
  ASSERT_EQ(registry->registerModule(a.start(), a.stop(), "a.so"), Result::Registered);
  ASSERT_EQ(registry->registerModule(b.start(), b.stop(), "b.so"), Result::Registered);
  ResolvedAddress r;
  ASSERT_TRUE(registry->resolve(code + 0x1f, &r));
  EXPECT_EQ(r.module, 0u);
  ASSERT_TRUE(registry->resolve(code + 0x20, &r));
  EXPECT_EQ(r.module, 1u);
  registry->addSamples(r, 3);
  EXPECT_EQ(registry->lineCount(1, 0), 3u);
  EXPECT_EQ(registry->lineCount(0, 0), 0u);
}

TEST_F(ModuleRegistryTest, UnregisterStopsResolvingAndKeepsCounts) {
  InMemoryLineTable table(threeLineSpec(code));
  ASSERT_EQ(registry->registerModule(table.start(), table.stop(), "x"), Result::Registered);
  ResolvedAddress r;
  ASSERT_TRUE(registry->resolve(code + 0x41, &r));
  registry->addSamples(r, 4);
  uint32_t before = registry->changes();
  EXPECT_TRUE(registry->unregisterModule(table.start()));
  uint32_t unregistered = registry->changes();
  EXPECT_NE(unregistered, before);
  EXPECT_FALSE(registry->unregisterModule(table.start())) << "second time: unknown";
  EXPECT_EQ(registry->changes(), unregistered);
  EXPECT_FALSE(registry->resolve(code + 0x41, &r));
  const char *kept = registry->retiredText(0);
  ASSERT_NE(kept, nullptr);
  EXPECT_STREQ(kept, "samples\tlocation=/src/b.h:42\tcount=4\n");
  // The same table may be registered again (dlopen after dlclose).
  EXPECT_EQ(registry->registerModule(table.start(), table.stop(), "x"), Result::Reloaded);
  EXPECT_NE(registry->changes(), unregistered);
}

TEST_F(ModuleRegistryTest, TheSameImageLoadedAgainReusesItsSlotAndCounts) {
  // More loads than slots: an image unloaded and loaded again takes its old
  // slot, and its lines' counts keep growing; the retired text follows the
  // last unload. One buffer for every load: an in-memory table's link-time
  // address is its buffer's, and a real image's does not change between
  // loads (a buffer per load got a new address under ASan's quarantine).
  InMemoryLineTable table(threeLineSpec(code));
  for (uint32_t load = 0; load < ModuleRegistry::kCapacity + 100; ++load) {
    Result expected = load == 0 ? Result::Registered : Result::Reloaded;
    ASSERT_EQ(registry->registerModule(table.start(), table.stop(), "/lib/plugin.so"), expected)
        << "load " << load;
    ResolvedAddress r;
    ASSERT_TRUE(registry->resolve(code + 0x41, &r));
    EXPECT_EQ(r.module, 0u);
    registry->addSamples(r, 1);
    ASSERT_TRUE(registry->unregisterModule(table.start()));
  }
  EXPECT_EQ(registry->slotsUsed(), 1u);
  std::string expected_text =
      "samples\tlocation=/src/b.h:42\tcount=" + std::to_string(ModuleRegistry::kCapacity + 100) +
      "\n";
  EXPECT_STREQ(registry->retiredText(0), expected_text.c_str());
  // Another image (another path, or another table) gets a slot of its own.
  InMemoryLineTable other(threeLineSpec(code));
  EXPECT_EQ(registry->registerModule(other.start(), other.stop(), "/lib/other.so"),
            Result::Registered);
  EXPECT_EQ(registry->slotsUsed(), 2u);
}

TEST_F(ModuleRegistryTest, UnregisterWaitsForAHandlerInFlightButNotForOneThatNeverEnds) {
  // A handler that is reading when the image goes is waited for. One that a
  // program's siglongjmp left never ends: after CAUSAL_GRACE_PERIOD_WAIT_NS
  // the unload goes ahead and says so (before, it spun forever: a CI run
  // hung at exit), and the next unload does not wait for it again.
  InMemoryLineTable first(threeLineSpec(code)), second(threeLineSpec(code + 0x100));
  ASSERT_EQ(registry->registerModule(first.start(), first.stop(), "/lib/a.so"), Result::Registered);
  ASSERT_EQ(registry->registerModule(second.start(), second.stop(), "/lib/b.so"),
            Result::Registered);

  std::atomic<bool> reading{false};
  std::thread handler([&] {
    registry->beginRead();
    reading = true;
    usleep(100000); // 100 ms of "resolving", well within the grace period
    registry->endRead();
  });
  while (!reading)
    sched_yield();
  bool gave_up = true;
  uint64_t start = causal::rt::monotonicNs();
  ASSERT_TRUE(registry->unregisterModule(first.start(), &gave_up));
  uint64_t waited = causal::rt::monotonicNs() - start;
  handler.join();
  EXPECT_FALSE(gave_up);
  EXPECT_GE(waited, 50000000u) << "the unload did not wait for the reader";

  ASSERT_EQ(registry->registerModule(first.start(), first.stop(), "/lib/a.so"), Result::Reloaded);
  registry->beginRead(); // never ended
  start = causal::rt::monotonicNs();
  ASSERT_TRUE(registry->unregisterModule(first.start(), &gave_up));
  waited = causal::rt::monotonicNs() - start;
  EXPECT_TRUE(gave_up);
  EXPECT_GE(waited, CAUSAL_GRACE_PERIOD_WAIT_NS);
  ResolvedAddress r;
  EXPECT_FALSE(registry->resolve(code + 0x41, &r)) << "retired all the same";

  // The reader given up on is not waited for again; a new one is.
  ASSERT_TRUE(registry->unregisterModule(second.start(), &gave_up));
  EXPECT_FALSE(gave_up);
  registry->endRead();
}

long residentKiB() {
  FILE *f = fopen("/proc/self/statm", "r");
  long size = 0, resident = 0;
  if (f) {
    if (fscanf(f, "%ld %ld", &size, &resident) != 2)
      resident = 0;
    fclose(f);
  }
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

TEST_F(ModuleRegistryTest, RegistrationDoesNotTouchPerLineMemory) {
  // 4M lines = 32 MB of counters. They are reserved, not written, at
  // registration: resident memory must not grow by anything near 32 MB.
  LineTableSpec spec = threeLineSpec(code);
  spec.lines.resize(4u << 20, {0, 1});
  InMemoryLineTable table(spec);
  long before = residentKiB();
  ASSERT_GT(before, 0);
  ASSERT_EQ(registry->registerModule(table.start(), table.stop(), "big"), Result::Registered);
  long after = residentKiB();
  EXPECT_LT(after - before, 8 * 1024) << "registration touched the per-line counters";
  ResolvedAddress r;
  ASSERT_TRUE(registry->resolve(code + 0x40, &r));
  registry->addSamples(r, 1);
  EXPECT_EQ(registry->lineCount(0, 2), 1u);
  EXPECT_EQ(registry->lineCount(0, (4u << 20) - 1), 0u);
}

TEST(SampleLogTest, AggregatesByModuleAndAddressAndReportsOverflow) {
  auto registry = std::make_unique<ModuleRegistry>();
  causal::rt::SampleLog log;
  ASSERT_TRUE(log.init(64));
  log.add(0, 0x401000, 2);
  log.add(0, 0x401000, 3);
  log.add(1, 0x401000, 1); // same address, other module: separate entry
  size_t size = 0;
  char *text = log.render(*registry, &size);
  ASSERT_NE(text, nullptr);
  std::string rendered(text, size);
  free(text);
  EXPECT_NE(rendered.find(" 401000 5\n"), std::string::npos) << rendered;
  EXPECT_NE(rendered.find(" 401000 1\n"), std::string::npos) << rendered;
  EXPECT_EQ(log.overflowed(), 0u);
  for (uint64_t a = 0; a < 1000; ++a)
    log.add(0, 0x500000 + a * 16, 1);
  EXPECT_GT(log.overflowed(), 0u) << "64 slots cannot hold 1000 addresses";
  log.destroy();
}

} // namespace
