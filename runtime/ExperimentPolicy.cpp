//===- runtime/ExperimentPolicy.cpp - Choices the experiment controller makes -===//

#include "ExperimentPolicy.h"

#include "causal/profile_schema.h"
#include "causal/tunables.h"

#include <algorithm>
#include <fnmatch.h>
#include <limits.h>
#include <math.h>
#include <string.h>

namespace causal::rt {

uint64_t Rng::next() { return splitmix64(state_); }

uint32_t Rng::uniformInclusive(uint32_t bound) {
  uint64_t range = uint64_t(bound) + 1;
  // Rejection sampling: no modulo bias.
  uint64_t limit = UINT64_MAX - UINT64_MAX % range;
  uint64_t value;
  do
    value = next();
  while (value >= limit);
  return uint32_t(value % range);
}

uint32_t drawSpeedupPercent(Rng &rng) {
  uint32_t r = rng.uniformInclusive(CAUSAL_ZERO_SPEEDUP_WEIGHT + CAUSAL_SPEEDUP_DIVISIONS);
  if (r <= CAUSAL_ZERO_SPEEDUP_WEIGHT)
    return 0;
  return (r - CAUSAL_ZERO_SPEEDUP_WEIGHT) * 100 / CAUSAL_SPEEDUP_DIVISIONS;
}

uint32_t abSpeedupPercent(uint64_t index, uint32_t speedup_percent) {
  uint64_t phase = index % 4;
  return phase == 1 || phase == 2 ? speedup_percent : 0;
}

uint64_t nextExperimentLength(uint64_t length_ns, uint64_t min_visits, uint64_t minimum_ns) {
  if (min_visits < CAUSAL_MIN_VISITS) {
    if (length_ns <= CAUSAL_MAX_EXPERIMENT_NS / 2)
      length_ns *= 2;
  } else if (min_visits > 2 * CAUSAL_MIN_VISITS && length_ns >= 2 * minimum_ns) {
    length_ns /= 2;
  }
  return length_ns < minimum_ns ? minimum_ns : length_ns;
}

uint32_t linePeriodDivisor(uint64_t period_ns, int64_t line_period_ns, uint64_t cost_ns) {
  if (line_period_ns == 0)
    return 1;
  uint64_t k = CAUSAL_LINE_PERIOD_DIVISOR;
  if (line_period_ns > 0)
    k = period_ns / uint64_t(line_period_ns);
  else
    while (k > 1 && period_ns / k < CAUSAL_LINE_PERIOD_COST_MULTIPLE * cost_ns)
      --k;
  k = std::min<uint64_t>(k, CAUSAL_LINE_PERIOD_DIVISOR_MAX);
  while (k > 1 && period_ns / k < CAUSAL_MIN_SAMPLE_PERIOD_NS)
    --k;
  return k ? uint32_t(k) : 1;
}

DelaySettlement settleDelayCounts(uint64_t local, uint64_t global, uint64_t floor,
                                  bool experiment_active) {
  if (!experiment_active) // between experiments nobody pauses: skip to the global count
    return {global, 0, 0};
  if (local < floor)
    local = floor;
  if (local > global) // minimize delays: this thread ran the line, the others pause
    return {local, local, 0};
  return {global, 0, global - local};
}

int64_t visitVirtualNs(int64_t real_ns, uint64_t local, uint64_t floor, uint64_t excess) {
  uint64_t taken = local > floor ? local - floor : 0; // older debts are forgiven
  return real_ns - int64_t(taken) - int64_t(excess);
}

LatencyWindow latencyWindow(const LatencyCounts &start, const LatencyCounts &end,
                            const LatencySums &sums, int64_t virtual_end) {
  LatencyWindow window{NAN, end.begins - start.begins, end.ends - start.ends};
  auto racing = [](uint64_t summed, uint64_t counted) {
    return (summed > counted ? summed - counted : counted - summed) <= kRacingVisits;
  };
  if (virtual_end <= 0 || !racing(sums.begins, window.arrivals) ||
      !racing(sums.ends, window.departures))
    return window;
  int64_t in_flight_start = int64_t(start.begins - start.ends);
  if (sums.begins > window.arrivals) // counted at the start and in the sums
    in_flight_start -= int64_t(sums.begins - window.arrivals);
  if (sums.ends > window.departures)
    in_flight_start += int64_t(sums.ends - window.departures);
  int64_t in_flight_end = in_flight_start + int64_t(sums.begins) - int64_t(sums.ends);
  if (in_flight_start < 0 || in_flight_end < 0)
    return window;
  double area = double(sums.end_ns - sums.begin_ns) + double(in_flight_end) * double(virtual_end);
  window.in_flight = area / double(virtual_end);
  window.arrivals = sums.begins;
  window.departures = sums.ends;
  return window;
}

uint64_t sharedCpuDelay(uint64_t shared_cpu_delay_ns, uint64_t competing_cpu_ns,
                        uint64_t delay_per_sample_ns, uint64_t period_ns, uint64_t elapsed_ns) {
  if (!shared_cpu_delay_ns || !delay_per_sample_ns || !period_ns || !elapsed_ns)
    return 0;
  // A thread counts as competing when its sample adds shared delay (its
  // recent run-queue time) and at the end of the experiment (its run-queue
  // time over the experiment); the two can disagree for a thread that
  // competed only briefly. Counting its shared samples' CPU time in B keeps
  // the delay within speedup x elapsed: without it, 61 shared samples against
  // 3 counted made 302 ms of delay in a 100 ms experiment.
  uint64_t shared_samples = shared_cpu_delay_ns / delay_per_sample_ns;
  unsigned __int128 busy_ns =
      std::max<unsigned __int128>(competing_cpu_ns, (unsigned __int128)shared_samples * period_ns);
  if (!busy_ns)
    return 0;
  // delay / B, B = busy CPU time / elapsed (below one CPU: the competitors
  // shared it with other processes), in integers.
  unsigned __int128 scaled = (unsigned __int128)shared_cpu_delay_ns * elapsed_ns;
  return uint64_t(scaled / busy_ns);
}

bool processOversubscribed(double cpus, double running, double waiting) {
  return cpus > 0 && running + waiting > cpus * CAUSAL_OVERSUBSCRIBED_PERCENT / 100.0;
}

double probeWaitingForOthers(uint64_t wait_ns, uint64_t elapsed_ns) {
  if (!elapsed_ns || wait_ns < CAUSAL_SATURATION_PROBE_MIN_WAIT_NS)
    return 0;
  return double(wait_ns) / double(elapsed_ns);
}

bool processWaitsForOthers(double cpus, double running, double waiting) {
  return !processOversubscribed(cpus, running, waiting) &&
         waiting * CAUSAL_COMPETING_WAIT_DIVISOR > running && waiting > 0;
}

bool spinLeavesCpuIdle(uint32_t runnable, uint32_t cpus) { return runnable < cpus; }

bool spinIsHarmless(int64_t spare_ns, uint64_t own_ns, uint64_t window_ns) {
  if (window_ns == 0)
    return true;
  return double(spare_ns) + double(own_ns) >=
         double(window_ns) * CAUSAL_SPIN_FREE_CPU_PERCENT / 100.0;
}

bool updateCompetition(uint64_t *recent_cpu_ns, uint64_t *recent_wait_ns, uint64_t cpu_ns,
                       uint64_t wait_ns) {
  *recent_cpu_ns = *recent_cpu_ns - *recent_cpu_ns / 4 + cpu_ns;
  *recent_wait_ns = *recent_wait_ns - *recent_wait_ns / 4 + wait_ns;
  return *recent_wait_ns > *recent_cpu_ns / CAUSAL_COMPETING_WAIT_DIVISOR;
}

uint32_t cpuShareScaleX1024(uint64_t cpu_ns, uint64_t wait_ns) {
  if (cpu_ns == 0 || wait_ns <= cpu_ns / CAUSAL_COMPETING_WAIT_DIVISOR)
    return 1024;
  uint64_t cap = 1024ull * CAUSAL_CPU_SHARE_SCALE_MAX_PERCENT / 100;
  // (cpu + wait) / cpu in 1/1024, computed so that it cannot overflow.
  unsigned __int128 scaled = ((unsigned __int128)cpu_ns + wait_ns) * 1024;
  unsigned __int128 ratio = scaled / cpu_ns;
  return uint32_t(ratio < cap ? ratio : cap);
}

uint32_t lostSampleScaleX1024(uint64_t arrived, uint64_t covered_user_ns, uint64_t user_ns,
                              uint64_t total_ns, uint64_t period_ns) {
  if (arrived == 0 || period_ns == 0 || user_ns > total_ns)
    return 1024;
  if ((total_ns - user_ns) * 100 > total_ns * CAUSAL_LOSS_MAX_SYSTEM_PERCENT)
    return 1024;
  // expected / arrived = covered / (period * arrived), in 1/1024.
  unsigned __int128 scaled = (unsigned __int128)covered_user_ns * 1024;
  uint64_t ratio = uint64_t(scaled / ((unsigned __int128)period_ns * arrived));
  if (ratio * 100 < 1024ull * CAUSAL_LOSS_SCALE_FROM_PERCENT)
    return 1024;
  uint64_t cap = 1024ull * CAUSAL_LOSS_SCALE_MAX_PERCENT / 100;
  return uint32_t(ratio < cap ? ratio : cap);
}

PausePlan planPause(uint64_t owed_ns, uint64_t excess_ns) {
  if (excess_ns >= owed_ns)
    return {0, excess_ns - owed_ns};
  return {owed_ns - excess_ns, 0};
}

bool matchesAnyGlob(const char *globs, const char *path) {
  if (!globs || !path)
    return false;
  char glob[1024];
  const char *p = globs;
  for (;;) {
    const char *colon = strchr(p, ':');
    size_t length = colon ? size_t(colon - p) : strlen(p);
    if (length > 0 && length < sizeof(glob)) {
      memcpy(glob, p, length);
      glob[length] = 0;
      if (fnmatch(glob, path, 0) == 0)
        return true;
    }
    if (!colon)
      return false;
    p = colon + 1;
  }
}

bool inDefaultSourceScope(const char *path) {
  return path && !matchesAnyGlob(CAUSAL_SYSTEM_SOURCE_GLOBS, path);
}

const char *waitTargetName(WaitTarget kind) {
  unsigned index = unsigned(kind);
  return index < profile_schema::kWaitTargetKindCount ? profile_schema::kWaitTargetKinds[index]
                                                      : nullptr;
}

bool parseFixedWait(const char *text, char *file, size_t file_size, uint32_t *line,
                    WaitTarget *kind) {
  if (!text)
    return false;
  *kind = WaitTarget::None;
  char copy[PATH_MAX + 32];
  size_t length = strlen(text);
  if (length >= sizeof(copy))
    return false;
  memcpy(copy, text, length + 1);
  char *colon = strrchr(copy, ':');
  char *at = colon ? strchr(colon, '@') : nullptr;
  if (at) {
    *at = 0;
    const char *name = at + 1;
    for (unsigned k = 1; k < profile_schema::kWaitTargetKindCount; ++k)
      if (!strcmp(name, profile_schema::kWaitTargetKinds[k]))
        *kind = WaitTarget(k);
    if (*kind == WaitTarget::None)
      return false;
  }
  return parseFixedLine(copy, file, file_size, line);
}

bool parseFixedLine(const char *text, char *file, size_t file_size, uint32_t *line) {
  if (!text)
    return false;
  const char *colon = strrchr(text, ':');
  if (!colon || colon == text || !colon[1])
    return false;
  uint64_t value = 0;
  for (const char *p = colon + 1; *p; ++p) {
    if (*p < '0' || *p > '9' || value > 0xffffffffull / 10)
      return false;
    value = value * 10 + uint64_t(*p - '0');
  }
  size_t length = size_t(colon - text);
  if (value == 0 || value > 0xffffffffull || length >= file_size)
    return false;
  memcpy(file, text, length);
  file[length] = 0;
  *line = uint32_t(value);
  return true;
}

// True if |longer| ends with "/" |shorter|.
static bool endsWithComponents(const char *longer, size_t longer_length, const char *shorter,
                               size_t shorter_length) {
  return longer_length > shorter_length && longer[longer_length - shorter_length - 1] == '/' &&
         strcmp(longer + longer_length - shorter_length, shorter) == 0;
}

bool pathMatchesFixedFile(const char *path, const char *file) {
  size_t path_length = strlen(path), file_length = strlen(file);
  if (path_length == file_length)
    return strcmp(path, file) == 0;
  // "src/a.c" names "/home/me/src/a.c"; a table that kept a relative path
  // ("src/a.c") is named by the absolute path of the same file.
  return endsWithComponents(path, path_length, file, file_length) ||
         (path[0] != '/' && endsWithComponents(file, file_length, path, path_length));
}

} // namespace causal::rt
