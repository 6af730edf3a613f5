//===- runtime/Progress.cpp - Progress points: counters merged by name ----===//

#include "Progress.h"

#include "Support.h"

#include <initializer_list>
#include <sched.h>
#include <string.h>

namespace causal::rt {

uint64_t ProgressRegistry::sum(const CounterList &list) const {
  // A counter being retired (retireRange) moves its value to |retired| and
  // leaves the list: retry while one moves, so a total never counts it twice
  // nor not at all. Registering the reader first lets retireRange wait until
  // no reader still holds a pointer into the unmapped image.
  uint32_t phase;
  for (;;) {
    uint32_t seen = reader_phase_.load(std::memory_order_seq_cst);
    phase = seen & 1;
    readers_[phase].fetch_add(1, std::memory_order_seq_cst);
    // Registered in the phase still current: a retireRange that ends it
    // waits for this reader; pointers are loaded after this.
    if (reader_phase_.load(std::memory_order_seq_cst) == seen)
      break;
    readers_[phase].fetch_sub(1, std::memory_order_release);
  }
  uint64_t total;
  for (;;) {
    uint32_t generation = retiring_.load(std::memory_order_acquire);
    if (generation & 1) {
      sched_yield();
      continue;
    }
    total = list.retired.load(std::memory_order_relaxed);
    uint32_t n = list.size.load(std::memory_order_acquire);
    for (uint32_t i = 0; i < n; ++i)
      if (uint64_t *counter = list.counters[i].load(std::memory_order_acquire))
        total += __atomic_load_n(counter, __ATOMIC_RELAXED);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (retiring_.load(std::memory_order_relaxed) == generation)
      break;
  }
  readers_[phase].fetch_sub(1, std::memory_order_release);
  return total;
}

void storedPointName(const char *name, char (&stored)[CAUSAL_MAX_POINT_NAME]) {
  size_t length = strlen(name);
  if (length < CAUSAL_MAX_POINT_NAME) {
    memcpy(stored, name, length + 1);
    return;
  }
  // Too long: the first bytes, cut at a UTF-8 character's start, then a
  // hash of the whole name (FNV-1a), so that two long names that share
  // their beginning stay two points and the profile shows the cut.
  uint64_t hash = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < length; ++i)
    hash = (hash ^ uint8_t(name[i])) * 0x100000001b3ull;
  constexpr size_t kSuffix = 4 + 16; // "...#" and the hash
  size_t keep = CAUSAL_MAX_POINT_NAME - 1 - kSuffix;
  while (keep > 0 && (uint8_t(name[keep]) & 0xc0) == 0x80)
    --keep;
  memcpy(stored, name, keep);
  memcpy(stored + keep, "...#", 4);
  for (int i = 0; i < 16; ++i)
    stored[keep + 4 + i] = "0123456789abcdef"[(hash >> (60 - 4 * i)) & 15];
  stored[keep + kSuffix] = 0;
}

uint32_t ProgressRegistry::findOrAddPoint(PointKind kind, const char *name) {
  char stored[CAUSAL_MAX_POINT_NAME];
  storedPointName(name, stored);
  uint32_t n = num_points_.load(std::memory_order_relaxed);
  for (uint32_t i = 0; i < n; ++i)
    if (points_[i].kind == kind && strcmp(points_[i].name, stored) == 0)
      return i;
  if (n >= kMaxPoints)
    return kMaxPoints;
  Point &point = points_[n];
  point.kind = kind;
  point.first_ns.store(INT64_MAX, std::memory_order_relaxed);
  point.last_ns.store(kNoVisitTime, std::memory_order_relaxed);
  // Kept as given: the profile writer escapes what a record line cannot hold.
  memcpy(point.name, stored, strlen(stored) + 1);
  num_points_.store(n + 1, std::memory_order_release);
  return n;
}

bool ProgressRegistry::addCounter(uint32_t kind_code, const char *name, uint64_t *counter,
                                  uint32_t *point_index) {
  *point_index = kMaxPoints;
  if (!name || !counter || kind_code < CAUSAL_COUNTER_THROUGHPUT || kind_code > CAUSAL_COUNTER_END)
    return false;
  PointKind kind =
      kind_code == CAUSAL_COUNTER_THROUGHPUT ? PointKind::Throughput : PointKind::Latency;
  uint32_t index = findOrAddPoint(kind, name);
  *point_index = index;
  if (index == kMaxPoints) {
    if (!said_full_.exchange(true))
      message("more than %u progress points; '%s' and later ones are ignored", kMaxPoints, name);
    return false;
  }
  CounterList &list = kind_code == CAUSAL_COUNTER_END ? points_[index].ends : points_[index].begins;
  uint32_t n = list.size.load(std::memory_order_relaxed);
  uint32_t free_slot = n;
  for (uint32_t i = 0; i < n; ++i) {
    uint64_t *known = list.counters[i].load(std::memory_order_relaxed);
    if (known == counter)
      return false; // idempotent
    if (!known && free_slot == n)
      free_slot = i; // left by an unloaded image (retireRange)
  }
  if (free_slot < n) {
    // Readers that summed the old counter are gone (retireRange waited).
    list.counters[free_slot].store(counter, std::memory_order_release);
    return true;
  }
  if (n >= kMaxCounters) {
    if (!said_full_.exchange(true))
      message("progress point '%s' has more than %u counters at once; the rest are ignored", name,
              kMaxCounters);
    return false;
  }
  list.counters[n].store(counter, std::memory_order_release);
  list.size.store(n + 1, std::memory_order_release);
  return true;
}

uint32_t ProgressRegistry::registerCounters(causal_counter *start, causal_counter *stop) {
  if (!start || !stop || stop <= start)
    return 0;
  uint32_t added = 0;
  lock_.lock();
  for (causal_counter *record = start; record < stop; ++record) {
    uint32_t index;
    if (addCounter(record->kind, record->name, &record->count, &index))
      ++added;
    // latencyPointOf finds the point through the record (abi.h): index + 1,
    // with kThroughputFlag for a throughput point (nothing to record).
    if (index != kMaxPoints)
      __atomic_store_n(&record->flags,
                       (index + 1) |
                           (points_[index].kind == PointKind::Throughput ? kThroughputFlag : 0u),
                       __ATOMIC_RELEASE);
  }
  lock_.unlock();
  return added;
}

CozCounter *ProgressRegistry::cozCounter(int type, const char *name) {
  if (!name || type < int(CAUSAL_COUNTER_THROUGHPUT) || type > int(CAUSAL_COUNTER_END))
    return nullptr;
  char stored[CAUSAL_MAX_POINT_NAME];
  storedPointName(name, stored);
  lock_.lock();
  uint32_t n = num_coz_.load(std::memory_order_relaxed);
  for (uint32_t i = 0; i < n; ++i) {
    CozSlot &slot = coz_[i];
    if (slot.type == type && strcmp(points_[slot.point].name, stored) == 0) {
      lock_.unlock();
      return &slot.counter;
    }
  }
  CozCounter *result = nullptr;
  if (n < kMaxCozCounters) {
    CozSlot &slot = coz_[n];
    slot.type = type;
    slot.counter.count = 0;
    static_assert(sizeof(size_t) == sizeof(uint64_t), "coz_counter_t.count is a size_t");
    uint32_t index;
    if (addCounter(uint32_t(type), name, reinterpret_cast<uint64_t *>(&slot.counter.count),
                   &index)) {
      slot.point = index;
      num_coz_.store(n + 1, std::memory_order_release);
      result = &slot.counter;
    }
  }
  lock_.unlock();
  return result;
}

uint32_t ProgressRegistry::latencyPointOf(const void *counter, bool *end) const {
  uint32_t index = pointOf(counter, end);
  return index != kNoPoint && points_[index].kind == PointKind::Latency ? index : kNoLatencyPoint;
}

uint32_t ProgressRegistry::pointOf(const void *counter, bool *end) const {
  *end = false;
  uint32_t index;
  uintptr_t address = reinterpret_cast<uintptr_t>(counter);
  uintptr_t coz_begin = reinterpret_cast<uintptr_t>(&coz_[0].counter);
  if (address >= coz_begin && address < coz_begin + sizeof coz_ &&
      (address - coz_begin) % sizeof(CozSlot) == 0) {
    size_t slot_index = (address - coz_begin) / sizeof(CozSlot);
    if (slot_index >= num_coz_.load(std::memory_order_acquire))
      return kNoPoint;
    const CozSlot &slot = coz_[slot_index];
    index = slot.point;
    *end = slot.type == int(CAUSAL_COUNTER_END);
    return index;
  }
  const causal_counter *record = static_cast<const causal_counter *>(counter);
  uint32_t flags = __atomic_load_n(&record->flags, __ATOMIC_ACQUIRE);
  if (flags == 0) // not registered (yet)
    return kNoPoint;
  *end = record->kind == CAUSAL_COUNTER_END;
  return (flags & ~kThroughputFlag) - 1;
}

void ProgressRegistry::recordVisit(uint32_t index, bool end, int64_t virtual_ns) {
  Point &point = points_[index];
  (end ? point.end_ns : point.begin_ns).fetch_add(virtual_ns, std::memory_order_relaxed);
  (end ? point.end_visits : point.begin_visits).fetch_add(1, std::memory_order_relaxed);
}

ProgressRegistry::VisitSums ProgressRegistry::takeVisitSums(uint32_t point_index) {
  Point &point = points_[point_index];
  VisitSums sums;
  sums.begin_ns = point.begin_ns.exchange(0, std::memory_order_relaxed);
  sums.end_ns = point.end_ns.exchange(0, std::memory_order_relaxed);
  sums.begins = point.begin_visits.exchange(0, std::memory_order_relaxed);
  sums.ends = point.end_visits.exchange(0, std::memory_order_relaxed);
  return sums;
}

void ProgressRegistry::recordTimedVisit(uint32_t index, int64_t virtual_ns) {
  Point &point = points_[index];
  if (point.timed_visits.fetch_add(1, std::memory_order_relaxed) >=
      point.max_timed_visits.load(std::memory_order_relaxed)) {
    point.times_visits.store(false, std::memory_order_relaxed); // visited too often
    return;
  }
  // Visits of several threads may cross between their clock reads and
  // here: the span runs from the earliest visit to the last one recorded,
  // and a gap that comes out negative counts as 0.
  int64_t first = point.first_ns.load(std::memory_order_relaxed);
  while (virtual_ns < first &&
         !point.first_ns.compare_exchange_weak(first, virtual_ns, std::memory_order_relaxed)) {
  }
  int64_t previous = point.last_ns.exchange(virtual_ns, std::memory_order_relaxed);
  if (previous == kNoVisitTime || virtual_ns <= previous)
    return;
  double gap = double(virtual_ns - previous);
  uint64_t bits = point.gap_squares.load(std::memory_order_relaxed);
  for (;;) {
    double sum;
    memcpy(&sum, &bits, sizeof sum);
    sum += gap * gap;
    uint64_t next;
    memcpy(&next, &sum, sizeof next);
    if (point.gap_squares.compare_exchange_weak(bits, next, std::memory_order_relaxed))
      break;
  }
}

ProgressRegistry::VisitTimes ProgressRegistry::takeVisitTimes(uint32_t index) {
  Point &point = points_[index];
  VisitTimes times;
  times.timed = point.timed_visits.exchange(0, std::memory_order_relaxed);
  if (times.timed > point.max_timed_visits.load(std::memory_order_relaxed))
    times.timed = kIncompleteTimes;
  times.first_ns = point.first_ns.exchange(INT64_MAX, std::memory_order_relaxed);
  times.last_ns = point.last_ns.exchange(kNoVisitTime, std::memory_order_relaxed);
  uint64_t bits = point.gap_squares.exchange(0, std::memory_order_relaxed);
  memcpy(&times.gap_squares, &bits, sizeof times.gap_squares);
  return times;
}

bool ProgressRegistry::retireRange(uintptr_t begin, uintptr_t end) {
  lock_.lock();
  retiring_.fetch_add(1, std::memory_order_seq_cst); // odd: readers wait and retry
  uint32_t n = num_points_.load(std::memory_order_relaxed);
  for (uint32_t p = 0; p < n; ++p) {
    for (CounterList *list : {&points_[p].begins, &points_[p].ends}) {
      uint32_t size = list->size.load(std::memory_order_relaxed);
      for (uint32_t i = 0; i < size; ++i) {
        uint64_t *counter = list->counters[i].load(std::memory_order_relaxed);
        uintptr_t address = reinterpret_cast<uintptr_t>(counter);
        if (!counter || address < begin || address >= end)
          continue;
        // A reader summing meanwhile retries (retiring_ changes), so it
        // counts the value once, here or in the counter.
        list->retired.fetch_add(__atomic_load_n(counter, __ATOMIC_RELAXED),
                                std::memory_order_relaxed);
        list->counters[i].store(nullptr, std::memory_order_release);
      }
    }
  }
  retiring_.fetch_add(1, std::memory_order_seq_cst);
  // Grace period: a reader that loaded a pointer of this image before it
  // left the list may still read through it; dlclose unmaps the image once
  // this returns. The slots it left are reused by the next registration
  // (the same library loaded again).
  // Readers that start from now on count in the other phase and cannot see
  // the pointers removed above: wait only for those of the current one (a
  // reader that reads again and again cannot hold this up).
  uint32_t phase = reader_phase_.fetch_add(1, std::memory_order_seq_cst) & 1;
  bool waited = waitForReaders(readers_[phase], &abandoned_readers_[phase]);
  lock_.unlock();
  return waited;
}

void ProgressRegistry::resetForTesting() {
  lock_.lock();
  for (Point &point : points_) {
    point.begin_ns.store(0);
    point.end_ns.store(0);
    point.begin_visits.store(0);
    point.end_visits.store(0);
    point.times_visits.store(false);
    point.max_timed_visits.store(0);
    point.timed_visits.store(0);
    point.first_ns.store(INT64_MAX);
    point.last_ns.store(kNoVisitTime);
    point.gap_squares.store(0);
    point.begins.size.store(0);
    point.begins.retired.store(0);
    point.ends.size.store(0);
    point.ends.retired.store(0);
  }
  num_points_.store(0);
  num_coz_.store(0);
  lock_.unlock();
}

} // namespace causal::rt
