//===- runtime/Progress.cpp - Progress points: counters merged by name ----===//

#include "Progress.h"

#include "Support.h"

#include <initializer_list>
#include <string.h>

namespace causal::rt {

uint64_t ProgressRegistry::sum(const CounterList &list) {
  uint64_t total = list.retired.load(std::memory_order_relaxed);
  uint32_t n = list.size.load(std::memory_order_acquire);
  for (uint32_t i = 0; i < n; ++i)
    if (uint64_t *counter = list.counters[i].load(std::memory_order_acquire))
      total += __atomic_load_n(counter, __ATOMIC_RELAXED);
  return total;
}

uint32_t ProgressRegistry::findOrAddPoint(PointKind kind, const char *name) {
  uint32_t n = num_points_.load(std::memory_order_relaxed);
  for (uint32_t i = 0; i < n; ++i)
    if (points_[i].kind == kind && strncmp(points_[i].name, name, CAUSAL_MAX_POINT_NAME - 1) == 0)
      return i;
  if (n >= kMaxPoints)
    return kMaxPoints;
  Point &point = points_[n];
  point.kind = kind;
  size_t length = strnlen(name, CAUSAL_MAX_POINT_NAME - 1);
  memcpy(point.name, name, length);
  point.name[length] = 0;
  // Names go into tab-separated records: no tabs or newlines.
  for (size_t i = 0; i < length; ++i)
    if (point.name[i] == '\t' || point.name[i] == '\n' || point.name[i] == '\r')
      point.name[i] = ' ';
  num_points_.store(n + 1, std::memory_order_release);
  return n;
}

bool ProgressRegistry::addCounter(uint32_t kind_code, const char *name, uint64_t *counter) {
  if (!name || !counter || kind_code < CAUSAL_COUNTER_THROUGHPUT || kind_code > CAUSAL_COUNTER_END)
    return false;
  PointKind kind =
      kind_code == CAUSAL_COUNTER_THROUGHPUT ? PointKind::Throughput : PointKind::Latency;
  uint32_t index = findOrAddPoint(kind, name);
  if (index == kMaxPoints) {
    if (!said_full_.exchange(true))
      message("more than %u progress points; '%s' and later ones are ignored", kMaxPoints, name);
    return false;
  }
  CounterList &list = kind_code == CAUSAL_COUNTER_END ? points_[index].ends : points_[index].begins;
  uint32_t n = list.size.load(std::memory_order_relaxed);
  for (uint32_t i = 0; i < n; ++i)
    if (list.counters[i].load(std::memory_order_relaxed) == counter)
      return false; // idempotent
  if (n >= kMaxCounters) {
    if (!said_full_.exchange(true))
      message("progress point '%s' has more than %u counters; the rest are ignored", name,
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
  for (causal_counter *record = start; record < stop; ++record)
    if (addCounter(record->kind, record->name, &record->count))
      ++added;
  lock_.unlock();
  return added;
}

CozCounter *ProgressRegistry::cozCounter(int type, const char *name) {
  if (!name || type < int(CAUSAL_COUNTER_THROUGHPUT) || type > int(CAUSAL_COUNTER_END))
    return nullptr;
  lock_.lock();
  uint32_t n = num_coz_.load(std::memory_order_relaxed);
  for (uint32_t i = 0; i < n; ++i) {
    CozSlot &slot = coz_[i];
    if (slot.type == type &&
        strncmp(points_[slot.point].name, name, CAUSAL_MAX_POINT_NAME - 1) == 0) {
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
    if (addCounter(uint32_t(type), name, reinterpret_cast<uint64_t *>(&slot.counter.count))) {
      slot.point = findOrAddPoint(type == int(CAUSAL_COUNTER_THROUGHPUT) ? PointKind::Throughput
                                                                         : PointKind::Latency,
                                  name);
      num_coz_.store(n + 1, std::memory_order_release);
      result = &slot.counter;
    }
  }
  lock_.unlock();
  return result;
}

void ProgressRegistry::retireRange(uintptr_t begin, uintptr_t end) {
  lock_.lock();
  uint32_t n = num_points_.load(std::memory_order_relaxed);
  for (uint32_t p = 0; p < n; ++p) {
    for (CounterList *list : {&points_[p].begins, &points_[p].ends}) {
      uint32_t size = list->size.load(std::memory_order_relaxed);
      for (uint32_t i = 0; i < size; ++i) {
        uint64_t *counter = list->counters[i].load(std::memory_order_relaxed);
        uintptr_t address = reinterpret_cast<uintptr_t>(counter);
        if (!counter || address < begin || address >= end)
          continue;
        // Readers may be summing right now: they see either the counter or
        // its retired value, at worst both for an instant (a one-off excess
        // in one experiment of an unloading image).
        list->retired.fetch_add(__atomic_load_n(counter, __ATOMIC_RELAXED),
                                std::memory_order_relaxed);
        list->counters[i].store(nullptr, std::memory_order_release);
      }
    }
  }
  lock_.unlock();
}

void ProgressRegistry::resetForTesting() {
  lock_.lock();
  for (Point &point : points_) {
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
