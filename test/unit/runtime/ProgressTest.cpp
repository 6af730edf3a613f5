//===- test/unit/runtime/ProgressTest.cpp - Progress point registry -------===//

#include "Progress.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <string.h>
#include <string>
#include <thread>

using namespace causal::rt;

namespace {

uint32_t findPoint(const ProgressRegistry &registry, const std::string &name, PointKind kind) {
  for (uint32_t i = 0; i < registry.size(); ++i)
    if (registry.name(i) == name && registry.kind(i) == kind)
      return i;
  return ~0u;
}

} // namespace

TEST(ProgressTest, SameNamedCountersOfSeveralImagesAreSummedOnce) {
  auto registry = std::make_unique<ProgressRegistry>();
  causal_counter image_a[] = {{3, "work", CAUSAL_COUNTER_THROUGHPUT, 0},
                              {5, "req", CAUSAL_COUNTER_BEGIN, 0},
                              {2, "req", CAUSAL_COUNTER_END, 0}};
  causal_counter image_b[] = {{4, "work", CAUSAL_COUNTER_THROUGHPUT, 0},
                              {1, "work", CAUSAL_COUNTER_BEGIN, 0}};
  EXPECT_EQ(registry->registerCounters(image_a, image_a + 3), 3u);
  EXPECT_EQ(registry->registerCounters(image_a, image_a + 3), 0u) << "idempotent";
  EXPECT_EQ(registry->registerCounters(image_b, image_b + 2), 2u);
  ASSERT_EQ(registry->size(), 3u) << "work (throughput), req (latency), work (latency)";
  uint32_t work = findPoint(*registry, "work", PointKind::Throughput);
  uint32_t req = findPoint(*registry, "req", PointKind::Latency);
  ASSERT_NE(work, ~0u);
  ASSERT_NE(req, ~0u);
  EXPECT_EQ(registry->arrivals(work), 7u);
  EXPECT_EQ(registry->arrivals(req), 5u);
  EXPECT_EQ(registry->departures(req), 2u);
  image_a[0].count += 10; // the program increments inline
  EXPECT_EQ(registry->arrivals(work), 17u);
}

TEST(ProgressTest, MalformedRecordsAreSkipped) {
  auto registry = std::make_unique<ProgressRegistry>();
  causal_counter bad[] = {
      {1, nullptr, CAUSAL_COUNTER_THROUGHPUT, 0}, {1, "x", 0, 0}, {1, "y", 9, 0}};
  EXPECT_EQ(registry->registerCounters(bad, bad + 3), 0u);
  EXPECT_EQ(registry->registerCounters(nullptr, nullptr), 0u);
  EXPECT_EQ(registry->registerCounters(bad + 2, bad), 0u) << "reversed bounds";
  EXPECT_EQ(registry->size(), 0u);
}

TEST(ProgressTest, CozCountersAreOnePerTypeAndNameAndMergeWithOurs) {
  auto registry = std::make_unique<ProgressRegistry>();
  CozCounter *a = registry->cozCounter(1, "tp");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(registry->cozCounter(1, "tp"), a);
  CozCounter *begin = registry->cozCounter(2, "lat");
  CozCounter *end = registry->cozCounter(3, "lat");
  ASSERT_TRUE(begin && end);
  EXPECT_NE(begin, end);
  EXPECT_EQ(registry->cozCounter(0, "x"), nullptr);
  EXPECT_EQ(registry->cozCounter(4, "x"), nullptr);
  EXPECT_EQ(registry->cozCounter(1, nullptr), nullptr);
  a->count += 3;
  begin->count += 2;
  end->count += 1;
  causal_counter ours[] = {{4, "tp", CAUSAL_COUNTER_THROUGHPUT, 0}};
  registry->registerCounters(ours, ours + 1);
  uint32_t tp = findPoint(*registry, "tp", PointKind::Throughput);
  uint32_t lat = findPoint(*registry, "lat", PointKind::Latency);
  ASSERT_NE(tp, ~0u);
  ASSERT_NE(lat, ~0u);
  EXPECT_EQ(registry->arrivals(tp), 7u);
  EXPECT_EQ(registry->arrivals(lat), 2u);
  EXPECT_EQ(registry->departures(lat), 1u);
}

TEST(ProgressTest, RetiredCountersKeepTheirValueAndAreNoLongerRead) {
  auto registry = std::make_unique<ProgressRegistry>();
  causal_counter image[] = {{6, "p", CAUSAL_COUNTER_THROUGHPUT, 0}};
  registry->registerCounters(image, image + 1);
  uintptr_t begin = reinterpret_cast<uintptr_t>(image);
  registry->retireRange(begin, begin + sizeof(image));
  image[0].count = 1000; // "unmapped" memory must not be read
  EXPECT_EQ(registry->arrivals(0), 6u);
}

TEST(ProgressTest, NamesAreKeptAsGivenAndLongOnesShortenedVisiblyAndApart) {
  auto registry = std::make_unique<ProgressRegistry>();
  // The profile writer escapes tabs and newlines (causal/profile_text.h): the
  // registry keeps the bytes, so "a\tb" and "a b" stay two points.
  std::string long_a(1500, 'x'), long_b(1500, 'x');
  long_a += "-a";
  long_b += "-b";
  std::string fits(CAUSAL_MAX_POINT_NAME - 1, 'y');
  causal_counter image[] = {{1, "a\tb\nc", CAUSAL_COUNTER_THROUGHPUT, 0},
                            {2, "a b c", CAUSAL_COUNTER_THROUGHPUT, 0},
                            {3, long_a.c_str(), CAUSAL_COUNTER_THROUGHPUT, 0},
                            {4, long_b.c_str(), CAUSAL_COUNTER_THROUGHPUT, 0},
                            {5, fits.c_str(), CAUSAL_COUNTER_THROUGHPUT, 0}};
  registry->registerCounters(image, image + 5);
  ASSERT_EQ(registry->size(), 5u);
  EXPECT_STREQ(registry->name(0), "a\tb\nc");
  EXPECT_STREQ(registry->name(1), "a b c");
  EXPECT_EQ(registry->name(4), fits) << "a name that fits is kept whole";
  std::string a = registry->name(2), b = registry->name(3);
  EXPECT_NE(a, b);
  EXPECT_EQ(a.size(), CAUSAL_MAX_POINT_NAME - 1);
  EXPECT_EQ(a.substr(0, a.size() - 20), long_a.substr(0, a.size() - 20));
  EXPECT_EQ(a.substr(a.size() - 20, 4), "...#") << a.substr(a.size() - 24);
  // The same long name finds its point again (another image, Coz's API).
  causal_counter again[] = {{7, long_a.c_str(), CAUSAL_COUNTER_THROUGHPUT, 0}};
  registry->registerCounters(again, again + 1);
  EXPECT_EQ(registry->size(), 5u);
  EXPECT_EQ(registry->arrivals(2), 10u);
  // A cut never splits a UTF-8 character.
  std::string utf8;
  while (utf8.size() < 2000)
    utf8 += "\xe2\x86\x92";
  char stored[CAUSAL_MAX_POINT_NAME];
  storedPointName(utf8.c_str(), stored);
  std::string cut(stored, strstr(stored, "...#") - stored);
  EXPECT_EQ(cut.size() % 3, 0u);
  EXPECT_EQ(cut, utf8.substr(0, cut.size()));
}

TEST(ProgressTest, SlotsOfUnloadedImagesAreReusedAcrossManyLoads) {
  // A library loaded and unloaded far more often than a point has counter
  // slots: every load's counter is read, each value counted once.
  auto registry = std::make_unique<ProgressRegistry>();
  uint64_t expected = 0;
  for (int load = 0; load < 10 * int(CAUSAL_MAX_COUNTERS_PER_POINT); ++load) {
    causal_counter image[] = {{0, "work", CAUSAL_COUNTER_THROUGHPUT, 0}};
    ASSERT_EQ(registry->registerCounters(image, image + 1), 1u) << "load " << load;
    image[0].count = 3;
    expected += 3;
    ASSERT_EQ(registry->arrivals(0), expected) << "load " << load;
    uintptr_t begin = reinterpret_cast<uintptr_t>(image);
    registry->retireRange(begin, begin + sizeof(image));
    image[0].count = 1000; // unmapped
    ASSERT_EQ(registry->arrivals(0), expected) << "load " << load;
  }
  EXPECT_EQ(registry->size(), 1u);
}

TEST(ProgressTest, SumsNeverCountARetiringCounterTwiceNorMissIt) {
  auto registry = std::make_unique<ProgressRegistry>();
  causal_counter keep[] = {{0, "p", CAUSAL_COUNTER_THROUGHPUT, 0}};
  registry->registerCounters(keep, keep + 1);
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> bad{0};
  std::thread reader([&] {
    // Every counter below holds 5 and is retired with 5: the total only grows
    // by 5 per load; a value seen both in the counter and retired, or in
    // neither, breaks the sequence.
    uint64_t last = 0;
    while (!stop.load()) {
      uint64_t now = registry->arrivals(0);
      if (now < last || now % 5 != 0)
        bad.fetch_add(1);
      last = now;
    }
  });
  for (int load = 0; load < 20000; ++load) {
    causal_counter image[] = {{5, "p", CAUSAL_COUNTER_THROUGHPUT, 0}};
    registry->registerCounters(image, image + 1);
    uintptr_t begin = reinterpret_cast<uintptr_t>(image);
    registry->retireRange(begin, begin + sizeof(image));
  }
  stop.store(true);
  reader.join();
  EXPECT_EQ(bad.load(), 0u);
  EXPECT_EQ(registry->arrivals(0), 5u * 20000);
}

// Requests begun and ended while the count is read (a thread visiting
// begin and end in a tight loop): the count of requests in flight is never
// below 0. (Read arrivals first, the lowest of 2,000,000 reads here was
// between -1,618 and -224,997 in three runs.)
TEST(ProgressTest, RequestsInFlightAreNeverNegativeWhileRequestsComeAndGo) {
  auto registry = std::make_unique<ProgressRegistry>();
  causal_counter image[] = {{0, "req", CAUSAL_COUNTER_BEGIN, 0}, {0, "req", CAUSAL_COUNTER_END, 0}};
  registry->registerCounters(image, image + 2);
  uint32_t req = findPoint(*registry, "req", PointKind::Latency);
  ASSERT_NE(req, ~0u);
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> pairs{0};
  std::thread visitor([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      __atomic_add_fetch(&image[0].count, 1, __ATOMIC_RELAXED);
      __atomic_add_fetch(&image[1].count, 1, __ATOMIC_RELAXED);
      pairs.fetch_add(1, std::memory_order_relaxed);
    }
  });
  while (pairs.load() < 1000) // the visitor runs
    std::this_thread::yield();
  int64_t lowest = 0, highest = 0;
  for (int i = 0; i < 2000000; ++i) {
    int64_t in_flight = registry->inFlight(req);
    lowest = std::min(lowest, in_flight);
    highest = std::max(highest, in_flight);
  }
  stop.store(true);
  visitor.join();
  EXPECT_EQ(lowest, 0);
  EXPECT_GE(highest, 0);
  EXPECT_EQ(registry->inFlight(req), 0) << "every request ended";
}

TEST(ProgressTest, LatencyVisitsAddTheirVirtualTimesToTheirPoint) {
  auto registry = std::make_unique<ProgressRegistry>();
  causal_counter image[] = {{0, "req", CAUSAL_COUNTER_BEGIN, 0},
                            {0, "req", CAUSAL_COUNTER_END, 0},
                            {0, "tp", CAUSAL_COUNTER_THROUGHPUT, 0},
                            {0, "other", CAUSAL_COUNTER_BEGIN, 0}};
  causal_counter unregistered = {0, "req", CAUSAL_COUNTER_END, 0};
  registry->registerCounters(image, image + 4);
  uint32_t req = findPoint(*registry, "req", PointKind::Latency);
  uint32_t other = findPoint(*registry, "other", PointKind::Latency);
  ASSERT_NE(req, ~0u);
  ASSERT_NE(other, ~0u);
  EXPECT_NE(image[0].flags, 0u) << "registration marks the record with its point";
  // What the runtime's visit function does with a counter and a time.
  auto visit = [&](const void *counter, int64_t virtual_ns) {
    bool end = false;
    uint32_t point = registry->latencyPointOf(counter, &end);
    if (point != ProgressRegistry::kNoLatencyPoint)
      registry->recordVisit(point, end, virtual_ns);
    return point;
  };
  EXPECT_EQ(visit(&image[0], 100), req);
  EXPECT_EQ(visit(&image[0], -40), req); // virtual time may run backwards
  EXPECT_EQ(visit(&image[1], 250), req);
  EXPECT_EQ(visit(&image[2], 999), ProgressRegistry::kNoLatencyPoint) << "throughput";
  EXPECT_EQ(visit(&unregistered, 77), ProgressRegistry::kNoLatencyPoint) << "flags 0: not ours";
  EXPECT_EQ(visit(&image[3], 5), other);
  ProgressRegistry::VisitSums sums = registry->takeVisitSums(req);
  EXPECT_EQ(sums.begin_ns, 60);
  EXPECT_EQ(sums.end_ns, 250);
  EXPECT_EQ(sums.begins, 2u);
  EXPECT_EQ(sums.ends, 1u);
  sums = registry->takeVisitSums(req);
  EXPECT_EQ(sums.begins + sums.ends, 0u) << "taking starts new sums";
  EXPECT_EQ(registry->takeVisitSums(other).begin_ns, 5);
}

TEST(ProgressTest, CozLatencyVisitsFindTheirPointThroughTheCounter) {
  auto registry = std::make_unique<ProgressRegistry>();
  CozCounter *begin = registry->cozCounter(CAUSAL_COUNTER_BEGIN, "lat");
  CozCounter *end = registry->cozCounter(CAUSAL_COUNTER_END, "lat");
  ASSERT_TRUE(begin && end);
  uint32_t lat = findPoint(*registry, "lat", PointKind::Latency);
  ASSERT_NE(lat, ~0u);
  for (auto [counter, virtual_ns] :
       {std::pair<CozCounter *, int64_t>{begin, 10}, {end, 30}, {end, 40}}) {
    bool is_end = false;
    uint32_t point = registry->latencyPointOf(counter, &is_end);
    ASSERT_EQ(point, lat);
    EXPECT_EQ(is_end, counter == end);
    registry->recordVisit(point, is_end, virtual_ns);
  }
  ProgressRegistry::VisitSums sums = registry->takeVisitSums(lat);
  EXPECT_EQ(sums.begin_ns, 10);
  EXPECT_EQ(sums.end_ns, 70);
  EXPECT_EQ(sums.begins, 1u);
  EXPECT_EQ(sums.ends, 2u);
}

TEST(ProgressTest, TimedThroughputVisitsGiveTheirSpanAndGapSquares) {
  auto registry = std::make_unique<ProgressRegistry>();
  causal_counter image[] = {{0, "items", CAUSAL_COUNTER_THROUGHPUT, 0},
                            {0, "req", CAUSAL_COUNTER_BEGIN, 0}};
  registry->registerCounters(image, image + 2);
  CozCounter *coz = registry->cozCounter(CAUSAL_COUNTER_THROUGHPUT, "items");
  ASSERT_NE(coz, nullptr);
  uint32_t items = findPoint(*registry, "items", PointKind::Throughput);
  ASSERT_NE(items, ~0u);
  bool end = true;
  EXPECT_EQ(registry->pointOf(&image[0], &end), items);
  EXPECT_FALSE(end);
  EXPECT_EQ(registry->pointOf(coz, &end), items) << "Coz's counter of the same point";
  EXPECT_EQ(registry->latencyPointOf(&image[0], &end), ProgressRegistry::kNoLatencyPoint);
  causal_counter unregistered = {0, "items", CAUSAL_COUNTER_THROUGHPUT, 0};
  EXPECT_EQ(registry->pointOf(&unregistered, &end), ProgressRegistry::kNoPoint);

  EXPECT_EQ(registry->takeVisitTimes(items).timed, 0u);
  registry->timeVisits(items, 4);
  EXPECT_TRUE(registry->timesVisits(items));
  // Two threads' visits may arrive out of order: 250 after 300.
  for (int64_t t : {100, 300, 250, 600})
    registry->recordTimedVisit(items, t);
  ProgressRegistry::VisitTimes times = registry->takeVisitTimes(items);
  EXPECT_EQ(times.timed, 4u);
  EXPECT_EQ(times.first_ns, 100);
  EXPECT_EQ(times.last_ns, 600);
  // Gaps 200, none (backwards), 350.
  EXPECT_DOUBLE_EQ(times.gap_squares, 200.0 * 200 + 350.0 * 350);
  times = registry->takeVisitTimes(items);
  EXPECT_EQ(times.timed, 0u) << "taking starts anew";
  EXPECT_EQ(times.gap_squares, 0.0);
  // The next window's first visit has no gap before it.
  registry->recordTimedVisit(items, 5000);
  registry->recordTimedVisit(items, 5010);
  times = registry->takeVisitTimes(items);
  EXPECT_EQ(times.first_ns, 5000);
  EXPECT_DOUBLE_EQ(times.gap_squares, 100.0);
  // More visits than may be timed: the timing stops, the take says so.
  for (int64_t t = 0; t < 5; ++t)
    registry->recordTimedVisit(items, 100 * t);
  EXPECT_FALSE(registry->timesVisits(items)) << "the fifth visit stopped the timing";
  EXPECT_EQ(registry->takeVisitTimes(items).timed, ProgressRegistry::kIncompleteTimes);
  registry->timeVisits(items, 0);
  EXPECT_FALSE(registry->timesVisits(items));
}
