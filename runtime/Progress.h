//===- runtime/Progress.h - Progress points: counters merged by name ------===//
//
// A progress point is (kind, name): a throughput point counts visits, a
// latency point counts begins and ends. Its visits live in counters the
// program increments itself (inline, no call): the pass's causal_counter
// records of each image (registered through __causal_register_counters) and
// the coz_counter_t objects handed out by _coz_get_counter (programs built
// with Coz's coz.h). Several counters of the same (kind, name), from several
// images, are summed. Registration may take a spin lock (never called from a
// signal handler); reading the totals is lock-free.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_RUNTIME_PROGRESS_H
#define CAUSAL_RUNTIME_PROGRESS_H

#include "SpinLock.h"

#include "causal/abi.h"
#include "causal/tunables.h"

#include <atomic>
#include <stddef.h>
#include <stdint.h>

namespace causal::rt {

/// What coz.h expects _coz_get_counter to return (its coz_counter_t).
struct CozCounter {
  size_t count;
  size_t backoff; // unused, as in Coz
};

enum class PointKind : uint32_t { Throughput = 0, Latency = 1 };

/// The name a point is kept and written under: |name| itself if it fits in
/// CAUSAL_MAX_POINT_NAME (with its NUL), else its beginning (cut at a UTF-8
/// character), "...#" and 16 hex digits of a hash of the whole name, so that
/// the cut shows and long names sharing their beginning stay distinct.
void storedPointName(const char *name, char (&stored)[CAUSAL_MAX_POINT_NAME]);

class ProgressRegistry {
public:
  static constexpr uint32_t kMaxPoints = CAUSAL_MAX_PROGRESS_POINTS;
  static constexpr uint32_t kMaxCounters = CAUSAL_MAX_COUNTERS_PER_POINT;
  static constexpr uint32_t kMaxCozCounters = CAUSAL_MAX_PROGRESS_POINTS * 2;

  /// Adds every well-formed record of [start, stop). A record already
  /// added (same address) is skipped, so calling twice is harmless.
  /// Returns the number of records newly added.
  uint32_t registerCounters(causal_counter *start, causal_counter *stop);

  /// Coz's _coz_get_counter: one counter per (type, name), created on first
  /// use; null for an unknown type, a null name or when full.
  CozCounter *cozCounter(int type, const char *name);

  /// Counters that live in [begin, end) (an image being unloaded): their
  /// current values are kept and they are no longer read; their slots are
  /// free for the next counter of the same point (the library loaded again).
  /// Returns once no reader can still read them: true, or false if one was
  /// still counted after CAUSAL_GRACE_PERIOD_WAIT_NS (waitForReaders).
  bool retireRange(uintptr_t begin, uintptr_t end);

  uint32_t size() const { return num_points_.load(std::memory_order_acquire); }
  const char *name(uint32_t point) const { return points_[point].name; }
  PointKind kind(uint32_t point) const { return points_[point].kind; }
  /// Visits of a throughput point, begins of a latency point.
  uint64_t arrivals(uint32_t point) const { return sum(points_[point].begins); }
  /// Ends of a latency point (0 for a throughput point).
  uint64_t departures(uint32_t point) const { return sum(points_[point].ends); }
  /// Requests of a latency point in flight now. Departures are read before
  /// arrivals: a request that begins and ends between the two reads counts
  /// as in flight, never as a departure without its arrival, so the count
  /// is never below 0 (read the other way round it was, when the reading
  /// thread was held up between its reads).
  int64_t inFlight(uint32_t point) const {
    uint64_t ends = departures(point);
    return int64_t(arrivals(point) - ends);
  }

  /// Event sums of a latency point since the last take: the virtual times
  /// (docs/report.md, "Latency") of its begin and end visits that went
  /// through the runtime (CAUSAL_PROGRESS_VISIT_FN), and their counts.
  struct VisitSums {
    int64_t begin_ns = 0, end_ns = 0;
    uint64_t begins = 0, ends = 0;
  };

  /// Signal-safe: the point a visit of |counter| (a causal_counter of an
  /// image or a CozCounter handed out here) belongs to, as its index, and in
  /// |end| whether it is a latency point's end; kNoPoint for a counter the
  /// registry does not know. No search.
  static constexpr uint32_t kNoPoint = ~0u;
  uint32_t pointOf(const void *counter, bool *end) const;
  /// pointOf, for latency points only (kNoLatencyPoint for the others).
  static constexpr uint32_t kNoLatencyPoint = kNoPoint;
  uint32_t latencyPointOf(const void *counter, bool *end) const;
  /// In a registered causal_counter's flags: the point is a throughput one.
  static constexpr uint32_t kThroughputFlag = 1u << 31;

  /// Signal-safe: a visit of point |point| (its end if |end|) at virtual
  /// time |virtual_ns| is added to its sums.
  void recordVisit(uint32_t point, bool end, int64_t virtual_ns);

  /// Returns point |point|'s sums and starts new ones.
  VisitSums takeVisitSums(uint32_t point);

  /// The times of a throughput point's visits since the last take, in
  /// virtual time (docs/report.md, "Throughput from visit times"): how many
  /// were timed, the first and the last, and the sum of the squared gaps
  /// between consecutive ones (ns^2).
  struct VisitTimes {
    uint64_t timed = 0;
    int64_t first_ns = 0, last_ns = 0;
    double gap_squares = 0;
  };
  /// Whether visits of throughput point |point| are timed (the clock is
  /// read only for points that are visited rarely enough: Experiment.cpp).
  bool timesVisits(uint32_t point) const {
    return points_[point].times_visits.load(std::memory_order_relaxed);
  }
  /// Times point |point|'s next |max_visits| visits (none if 0); a visit
  /// beyond them stops the timing and makes the take incomplete.
  void timeVisits(uint32_t point, uint64_t max_visits) {
    points_[point].max_timed_visits.store(max_visits, std::memory_order_relaxed);
    points_[point].times_visits.store(max_visits != 0, std::memory_order_relaxed);
  }
  /// VisitTimes::timed of a take in which more visits came than were timed.
  static constexpr uint64_t kIncompleteTimes = UINT64_MAX;
  /// last_ns of a point with no timed visit since the last take.
  static constexpr int64_t kNoVisitTime = INT64_MIN;
  /// Signal-safe: a visit of throughput point |point| at |virtual_ns|.
  void recordTimedVisit(uint32_t point, int64_t virtual_ns);
  /// Returns point |point|'s visit times and starts new ones.
  VisitTimes takeVisitTimes(uint32_t point);

  /// Forgets everything (tests only).
  void resetForTesting();

private:
  struct CounterList {
    std::atomic<uint64_t *> counters[kMaxCounters];
    std::atomic<uint32_t> size;
    std::atomic<uint64_t> retired; // values of counters of unloaded images
  };
  struct Point {
    PointKind kind;
    char name[CAUSAL_MAX_POINT_NAME];
    CounterList begins; // visits (throughput) or begins (latency)
    CounterList ends;
    std::atomic<int64_t> begin_ns, end_ns; // VisitSums
    std::atomic<uint64_t> begin_visits, end_visits;
    std::atomic<bool> times_visits; // VisitTimes, throughput points
    std::atomic<uint64_t> max_timed_visits;
    std::atomic<uint64_t> timed_visits;
    std::atomic<int64_t> first_ns, last_ns;
    std::atomic<uint64_t> gap_squares; // a double's bits
  };
  struct CozSlot {
    int type;
    uint32_t point;
    CozCounter counter;
  };

  uint64_t sum(const CounterList &list) const;
  /// Adds |counter| to point (kind, name); |index| gets the point's index
  /// (kMaxPoints if none) even when the counter was there already.
  bool addCounter(uint32_t kind_code, const char *name, uint64_t *counter, uint32_t *index);
  uint32_t findOrAddPoint(PointKind kind, const char *name); // lock held
  Point points_[kMaxPoints] = {};
  std::atomic<uint32_t> num_points_{0};
  CozSlot coz_[kMaxCozCounters] = {};
  std::atomic<uint32_t> num_coz_{0};
  SpinLock lock_;
  std::atomic<bool> said_full_{false};
  // retireRange against sum(): odd while counters move to |retired|; and
  // the readers in sum(), counted by phase: retireRange starts a new phase
  // and waits for the readers of the old one before the image goes.
  std::atomic<uint32_t> retiring_{0};
  std::atomic<uint32_t> reader_phase_{0};
  mutable std::atomic<uint32_t> readers_[2] = {};
  std::atomic<uint32_t> abandoned_readers_[2] = {}; // given up on (waitForReaders)
};

} // namespace causal::rt

#endif // CAUSAL_RUNTIME_PROGRESS_H
