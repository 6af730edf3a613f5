//===- Analysis.cpp - From experiments to causal profiles -----------------===//
#include "Analysis.h"

#include "causal/tunables.h"

#include <algorithm>
// -DCAUSAL_ANALYSIS_NO_AVX512 builds the scalar loops only (to check that
// both give the same output: bench/report-scale/compare.sh).
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) &&                            \
    !defined(CAUSAL_ANALYSIS_NO_AVX512)
#define CAUSAL_ANALYSIS_AVX512
#include <immintrin.h>
#endif
#include <array>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <tuple>

namespace causal::profile {

const char *shortfallText(Shortfall reason) {
  switch (reason) {
  case Shortfall::None:
    return "ok";
  case Shortfall::NoBaseline:
    return "no 0% (baseline) experiment";
  case Shortfall::BaselineTooFewVisits:
    return "too few visits in the 0% (baseline) experiments";
  case Shortfall::InvalidBaseline:
    return "baseline without progress";
  case Shortfall::TooFewSpeedups:
    return "too few distinct speedups";
  case Shortfall::TooLittleEvidence:
    return "too little evidence";
  }
  return "?";
}

namespace {
/// The least-squares slope of y = slope x through the origin, point by
/// point (the bootstrap adds its replicates' points without a curve).
struct OriginSlope {
  double sxy = 0, sxx = 0;
  void add(double x, double y) {
    sxy += x * y;
    sxx += x * x;
  }
  double value() const { return sxx > 0 ? sxy / sxx : 0; }
};
} // namespace

double slopeThroughOrigin(const std::vector<CurvePoint> &curve) {
  OriginSlope slope;
  for (const CurvePoint &point : curve)
    slope.add(point.speedup, point.programSpeedup);
  return slope.value();
}

double quantileSorted(const std::vector<double> &sorted, double q) {
  if (sorted.empty())
    return 0;
  double position = q * double(sorted.size() - 1);
  size_t below = size_t(std::floor(position));
  size_t above = std::min(sorted.size() - 1, below + 1);
  double fraction = position - double(below);
  return sorted[below] + (sorted[above] - sorted[below]) * fraction;
}

namespace {

/// The continued fraction of the regularized incomplete beta function
/// I_x(a, b) (modified Lentz evaluation); converges fast for
/// x < (a + 1) / (a + b + 2).
double incompleteBetaFraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300;
  auto guard = [](double v) { return std::fabs(v) < kTiny ? kTiny : v; };
  double c = 1, d = 1 / guard(1 - (a + b) * x / (a + 1)), h = d;
  for (int m = 1; m <= 500; ++m) {
    double twoM = 2.0 * m;
    double even = m * (b - m) * x / ((a + twoM - 1) * (a + twoM));
    d = 1 / guard(1 + even * d);
    c = guard(1 + even / c);
    h *= d * c;
    double odd = -(a + m) * (a + b + m) * x / ((a + twoM) * (a + twoM + 1));
    d = 1 / guard(1 + odd * d);
    c = guard(1 + odd / c);
    double step = d * c;
    h *= step;
    if (std::fabs(step - 1) < 1e-15)
      break;
  }
  return h;
}

/// The regularized incomplete beta function I_x(a, b).
double regularizedIncompleteBeta(double a, double b, double x) {
  if (x <= 0)
    return 0;
  if (x >= 1)
    return 1;
  double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) +
                          b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2))
    return front * incompleteBetaFraction(a, b, x) / a;
  return 1 - front * incompleteBetaFraction(b, a, 1 - x) / b;
}

/// P(T > t) for t >= 0, T of Student's t distribution with df degrees of
/// freedom.
double studentTUpperTail(double t, double df) {
  return 0.5 * regularizedIncompleteBeta(df / 2, 0.5, df / (df + t * t));
}

} // namespace

double studentTQuantile(double p, double df) {
  if (!(p > 0 && p < 1 && df > 0))
    return NAN;
  if (p < 0.5)
    return -studentTQuantile(1 - p, df);
  double tail = 1 - p, low = 0, high = 1;
  while (studentTUpperTail(high, df) > tail && high < 1e12)
    high *= 2;
  for (int i = 0; i < 200 && high - low > 1e-12 * high; ++i) {
    double middle = (low + high) / 2;
    (studentTUpperTail(middle, df) > tail ? low : high) = middle;
  }
  return (low + high) / 2;
}

double expandedPercentileConfidence(double confidence, size_t n) {
  if (n < 2 || !(confidence > 0 && confidence < 1))
    return confidence;
  double df = double(n - 1);
  double z = std::sqrt(double(n) / df) * studentTQuantile(1 - (1 - confidence) / 2, df);
  return std::erf(z / std::sqrt(2.0)); // P(|Z| <= z), Z standard normal
}

namespace {

/// One experiment's contribution to one (line, point, speedup) group.
struct Observation {
  double duration = 0;
  double delta = 0; // throughput visits
  // Throughput: the time and the number of gaps between visits that
  // estimate the period (from the visit times where the runtime wrote them,
  // else duration and delta: progressPeriodOf).
  double periodTime = 0, periodVisits = 0;
  double arrivals = 0;       // latency
  double departures = 0;     // latency
  double differenceTime = 0; // in-flight count x duration
  double selectedSamples = -1;
  double samplePeriodNs = kDefaultSamplePeriodNs; // of its run
};

/// Where an experiment's measurement of one progress point is: the
/// analysis keeps these (8 bytes) and computes the Observation when needed,
/// so that its memory grows with the profile's experiments by no more than
/// that (docs/report.md, "Memory").
struct MeasurementRef {
  uint32_t experiment = 0; // in Profile::experiments: the order in time
  uint32_t point = 0;      // in the experiment's points
};
using Measurements = std::vector<MeasurementRef>;

struct Sums {
  double duration = 0, delta = 0, arrivals = 0, departures = 0, differenceTime = 0;
  double periodTime = 0, periodVisits = 0;    // throughput: Observation's
  double phaseSamples = 0, phaseDuration = 0; // experiments that carry selected-samples
  double phaseSampleTime = 0;                 // their selected samples x sample period
  void add(const Observation &o) {
    bool phase = o.selectedSamples >= 0; // the experiment carries selected-samples
    add(Sums{o.duration, o.delta, o.arrivals, o.departures, o.differenceTime, o.periodTime,
             o.periodVisits, phase ? o.selectedSamples : 0, phase ? o.duration : 0,
             phase ? o.selectedSamples * o.samplePeriodNs : 0});
  }
  void add(const Sums &o) {
    duration += o.duration;
    delta += o.delta;
    arrivals += o.arrivals;
    departures += o.departures;
    differenceTime += o.differenceTime;
    periodTime += o.periodTime;
    periodVisits += o.periodVisits;
    phaseSamples += o.phaseSamples;
    phaseDuration += o.phaseDuration;
    phaseSampleTime += o.phaseSampleTime;
  }
};

/// The sampling period of run \p run (Coz's fixed 1 ms where not written).
double periodOfRun(const Profile &profile, size_t run) {
  return run < profile.runs.size() && profile.runs[run].samplePeriodNs > 0
             ? profile.runs[run].samplePeriodNs
             : kDefaultSamplePeriodNs;
}

/// An experiment whose own gaps vary more than a Poisson stream's and more
/// than this many times the run's median experiment's is a stall of the
/// program or of its machine, not the stream's regularity.
constexpr double kStalledWindowFactor = 16;
/// At most this share of a run's timed experiments is left out of the pool
/// as stalled (fewer than 1 / share: none): beyond it, the irregularity is
/// the stream's own.
constexpr double kStalledWindowShare = 0.1;

/// The squared coefficient of variation of |gaps| gaps spanning |spanNs| ns
/// whose squares sum to |squaresUs2| us^2 (at least 0).
double gapSquaredVariation(double spanNs, double gaps, double squaresUs2) {
  double mean = spanNs / gaps, meanSquare = squaresUs2 * 1e6 / gaps;
  return std::max(0.0, meanSquare / (mean * mean) - 1);
}

/// How regular the visits of each throughput point of each run are: the
/// squared coefficient of variation of the gaps between consecutive visits,
/// pooled over the run's experiments whose visits the runtime timed, less
/// the stalled ones (docs/report.md, "Throughput from visit times").
class VisitRegularity {
public:
  explicit VisitRegularity(const Profile &profile) {
    struct Window {
      double span, gaps, squares; // ns, count, us^2
      double cv2;                 // of its gaps alone
      bool stalled;
    };
    std::map<std::pair<size_t, std::string_view>, std::vector<Window>> runs;
    for (const Experiment &experiment : profile.experiments)
      for (const PointMeasurement &point : experiment.points)
        if (point.kind == PointKind::Throughput && point.spanNs > 0 && point.timedVisits >= 2) {
          double gaps = double(point.timedVisits - 1);
          runs[{experiment.run, point.name}].push_back(
              {point.spanNs, gaps, point.gapSquaresUs2,
               gapSquaredVariation(point.spanNs, gaps, point.gapSquaresUs2), false});
        }
    std::vector<double> order;
    std::vector<Window *> stalled;
    for (auto &[key, windows] : runs) {
      // The stalled windows: more irregular than a Poisson stream and than
      // kStalledWindowFactor x the median window (of those with 3 gaps or
      // more: one or two gaps say little), the worst first, up to
      // kStalledWindowShare of the windows.
      order.clear();
      for (const Window &w : windows)
        if (w.gaps >= 3)
          order.push_back(w.cv2);
      double limit = INFINITY;
      if (!order.empty()) {
        std::nth_element(order.begin(), order.begin() + order.size() / 2, order.end());
        limit = std::max(1.0, kStalledWindowFactor * order[order.size() / 2]);
      }
      size_t droppable = size_t(double(windows.size()) * kStalledWindowShare);
      stalled.clear();
      for (Window &w : windows)
        if (w.gaps >= 3 && w.cv2 >= limit)
          stalled.push_back(&w);
      std::sort(stalled.begin(), stalled.end(),
                [](const Window *a, const Window *b) { return a->cv2 > b->cv2; });
      for (size_t i = 0; i < std::min(stalled.size(), droppable); ++i)
        stalled[i]->stalled = true;
      double span = 0, gaps = 0, squares = 0;
      for (const Window &w : windows)
        if (!w.stalled) {
          span += w.span;
          gaps += w.gaps;
          squares += w.squares;
        }
      cv2_[key] = gapSquaredVariation(span, gaps, squares);
    }
  }
  /// NaN where no experiment of the run timed the point's visits.
  double gapCv2(size_t run, std::string_view point) const {
    auto found = cv2_.find({run, point});
    return found == cv2_.end() ? NAN : found->second;
  }

private:
  std::map<std::pair<size_t, std::string_view>, double> cv2_;
};

/// A profile and what the analysis derives from it once for every
/// measurement.
struct MeasuredProfile {
  const Profile &profile;
  VisitRegularity regularity;
  bool visitTimes;
  MeasuredProfile(const Profile &profile, const AnalysisOptions &options)
      : profile(profile), regularity(profile), visitTimes(options.visitTimes) {}
};

/// The period of a throughput point's visits in one experiment, as a time
/// and the number of gaps it holds. From the visit times where the runtime
/// timed every visit and they are regular enough (gaps' squared variation
/// below 1, a Poisson stream's): the span from the first visit to the last
/// holds n - 1 gaps, and the window's two ends, cut off, hold on average
/// (1 + cv^2) / 2 gaps each (the residual time of a stationary stream), so
/// span / (n - 1 - cv^2) estimates the period without the +-1 visit that a
/// count over the window carries. Otherwise duration / visits.
/// The squared variation of the gaps (NaN: the visit times are not used).
double periodFromVisitTimes(const MeasuredProfile &measured, const Experiment &experiment,
                            const PointMeasurement &point) {
  if (!measured.visitTimes || point.kind != PointKind::Throughput || !(point.spanNs > 0) ||
      point.timedVisits < 3)
    return NAN;
  double cv2 = measured.regularity.gapCv2(experiment.run, point.name);
  return cv2 < 1 ? cv2 : NAN;
}

void progressPeriodOf(const MeasuredProfile &measured, const Experiment &experiment,
                      const PointMeasurement &point, Observation &observation) {
  double cv2 = periodFromVisitTimes(measured, experiment, point);
  observation.periodTime = std::isnan(cv2) ? experiment.durationNs : point.spanNs;
  observation.periodVisits = std::isnan(cv2) ? point.delta : point.timedVisits - 1 - cv2;
}

/// One experiment's measurement of one progress point, as an observation.
Observation observationOf(const MeasuredProfile &measured, MeasurementRef ref) {
  const Profile &profile = measured.profile;
  const Experiment &experiment = profile.experiments[ref.experiment];
  const PointMeasurement &point = experiment.points[ref.point];
  Observation observation;
  observation.duration = experiment.durationNs;
  observation.selectedSamples = experiment.selectedSamples;
  observation.samplePeriodNs = periodOfRun(profile, experiment.run);
  if (point.kind == PointKind::Throughput) {
    observation.delta = point.delta;
    progressPeriodOf(measured, experiment, point, observation);
  } else {
    observation.arrivals = point.arrivals;
    observation.departures = point.departures;
    observation.differenceTime = point.difference * experiment.durationNs;
  }
  return observation;
}

Sums sumOf(const MeasuredProfile &measured, const Measurements &measurements) {
  Sums sums;
  for (MeasurementRef ref : measurements)
    sums.add(observationOf(measured, ref));
  return sums;
}

/// Visits that count for the visit minimum and the evidence: throughput
/// deltas, latency arrivals.
double visitsOf(PointKind kind, const Sums &sums) {
  return kind == PointKind::Throughput ? sums.delta : sums.arrivals;
}

/// Whether a set of experiments saw enough visits to say anything (latency:
/// arrivals and departures).
bool enoughVisits(PointKind kind, const Sums &sums, double minVisits) {
  return visitsOf(kind, sums) >= minVisits &&
         (kind == PointKind::Throughput || sums.departures >= minVisits);
}

/// Period between visits (throughput) or mean latency (Little's law); both
/// shrink when the program gets faster. NaN when undefined.
double progressMeasure(PointKind kind, const Sums &sums) {
  if (kind == PointKind::Throughput)
    return sums.periodVisits > 0 && sums.periodTime > 0 ? sums.periodTime / sums.periodVisits : NAN;
  // W = L / lambda, L = sum(d_i t_i) / sum(t_i), lambda = sum(a_i) / sum(t_i).
  return sums.arrivals > 0 && sums.differenceTime > 0 ? sums.differenceTime / sums.arrivals : NAN;
}

struct Group {
  int percent = 0;
  Measurements observations;
};

/// Whole-run figures of one line: its samples per nanosecond (phase
/// correction, s / T of Eq. 6 and 8), its sampled CPU time per nanosecond
/// (the physical bound b) and how much longer than its CPU time a thread
/// took to run it (the run-queue stretch of the bound; 1 for wait targets).
struct RunRate {
  double samples = 0, sampleTime = 0, time = 0, stretch = 1;
  bool valid() const { return time > 0; }
};

#ifdef CAUSAL_ANALYSIS_AVX512
bool cpuHasAvx512() {
  static const bool avx512 =
      __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
  return avx512;
}
#endif

/// sums[r] += weight[r] x value for r in [from, n), one at a time.
void addWeightedScalar(double *sums, const uint8_t *weight, double value, size_t from, size_t n) {
  for (size_t r = from; r < n; ++r) {
    double product = double(weight[r]) * value;
    sums[r] += product;
  }
}

#ifdef CAUSAL_ANALYSIS_AVX512
__attribute__((target("avx512f,avx512dq"))) void
addWeightedAvx512(double *sums, const uint8_t *weight, double value, size_t n) {
  const __m512d factor = _mm512_set1_pd(value);
  size_t r = 0;
  for (; r + 16 <= n; r += 16) {
    __m512i weights =
        _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i *>(weight + r)));
    __m512d low = _mm512_cvtepi32_pd(_mm512_castsi512_si256(weights));
    __m512d high = _mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(weights, 1));
    _mm512_storeu_pd(sums + r,
                     _mm512_add_pd(_mm512_loadu_pd(sums + r), _mm512_mul_pd(low, factor)));
    _mm512_storeu_pd(sums + r + 8,
                     _mm512_add_pd(_mm512_loadu_pd(sums + r + 8), _mm512_mul_pd(high, factor)));
  }
  addWeightedScalar(sums, weight, value, r, n);
}
#endif

/// sums[r] += weight[r] x value for r < n: one experiment's value, weighted
/// as each of n bootstrap rounds drew it, added to those rounds' sums,
/// sixteen rounds at a time where the CPU has AVX-512. Each product is
/// rounded before it is added (two statements or instructions, never a
/// fused multiply-add) and no round's sum is split, so every build and CPU
/// computes the same sums.
void addWeighted(double *sums, const uint8_t *weight, double value, size_t n) {
#ifdef CAUSAL_ANALYSIS_AVX512
  if (cpuHasAvx512())
    return addWeightedAvx512(sums, weight, value, n);
#endif
  addWeightedScalar(sums, weight, value, 0, n);
}

/// Where the distribution function of Poisson(1) reaches k + 1 for k = 0,
/// 1, ...: round(2^32 F(k)), F(k) = e^-1 sum_{i<=k} 1/i!, computed with
/// 60 decimal digits. F(12) rounds to 2^32, so 12 bounds decide every
/// 32-bit number: poissonOf(u) = the number of bounds at or below u, and
/// P(poissonOf(u) = k) is the Poisson probability of k within 2^-32.
constexpr uint32_t kPoissonBounds[12] = {1580030169u, 3160060337u, 3950075422u, 4213413783u,
                                         4279248374u, 4292415292u, 4294609778u, 4294923276u,
                                         4294962463u, 4294966817u, 4294967253u, 4294967292u};
constexpr uint32_t kPoissonMaxWeight = 12;

uint32_t poissonOf(uint32_t u) {
  uint32_t k = 0;
  for (uint32_t bound : kPoissonBounds)
    k += u >= bound;
  return k;
}

class SplitMix64 {
public:
  static constexpr uint64_t kGamma = 0x9E3779B97F4A7C15ull;
  explicit SplitMix64(uint64_t seed) : state(seed) {}
  uint64_t next() { return mix(state += kGamma); }
  size_t below(size_t n) { return size_t((unsigned __int128)next() * n >> 64); }

  /// The next \p count numbers below(n), into \p out, for n < 2^32: the
  /// same numbers as that many calls of below(n), eight at a time where the
  /// CPU has AVX-512 (the bootstrap draws hundreds of millions).
  void below(size_t n, uint32_t *out, size_t count) {
    size_t done = 0;
#ifdef CAUSAL_ANALYSIS_AVX512
    if (cpuHasAvx512())
      done = belowAvx512(state, n, out, count);
#endif
    for (; done < count; ++done)
      out[done] = uint32_t(below(n));
  }

  /// The next \p count Poisson(1) numbers, into \p out: each from 32 bits
  /// of the sequence, the low half of a number first, by poissonOf; eight
  /// numbers (sixteen draws) at a time where the CPU has AVX-512, with the
  /// same results.
  void poisson(uint8_t *out, size_t count) {
    size_t done = 0;
#ifdef CAUSAL_ANALYSIS_AVX512
    if (cpuHasAvx512())
      done = poissonAvx512(state, out, count);
#endif
    for (; done < count; done += 2) {
      uint64_t z = next();
      out[done] = uint8_t(poissonOf(uint32_t(z)));
      if (done + 1 < count)
        out[done + 1] = uint8_t(poissonOf(uint32_t(z >> 32)));
    }
  }

private:
  uint64_t state;

  static uint64_t mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

#ifdef CAUSAL_ANALYSIS_AVX512
  /// below(n) for the whole multiples of 8 in \p count, eight lanes at a
  /// time; advances \p state past them and returns how many. The high 64
  /// bits of z x n, n < 2^32, from 32-bit halves: z x n = zh n 2^32 + zl n,
  /// and (z x n) >> 64 = (zh n + (zl n >> 32)) >> 32 (the bits dropped
  /// cannot carry).
  /// The states of the next eight numbers, a lane each.
  __attribute__((target("avx512f,avx512dq"))) static __m512i nextStatesAvx512(uint64_t state) {
    return _mm512_add_epi64(_mm512_set1_epi64(int64_t(state)),
                            _mm512_set_epi64(int64_t(8 * kGamma), int64_t(7 * kGamma),
                                             int64_t(6 * kGamma), int64_t(5 * kGamma),
                                             int64_t(4 * kGamma), int64_t(3 * kGamma),
                                             int64_t(2 * kGamma), int64_t(kGamma)));
  }

  /// mix() of each lane.
  __attribute__((target("avx512f,avx512dq"))) static __m512i mixAvx512(__m512i z) {
    const __m512i c1 = _mm512_set1_epi64(int64_t(0xBF58476D1CE4E5B9ull));
    const __m512i c2 = _mm512_set1_epi64(int64_t(0x94D049BB133111EBull));
    z = _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_srli_epi64(z, 30)), c1);
    z = _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_srli_epi64(z, 27)), c2);
    return _mm512_xor_si512(z, _mm512_srli_epi64(z, 31));
  }

  __attribute__((target("avx512f,avx512dq"))) static size_t
  belowAvx512(uint64_t &state, uint64_t n, uint32_t *out, size_t count) {
    size_t blocks = count / 8;
    __m512i z0 = nextStatesAvx512(state);
    const __m512i step = _mm512_set1_epi64(int64_t(8 * kGamma));
    const __m512i bound = _mm512_set1_epi64(int64_t(n));
    for (size_t b = 0; b < blocks; ++b) {
      __m512i z = mixAvx512(z0);
      z0 = _mm512_add_epi64(z0, step);
      __m512i low = _mm512_mul_epu32(z, bound); // zl x n
      __m512i high = _mm512_add_epi64(_mm512_mul_epu32(_mm512_srli_epi64(z, 32), bound),
                                      _mm512_srli_epi64(low, 32));
      _mm256_storeu_si256(reinterpret_cast<__m256i *>(out + 8 * b),
                          _mm512_cvtepi64_epi32(_mm512_srli_epi64(high, 32)));
    }
    state += uint64_t(8 * blocks) * kGamma;
    return 8 * blocks;
  }

  /// poisson() for the whole multiples of 16 in \p count: eight numbers
  /// give sixteen 32-bit lanes, lane 2i the low half of number i (x86 is
  /// little-endian), as the scalar loop takes them. Advances \p state past
  /// them and returns how many were written.
  __attribute__((target("avx512f,avx512dq"))) static size_t
  poissonAvx512(uint64_t &state, uint8_t *out, size_t count) {
    size_t blocks = count / 16;
    __m512i z0 = nextStatesAvx512(state);
    const __m512i step = _mm512_set1_epi64(int64_t(8 * kGamma));
    const __m512i one = _mm512_set1_epi32(1);
    for (size_t b = 0; b < blocks; ++b) {
      __m512i u = mixAvx512(z0);
      z0 = _mm512_add_epi64(z0, step);
      __m512i k = _mm512_setzero_si512();
      for (uint32_t bound : kPoissonBounds)
        k = _mm512_mask_add_epi32(k, _mm512_cmpge_epu32_mask(u, _mm512_set1_epi32(int32_t(bound))),
                                  k, one);
      _mm_storeu_si128(reinterpret_cast<__m128i *>(out + 16 * b), _mm512_cvtepi32_epi8(k));
    }
    state += uint64_t(8 * blocks) * kGamma;
    return 16 * blocks;
  }
#endif
};

uint64_t hashName(std::string_view a, std::string_view b) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : a)
    h = (h ^ uint8_t(c)) * 0x100000001b3ull;
  h = (h ^ 0xFF) * 0x100000001b3ull;
  for (char c : b)
    h = (h ^ uint8_t(c)) * 0x100000001b3ull;
  return h;
}

/// The sums a curve is computed from (the data, or one bootstrap
/// replicate): the pooled baseline, the line's own 0 % experiments (the
/// phase correction needs samples of this line, which only they count) and
/// one entry per speedup group; groups[0] is the line's own baseline group.
struct CurveSums {
  Sums baseline;
  Sums ownBaseline;
  std::vector<Sums> groups;
};

/// The curve computed from one CurveSums. values[i] is NaN where undefined;
/// values[0] is the baseline (0).
struct CurveValues {
  bool baselineValid = false;
  double factor = 1;
  bool corrected = false;
  std::vector<double> values;
};

/// computeCurve into \p out, whose storage a bootstrap reuses round after round.
void computeCurveInto(PointKind kind, const CurveSums &sums, const RunRate &rate,
                      bool phaseCorrection, CurveValues &out) {
  out.baselineValid = false;
  out.factor = 1;
  out.corrected = false;
  out.values.assign(sums.groups.size(), NAN);
  double baseline = progressMeasure(kind, sums.baseline);
  if (!(baseline > 0))
    return;
  out.baselineValid = true;
  const Sums &own = sums.ownBaseline;
  if (phaseCorrection && rate.valid() && own.phaseDuration > 0 && own.phaseSamples > 0) {
    double observedRate = own.phaseSamples / own.phaseDuration;
    double overallRate = rate.samples / rate.time;
    out.factor = std::clamp(overallRate / observedRate, 0.0, 1.0);
    out.corrected = true;
  }
  for (size_t i = 1; i < sums.groups.size(); ++i) {
    double measure = progressMeasure(kind, sums.groups[i]);
    if (measure > 0)
      out.values[i] = out.factor * (baseline - measure) / baseline;
  }
  out.values[0] = 0;
}

CurveValues computeCurve(PointKind kind, const CurveSums &sums, const RunRate &rate,
                         bool phaseCorrection) {
  CurveValues out;
  computeCurveInto(kind, sums, rate, phaseCorrection, out);
  return out;
}

Interval percentileInterval(std::vector<double> &values, double confidence) {
  Interval interval;
  if (values.size() < 2)
    return interval;
  // quantileSorted(sorted, q) of the values sorted, without sorting them
  // all: it reads the order statistics at and after q's position, which
  // nth_element puts in place. The low quantile's pair: the one after is put
  // in place, the one at is the largest of those before it (few: the low
  // quantile is near the start). The high quantile's position is at or
  // after that, so its nth_element needs only the values after it, and the
  // one after is the least of the few that follow.
  const size_t n = values.size();
  double alpha = (1 - confidence) / 2;
  double lowPosition = alpha * double(n - 1), highPosition = (1 - alpha) * double(n - 1);
  size_t lowBelow = size_t(std::floor(lowPosition));
  size_t highBelow = std::max(lowBelow, size_t(std::floor(highPosition)));
  auto interpolate = [](double atBelow, double atAbove, double position, size_t below) {
    return atBelow + (atAbove - atBelow) * (position - double(below));
  };
  // Both quantiles near the ends (95 % of 1000 replicates: the 26 least and
  // the 26 largest values are all it reads): one pass keeps the least in a
  // max-heap and the largest in a min-heap, the same order statistics for
  // a fraction of nth_element's work.
  constexpr size_t kHeapAtMost = 64;
  const size_t lowCount = lowBelow + 2, highCount = n - highBelow;
  if (lowBelow + 1 < n && highBelow + 1 < n && lowCount <= kHeapAtMost &&
      highCount <= kHeapAtMost) {
    std::array<double, kHeapAtMost> least, largest;
    size_t leastSize = 0, largestSize = 0;
    for (double value : values) {
      if (leastSize < lowCount) {
        least[leastSize++] = value;
        std::push_heap(least.begin(), least.begin() + leastSize);
      } else if (value < least[0]) {
        std::pop_heap(least.begin(), least.begin() + lowCount);
        least[lowCount - 1] = value;
        std::push_heap(least.begin(), least.begin() + lowCount);
      }
      if (largestSize < highCount) {
        largest[largestSize++] = value;
        std::push_heap(largest.begin(), largest.begin() + largestSize, std::greater<double>());
      } else if (value > largest[0]) {
        std::pop_heap(largest.begin(), largest.begin() + highCount, std::greater<double>());
        largest[highCount - 1] = value;
        std::push_heap(largest.begin(), largest.begin() + highCount, std::greater<double>());
      }
    }
    std::sort_heap(least.begin(), least.begin() + lowCount); // ascending
    std::sort_heap(largest.begin(), largest.begin() + highCount,
                   std::greater<double>()); // descending: largest[i] is sorted[n - 1 - i]
    interval.low = interpolate(least[lowBelow], least[lowBelow + 1], lowPosition, lowBelow);
    interval.high =
        interpolate(largest[highCount - 1], largest[highCount - 2], highPosition, highBelow);
    interval.valid = true;
    return interval;
  }
  auto least = [&values, n](size_t from) {
    return *std::min_element(values.begin() + from, values.end());
  };
  double lowAt, lowNext;
  if (lowBelow + 1 < n) {
    std::nth_element(values.begin(), values.begin() + lowBelow + 1, values.end());
    lowNext = values[lowBelow + 1];
    lowAt = *std::max_element(values.begin(), values.begin() + lowBelow + 1);
  } else {
    std::nth_element(values.begin(), values.begin() + lowBelow, values.end());
    lowAt = lowNext = values[lowBelow];
  }
  double highAt = lowAt, highNext = lowNext;
  if (highBelow == lowBelow + 1) {
    highAt = lowNext;
    highNext = highBelow + 1 < n ? least(highBelow + 1) : highAt;
  } else if (highBelow > lowBelow + 1) {
    std::nth_element(values.begin() + lowBelow + 2, values.begin() + highBelow, values.end());
    highAt = values[highBelow];
    highNext = highBelow + 1 < n ? least(highBelow + 1) : highAt;
  }
  interval.low = interpolate(lowAt, lowNext, lowPosition, lowBelow);
  interval.high = interpolate(highAt, highNext, highPosition, highBelow);
  interval.valid = true;
  return interval;
}

using PointKey = std::pair<int, std::string_view>; // (kind, name)

/// The 0 % experiments of each (run, point), in the order they ran: the
/// candidates for pooled baselines.
class BaselineIndex {
public:
  explicit BaselineIndex(const Profile &profile)
      : profile(profile), chosen(profile.experiments.size(), false) {}

  void add(const PointKey &point, MeasurementRef ref) {
    byPointRun[point][profile.experiments[ref.experiment].run].push_back(ref);
  }

  /// The pooled baseline of a line: its own 0 % experiments and, for each
  /// of its experiments, the \p window nearest 0 % experiments of the same
  /// run and point (by position in the run, ties to the earlier one), each
  /// experiment once. Returns the other lines' experiments only; the
  /// line's own are in its baseline group already. Not for several threads
  /// at once (it marks the experiments chosen in a table of its own).
  Measurements neighbours(const PointKey &point, std::string_view line,
                          const std::vector<Group> &groups, size_t window) const {
    Measurements out;
    auto ofPoint = byPointRun.find(point);
    if (window == 0 || ofPoint == byPointRun.end())
      return out;
    const std::map<size_t, Measurements> &byRun = ofPoint->second;
    for (const Group &group : groups)
      for (MeasurementRef o : group.observations) {
        auto found = byRun.find(profile.experiments[o.experiment].run);
        if (found == byRun.end())
          continue;
        const Measurements &zeros = found->second;
        // zeros is sorted by experiment; walk outwards from o.experiment.
        size_t after = size_t(std::lower_bound(zeros.begin(), zeros.end(), o.experiment,
                                               [](MeasurementRef e, uint32_t index) {
                                                 return e.experiment < index;
                                               }) -
                              zeros.begin());
        size_t before = after; // zeros[before - 1] is the next one back
        for (size_t taken = 0; taken < window; ++taken) {
          bool haveBefore = before > 0, haveAfter = after < zeros.size();
          if (!haveBefore && !haveAfter)
            break;
          bool takeAfter =
              haveAfter && (!haveBefore || zeros[after].experiment - o.experiment <
                                               o.experiment - zeros[before - 1].experiment);
          MeasurementRef entry = takeAfter ? zeros[after++] : zeros[--before];
          if (!chosen[entry.experiment] &&
              !sameName(profile.experiments[entry.experiment].selected, line)) {
            chosen[entry.experiment] = true;
            out.push_back(entry);
          }
        }
      }
    for (MeasurementRef entry : out)
      chosen[entry.experiment] = false;
    return out;
  }

private:
  const Profile &profile;
  /// By point, then run: the point's 0 % experiments in that run.
  std::map<PointKey, std::map<size_t, Measurements>> byPointRun;
  /// By experiment: chosen by the current neighbours() call.
  mutable std::vector<bool> chosen;

  /// Names are mostly views into Profile::names (one copy of each): then
  /// the same address is the same name, without comparing the text.
  static bool sameName(std::string_view a, std::string_view b) {
    return (a.data() == b.data() && a.size() == b.size()) || a == b;
  }
};

/// Program speedups a virtual speedup cannot produce: more than s x b
/// where b is the line's share of the run in sampled CPU time, measured:
/// an interval is flagged when it lies above s x b x (1 + margin), the
/// margin being kBoundModelMargin plus two standard errors of the line's
/// sample count (Poisson). docs/report.md, "Physical bound".
constexpr double kBoundTolerance = 1e-9;
constexpr double kBoundModelMargin = 0.25;

/// Experiments a curve point needs before it is judged against the bound:
/// a percentile bootstrap interval of fewer values is far narrower than the
/// real uncertainty (of two experiments it spans just the two values), so
/// it would flag noise as often as it excuses it. The slope, whose interval
/// rests on all the curve's experiments, is always judged.
constexpr size_t kMinExperimentsToJudgePoint = 5;

/// Computes the bound of one curve and flags the slope and the points that
/// exceed it beyond their intervals. Points measured by fewer than
/// kMinExperimentsToJudgePoint experiments are not judged.
void checkBound(PointResult &result, const RunRate &rate, const Sums &ownBaseline) {
  Bound &bound = result.bound;
  if (result.kind != PointKind::Throughput) {
    bound.note = "latency point: queueing makes latency no linear function of service time";
    return;
  }
  if (rate.valid() && rate.sampleTime > 0)
    bound.b = rate.sampleTime / rate.time;
  if (ownBaseline.phaseDuration > 0 && ownBaseline.phaseSampleTime > 0)
    bound.inPhase = ownBaseline.phaseSampleTime / ownBaseline.phaseDuration;
  // A phase-corrected curve is a whole-run prediction: b applies. An
  // uncorrected one predicts the phase in which the line's experiments ran,
  // where the line may run more: the larger of b and b_A applies. Either
  // is CPU time; the wall time a thread took to get it is longer by the
  // run-queue stretch, and a speedup shortens that too.
  bound.stretch = rate.stretch;
  if (result.phaseCorrected)
    bound.limit = bound.b * bound.stretch;
  else if (!std::isnan(bound.b) || !std::isnan(bound.inPhase))
    bound.limit = std::fmax(bound.b, bound.inPhase) * bound.stretch; // fmax ignores a NaN
  if (std::isnan(bound.limit)) {
    bound.note = "no runtime/samples records";
    return;
  }
  bound.known = true;
  bound.margin = kBoundModelMargin + (rate.samples > 0 ? 2 / std::sqrt(rate.samples) : 0);
  double limit = bound.limit * (1 + bound.margin);
  for (CurvePoint &point : result.curve) {
    if (point.speedup <= 0 || point.experiments < kMinExperimentsToJudgePoint)
      continue;
    // Without bootstrap (--bootstrap 0) the estimate is all there is.
    double lowest = point.interval.valid ? point.interval.low : point.programSpeedup;
    point.exceedsBound = lowest > point.speedup * limit + kBoundTolerance;
    bound.pointsExceeding += point.exceedsBound;
  }
  double slopeLowest = result.slopeInterval.valid ? result.slopeInterval.low : result.slope;
  bound.slopeExceeds = slopeLowest > limit + kBoundTolerance;
}

/// Maximum impact over the curve points that may carry it: speedups above 0
/// measured by two experiments or more (one experiment is one window of a
/// few visits: the largest of many such values is mostly noise).
struct MaxImpact {
  double best = NAN, at = 0;
  void offer(double speedup, double programSpeedup, bool eligible) {
    if (eligible && speedup > 0 && (std::isnan(best) || programSpeedup > best)) {
      best = programSpeedup;
      at = speedup;
    }
  }
};

double maxImpactOf(const std::vector<CurvePoint> &points, const std::vector<bool> &eligible,
                   double &at) {
  MaxImpact impact;
  for (size_t i = 0; i < points.size(); ++i)
    impact.offer(points[i].speedup, points[i].programSpeedup, eligible[i]);
  if (!std::isnan(impact.best))
    at = impact.at;
  return impact.best;
}

/// Ranking value of a line: NaN (no maximum impact) ranks last.
double rankValue(double value) { return std::isnan(value) ? -INFINITY : value; }

// ---- The steps of analyze() -------------------------------------------------

/// line -> (kind, point) -> percent -> observations
using ObservationsByLine =
    std::map<std::string_view, std::map<PointKey, std::map<int, Measurements>>>;

/// Whether an experiment belongs to the ranking: not one of an A/B run
/// (docs/report.md, "Confirmation": kept out of everything the ranking uses).
bool ranked(const Profile &profile, const Experiment &experiment) {
  return experiment.run >= profile.runs.size() || !profile.runs[experiment.run].abRun;
}

/// Step 1: what the ordinary runs (not A/B runs) say as a whole.
void summarizeRuns(const Profile &profile, Analysis &analysis) {
  bool allCausal = true;
  for (const Run &run : profile.runs) {
    if (run.abRun)
      continue;
    ++analysis.runs;
    if (run.runtimeNs > 0) {
      ++analysis.runsWithRuntime;
      analysis.runtimeNs += run.runtimeNs;
      if (!(run.samplePeriodNs > 0))
        ++analysis.runsWithAssumedPeriod;
    }
    allCausal = allCausal && run.writtenByCausal;
    analysis.samplesOutside += run.samplesOutside;
    if (run.samplesExpected >= 0) {
      analysis.samplesExpected += run.samplesExpected;
      analysis.samplesArrived += run.samplesArrived;
      analysis.timerSamples += run.timerSamples;
      // The runtime's own rule (it says so at exit by the same numbers).
      if (causal_thin_profile(run.samplesExpected, run.samplesExpectedSpread, run.samplesArrived))
        ++analysis.thinRuns;
    }
  }
  for (const auto &entry : profile.samples) // a line's samples in a context are in its own too
    if (!splitLineName(entry.first).isPath())
      analysis.samplesInLines += entry.second.ordinary;
  analysis.latencyTimeAveraged = analysis.runs > 0 && allCausal;
  if (analysis.thinRuns) {
    char share[32];
    snprintf(share, sizeof(share), "%.0f",
             analysis.samplesExpected > 0
                 ? 100.0 * analysis.samplesArrived / analysis.samplesExpected
                 : 0.0);
    analysis.warnings.push_back(
        "thin profile: " + std::to_string(analysis.thinRuns) + " run(s) got fewer than " +
        std::to_string(CAUSAL_THIN_PROFILE_PERCENT) +
        " % of the samples their threads' CPU time should have given, less " +
        std::to_string(CAUSAL_THIN_PROFILE_SPREADS) + " x that estimate's spread (" +
        std::to_string((unsigned long long)analysis.samplesArrived) + " of " +
        std::to_string((unsigned long long)analysis.samplesExpected) + " over the runs, " + share +
        " %): threads that blocked the profiler's signal, or a program that took it "
        "over; lines and experiments rest on less than they seem");
  }
}

/// Step 2: every experiment's measurements, by line, point and speedup;
/// the 0 % ones also into \p baselines; the progress points' summaries.
ObservationsByLine collectObservations(const MeasuredProfile &measured,
                                       const AnalysisOptions &options, Analysis &analysis,
                                       BaselineIndex &baselines) {
  const Profile &profile = measured.profile;
  std::set<std::string, std::less<>> wanted(options.onlyPoints.begin(), options.onlyPoints.end());
  std::set<std::string, std::less<>> seenWanted;
  ObservationsByLine data;
  std::map<PointKey, ProgressPointSummary> pointSummaries;
  for (size_t index = 0; index < profile.experiments.size(); ++index) {
    const Experiment &experiment = profile.experiments[index];
    if (!ranked(profile, experiment))
      continue;
    ++analysis.experiments;
    // A duration <= 0 (elapsed time less inserted delay; Coz's size_t wraps
    // below zero) comes from a high speedup of a line that is nearly all of
    // the run: the delay, a sample period x s at a time, is then about the
    // experiment's length and scatters around it. For throughput it is an
    // estimate like any other, and the group's sum is what must be positive:
    // leaving out the windows that fell below zero keeps those whose delay
    // fell short, and lowers the curve at the high speedups (bench/accuracy's
    // lock case at 100 %). A latency window's in-flight count is per unit of
    // that time and undefined then: its latency points are ignored (listed,
    // counted apart).
    bool nonPositive = !(experiment.durationNs > 0);
    int percent = int(std::lround(experiment.speedup * 100));
    bool used = false;
    for (size_t p = 0; p < experiment.points.size(); ++p) {
      const PointMeasurement &point = experiment.points[p];
      PointKey key{int(point.kind), point.name};
      ProgressPointSummary &summary = pointSummaries[key];
      summary.name = std::string(point.name);
      summary.kind = point.kind;
      if (nonPositive && point.kind != PointKind::Throughput) {
        ++summary.ignoredExperiments;
        continue;
      }
      ++summary.experiments;
      summary.visits += point.kind == PointKind::Throughput ? point.delta : point.arrivals;
      summary.durationNs += experiment.durationNs;
      summary.periodFromTimes += !std::isnan(periodFromVisitTimes(measured, experiment, point));
      if (!wanted.empty()) {
        if (!wanted.count(point.name))
          continue;
        seenWanted.emplace(point.name);
      }
      // Every experiment counts, however few visits it saw: leaving out
      // the ones with few visits would keep the windows that happened to
      // catch more visits than their length predicts, and that favours the
      // experiments whose progress is slowest in real time (high speedups,
      // which insert the most delay). The visit minimum applies to groups.
      MeasurementRef ref{uint32_t(index), uint32_t(p)};
      data[experiment.selected][key][percent].push_back(ref);
      if (percent == 0)
        baselines.add(key, ref);
      used = true;
    }
    if (nonPositive)
      ++(used ? analysis.nonPositiveDurationKept : analysis.droppedBadDuration);
    if (!nonPositive || used) {
      analysis.experimentTimeNs += experiment.durationNs;
      if (experiment.delayNs > 0)
        analysis.insertedDelayNs += experiment.delayNs;
    }
    if (used)
      ++analysis.experimentsUsed;
  }
  for (const auto &entry : pointSummaries)
    analysis.progressPoints.push_back(entry.second);
  for (const std::string &name : wanted)
    if (!seenWanted.count(name))
      analysis.warnings.push_back("progress point '" + name + "' does not occur in the profile");
  if (analysis.droppedBadDuration)
    analysis.warnings.push_back(std::to_string(analysis.droppedBadDuration) +
                                " experiment(s) with a duration <= 0 were ignored");
  if (analysis.nonPositiveDurationKept)
    analysis.warnings.push_back(
        std::to_string(analysis.nonPositiveDurationKept) +
        " experiment(s) with a duration <= 0 (their delay about their length) count towards "
        "their throughput points' curves, as measured; their latency points were ignored");
  return data;
}

/// Step 3: saturation per selected line, from the experiments that recorded it.
std::map<std::string_view, Saturation> saturationByLine(const Profile &profile) {
  std::map<std::string_view, Saturation> saturation;
  std::map<std::string_view, double> delayOfLine;
  for (const Experiment &experiment : profile.experiments) {
    if (!ranked(profile, experiment) || experiment.cpus < 0 || experiment.running < 0 ||
        experiment.waiting < 0)
      continue;
    Saturation &entry = saturation[experiment.selected];
    ++entry.experiments;
    entry.cpus += experiment.cpus;
    entry.running += experiment.running;
    entry.waiting += experiment.waiting;
    if (experiment.idle >= 0) {
      ++entry.idleExperiments;
      entry.idle = (entry.idle < 0 ? 0 : entry.idle) + experiment.idle;
    }
    if (experiment.delayNs > 0 && experiment.sharedCpuDelayNs >= 0) {
      entry.sharedDelayShare += experiment.sharedCpuDelayNs;
      delayOfLine[experiment.selected] += experiment.delayNs;
    }
  }
  for (auto &[line, entry] : saturation) {
    double n = double(entry.experiments);
    entry.cpus /= n;
    entry.running /= n;
    entry.waiting /= n;
    if (entry.idleExperiments)
      entry.idle /= double(entry.idleExperiments);
    double delay = delayOfLine[line];
    entry.sharedDelayShare = delay > 0 ? entry.sharedDelayShare / delay : 0;
  }
  return saturation;
}

/// The ordinary runs' run time with a `runtime` record, less the delays
/// their experiments inserted (docs/report.md, "Phase correction"): the
/// pauses stretched the real run, and a line's samples per unit of that
/// time fall below its rate in the program's own time (a fixed-line run at
/// 100 % made the line look 15 % rarer than in its 0 % experiments, and
/// scaled its curve by 0.85).
double virtualRuntime(const Profile &profile) {
  std::vector<double> delays(profile.runs.size(), 0);
  for (const Experiment &experiment : profile.experiments)
    if (experiment.run < delays.size() && experiment.delayNs > 0)
      delays[experiment.run] += experiment.delayNs;
  double total = 0;
  for (size_t i = 0; i < profile.runs.size(); ++i) {
    const Run &run = profile.runs[i];
    if (!run.abRun && run.runtimeNs > 0)
      total += delays[i] < run.runtimeNs ? run.runtimeNs - delays[i] : run.runtimeNs;
  }
  return total;
}

/// How much longer than their CPU time the program's threads took to run
/// it: (running + waiting) / running over the ordinary runs' experiments
/// that recorded both, weighted by their duration; 1 where none did. A
/// thread that waits for a CPU as long as it runs takes 2 ns of wall time
/// for each 1 ns of CPU time its code needs, so shortening that code by
/// 1 ns shortens the thread by 2 (docs/report.md, "Physical bound").
double runQueueStretch(const Profile &profile) {
  double running = 0, runnable = 0;
  for (const Experiment &experiment : profile.experiments) {
    if (!ranked(profile, experiment) || experiment.running <= 0 || experiment.waiting < 0 ||
        experiment.durationNs <= 0)
      continue;
    running += experiment.durationNs * experiment.running;
    runnable += experiment.durationNs * (experiment.running + experiment.waiting);
  }
  return running > 0 ? runnable / running : 1;
}

/// The virtual run time of the ordinary runs that recorded samples per
/// calling context for each caller (Run::contexts).
std::map<std::string_view, double> contextRuntimes(const Profile &profile) {
  std::vector<double> delays(profile.runs.size(), 0);
  for (const Experiment &experiment : profile.experiments)
    if (experiment.run < delays.size() && experiment.delayNs > 0)
      delays[experiment.run] += experiment.delayNs;
  std::map<std::string_view, double> total;
  for (size_t i = 0; i < profile.runs.size(); ++i) {
    const Run &run = profile.runs[i];
    if (run.abRun || run.runtimeNs <= 0)
      continue;
    for (std::string_view caller : run.contexts)
      total[caller] += delays[i] < run.runtimeNs ? run.runtimeNs - delays[i] : run.runtimeNs;
  }
  return total;
}

/// Step 4, per line: its samples over the ordinary runs with a runtime
/// record, whose run time summed is \p totalRuntime (the T of Eq. 8 and the
/// wall time of the physical bound). A line in one calling context, FILE:LINE
/// (via CALLER), has its own samples records, written only by the runs that
/// counted samples in that context: its T is theirs (\p contextRuntime).
RunRate rateOfLine(const Profile &profile, std::string_view line, double totalRuntime,
                   const std::map<std::string_view, double> &contextRuntime, double stretch) {
  RunRate rate;
  // A wait target has no whole-run figure: `samples` records count CPU
  // samples of CPU lines, none is the blocked time of a call site. Without
  // one its curve is not phase corrected (Eq. 8 with no samples would scale
  // it to 0) and its bound is the in-phase one (docs/report.md, "Wait
  // targets"). Nor has a line in a context no run counted samples in
  // (profiles written before causal counted them).
  LineName split = splitLineName(line);
  if (split.isWait())
    return rate;
  if (split.isPath()) {
    auto runtime = contextRuntime.find(split.caller);
    if (runtime == contextRuntime.end())
      return rate;
    totalRuntime = runtime->second;
  }
  rate.time = totalRuntime;
  rate.stretch = stretch;
  auto found = profile.samples.find(line);
  if (found != profile.samples.end()) {
    rate.samples = found->second.ordinaryTimed;
    rate.sampleTime = found->second.ordinaryTimedNs;
  }
  return rate;
}

/// One (line, point) curve while it is computed.
struct PointWork {
  const MeasuredProfile &measured;
  std::string_view line;
  PointResult result;
  std::vector<Group> groups; // [0]: the line's own 0 % experiments; then one per speedup
  Measurements neighbours;   // pooled baselines of other lines
  CurveSums sums;
  CurveValues curve;
  std::vector<size_t> valid;  // group indices with a value
  std::vector<bool> eligible; // per valid group: may carry the maximum impact
};

/// Step 5: the experiments of each speedup as groups; a speedup above 0
/// whose experiments together saw fewer than minVisits visits (latency:
/// arrivals or departures) says too little and is dropped.
void groupBySpeedup(std::map<int, Measurements> &bySpeedup, const PointKey &key,
                    const BaselineIndex &baselines, const AnalysisOptions &options,
                    Analysis &analysis, PointWork &work) {
  PointResult &result = work.result;
  work.groups.resize(1);
  for (auto &[percent, observations] : bySpeedup) {
    result.experiments += observations.size();
    if (percent == 0) {
      work.groups[0].observations = std::move(observations);
      continue;
    }
    if (!enoughVisits(result.kind, sumOf(work.measured, observations), options.minVisits)) {
      ++analysis.droppedLowVisits;
      continue;
    }
    work.groups.push_back({percent, std::move(observations)});
  }
  work.neighbours = baselines.neighbours(key, work.line, work.groups, options.baselineWindow);
  result.ownBaselineExperiments = work.groups[0].observations.size();
  result.baselineExperiments = result.ownBaselineExperiments + work.neighbours.size();
  work.sums.ownBaseline = sumOf(work.measured, work.groups[0].observations);
  work.sums.baseline = work.sums.ownBaseline;
  work.sums.baseline.add(sumOf(work.measured, work.neighbours));
  for (const Group &group : work.groups)
    work.sums.groups.push_back(sumOf(work.measured, group.observations));
}

/// Step 6: the curve's values, or why there is none (then recorded in
/// analysis.notEnoughData): no usable baseline, too few speedups, too
/// little evidence at speedups above 0.
bool computeValues(PointWork &work, const RunRate &rate, const AnalysisOptions &options,
                   Analysis &analysis) {
  PointResult &result = work.result;
  NotEnoughData shortfall{std::string(work.line), result.point, Shortfall::None, result.experiments,
                          0};
  shortfall.distinctSpeedups = work.groups.size() - 1 + (result.baselineExperiments ? 1 : 0);
  auto fail = [&](Shortfall reason) {
    shortfall.reason = reason;
    analysis.notEnoughData.push_back(shortfall);
    return false;
  };
  if (result.baselineExperiments == 0 ||
      !enoughVisits(result.kind, work.sums.baseline, options.minVisits)) {
    shortfall.distinctSpeedups = work.groups.size() - 1;
    if (result.baselineExperiments == 0)
      return fail(Shortfall::NoBaseline);
    ++analysis.droppedLowVisits;
    return fail(Shortfall::BaselineTooFewVisits);
  }
  work.curve = computeCurve(result.kind, work.sums, rate, options.phaseCorrection);
  if (!work.curve.baselineValid)
    return fail(Shortfall::InvalidBaseline);
  for (size_t i = 0; i < work.groups.size(); ++i)
    if (!std::isnan(work.curve.values[i]))
      work.valid.push_back(i);
  result.distinctSpeedups = work.valid.size();
  shortfall.distinctSpeedups = work.valid.size();
  if (work.valid.size() < std::max<size_t>(options.minSpeedups, 2))
    return fail(Shortfall::TooFewSpeedups);
  // Evidence: what the curve's speedups above 0 rest on.
  size_t evidenceExperiments = 0;
  for (size_t i : work.valid)
    if (i > 0) {
      evidenceExperiments += work.groups[i].observations.size();
      result.evidenceVisits += visitsOf(result.kind, work.sums.groups[i]);
    }
  if (evidenceExperiments < options.minExperiments ||
      result.evidenceVisits < options.minEvidenceVisits) {
    shortfall.evidenceExperiments = evidenceExperiments;
    shortfall.evidenceVisits = result.evidenceVisits;
    return fail(Shortfall::TooLittleEvidence);
  }
  return true;
}

/// Why the phase correction (wanted) could not be applied to a curve.
std::string phaseNote(const PointWork &work, const RunRate &rate) {
  LineName split = splitLineName(work.line);
  if (split.isWait())
    return "a wait target: the profile records no whole-run blocked time for it";
  if (split.isPath() && !rate.valid())
    return "a line in one calling context: no run of the profile counted the line's samples in "
           "that context";
  if (!rate.valid())
    return "no runtime/samples records";
  if (work.groups[0].observations.empty())
    return "no 0% experiment of its own (its baseline is pooled from other lines, whose samples "
           "are not its own)";
  if (work.sums.ownBaseline.phaseDuration <= 0)
    return "baseline experiments carry no selected-samples";
  return "no samples in the line during its baseline experiments";
}

/// Step 7: the curve's points, slope and maximum impact.
void fillCurve(PointWork &work, const RunRate &rate, const AnalysisOptions &options) {
  PointResult &result = work.result;
  result.phaseCorrected = work.curve.corrected;
  result.phaseFactor = work.curve.factor;
  if (options.phaseCorrection && !work.curve.corrected)
    result.phaseNote = phaseNote(work, rate);
  for (size_t i : work.valid) {
    const Group &group = work.groups[i];
    CurvePoint point;
    point.speedup = group.percent / 100.0;
    point.programSpeedup = work.curve.values[i];
    point.experiments = i == 0 ? result.baselineExperiments : group.observations.size();
    point.durationNs = i == 0 ? work.sums.baseline.duration : work.sums.groups[i].duration;
    result.curve.push_back(point);
    work.eligible.push_back(i > 0 && group.observations.size() >= 2);
  }
  result.slope = slopeThroughOrigin(result.curve);
  result.maxImpact = maxImpactOf(result.curve, work.eligible, result.maxImpactSpeedup);
}

/// Step 8, the intervals: resample the line's own experiments with
/// replacement, all speedups together (a pairs bootstrap, so the scatter
/// between speedups counts too), and the pooled neighbours separately (they
/// are a sample of their own); replicates without a usable baseline are
/// skipped. A curve point measured by one experiment gets no interval of
/// its own: one value says nothing about its spread.
void bootstrapIntervals(PointWork &work, const RunRate &rate, const AnalysisOptions &options) {
  PointResult &result = work.result;
  const std::vector<Group> &groups = work.groups;
  const std::vector<size_t> &valid = work.valid;
  SplitMix64 random(options.seed ^ hashName(work.line, result.point));
  // What a round needs of each experiment, side by side: the two sums of
  // its progress measure (throughput: visits and duration; latency:
  // arrivals and in-flight x duration) and, for the own baseline's phase
  // correction, its selected samples and their duration (computeCurve reads
  // no other sum of a replicate). Each sum adds the same values in the same
  // order as Sums would, so the intervals are exactly those of all sums.
  struct Draw {
    size_t group;
    double measure[4]; // the two measure sums, phaseSamples, phaseDuration
  };
  bool throughput = result.kind == PointKind::Throughput;
  auto drawOf = [&](size_t group, MeasurementRef ref) {
    Sums one;
    one.add(observationOf(work.measured, ref));
    return Draw{group,
                {throughput ? one.periodVisits : one.arrivals,
                 throughput ? one.periodTime : one.differenceTime, one.phaseSamples,
                 one.phaseDuration}};
  };
  std::vector<Draw> pool;
  for (size_t i = 0; i < groups.size(); ++i)
    for (MeasurementRef ref : groups[i].observations)
      pool.push_back(drawOf(i, ref));
  std::vector<Draw> neighbours;
  neighbours.reserve(work.neighbours.size());
  for (MeasurementRef ref : work.neighbours)
    neighbours.push_back(drawOf(0, ref));
  auto toSums = [&](const double(&sums)[4]) {
    Sums out;
    (throughput ? out.periodVisits : out.arrivals) = sums[0];
    (throughput ? out.periodTime : out.differenceTime) = sums[1];
    out.phaseSamples = sums[2];
    out.phaseDuration = sums[3];
    return out;
  };
  // Each round gives every experiment a weight, how often the round draws
  // it (resampling with replacement), and each sum of a curve is the sum of
  // weight x value over its experiments. Small sets are drawn as many times
  // as they hold experiments (the classic bootstrap: the weights are a
  // multinomial draw); sets of at least poissonBootstrapFrom get
  // independent Poisson(1) weights instead (the Poisson bootstrap), which
  // at that size resamples as well and costs no scattered counting:
  // docs/report.md, "Intervals". Weights fit a byte: a multinomial weight
  // is at most the set's size, below 256 here; a Poisson(1) one at most 12.
  const size_t poolSize = pool.size(), neighbourCount = neighbours.size();
  const size_t poissonFrom = std::min<size_t>(options.poissonBootstrapFrom, 256);
  const bool poissonPool = poolSize >= poissonFrom;
  const bool poissonNeighbours = neighbourCount >= poissonFrom;
  // The rounds go in blocks: a block's weights lie experiment by
  // experiment, its rounds side by side (weights[j * rounds + r]), and so
  // do its sums (by group and measure, then round), so that adding one
  // experiment's weighted value to every round of the block is one stream.
  // Each round's sum still adds its experiments one after the other, in
  // order: the same sums on every CPU and in every build.
  const size_t block = std::clamp<size_t>(
      (size_t(1) << 20) / std::max<size_t>(poolSize + neighbourCount, 1), 16, 256);
  std::vector<uint8_t> poolWeights(poolSize * block), neighbourWeights(neighbourCount * block);
  std::vector<uint32_t> picks(std::max(poolSize, neighbourCount));
  // A block's weights: the multinomial draws round by round, the pool's
  // then the neighbours' (the order of the draws when each round was drawn
  // in turn), then the Poisson weights of either set.
  auto drawWeights = [&](size_t rounds) {
    auto countDraws = [&](std::vector<uint8_t> &weights, size_t n, size_t round) {
      random.below(n, picks.data(), n);
      for (size_t i = 0; i < n; ++i)
        ++weights[picks[i] * rounds + round];
    };
    if (!poissonPool)
      std::fill(poolWeights.begin(), poolWeights.begin() + poolSize * rounds, 0);
    if (!poissonNeighbours)
      std::fill(neighbourWeights.begin(), neighbourWeights.begin() + neighbourCount * rounds, 0);
    for (size_t r = 0; r < rounds && !(poissonPool && poissonNeighbours); ++r) {
      if (!poissonPool)
        countDraws(poolWeights, poolSize, r);
      if (!poissonNeighbours)
        countDraws(neighbourWeights, neighbourCount, r);
    }
    if (poissonPool)
      random.poisson(poolWeights.data(), poolSize * rounds);
    if (poissonNeighbours)
      random.poisson(neighbourWeights.data(), neighbourCount * rounds);
  };
  // Runs as clusters (docs/report.md, "Intervals"): a group whose
  // experiments come from two runs or more is resampled by run, each of its
  // experiments weighted as often as the round draws its run, so that the
  // run-to-run changes of the machine and of the program's start (which no
  // resampling of one run's experiments sees) widen its interval as they
  // move its value. The own baseline and the pooled neighbours are one
  // group here. A group measured in one run keeps its experiments' weights
  // (above): one run says nothing of the variation between runs.
  std::vector<uint32_t> poolRun(poolSize), neighbourRun(neighbourCount);
  std::vector<bool> poolByRun(poolSize, false);
  bool neighboursByRun = false;
  size_t runCount = 0;
  {
    std::map<size_t, uint32_t> dense; // Profile::runs index -> 0, 1, ...
    auto runOf = [&](MeasurementRef ref) {
      size_t run = work.measured.profile.experiments[ref.experiment].run;
      return dense.try_emplace(run, uint32_t(dense.size())).first->second;
    };
    auto spansRuns = [](const std::vector<uint32_t> &runs, size_t from, size_t to) {
      for (size_t j = from + 1; j < to; ++j)
        if (runs[j] != runs[from])
          return true;
      return false;
    };
    for (size_t i = 0, j = 0; i < groups.size(); ++i)
      for (MeasurementRef ref : groups[i].observations)
        poolRun[j++] = runOf(ref);
    for (size_t j = 0; j < neighbourCount; ++j)
      neighbourRun[j] = runOf(work.neighbours[j]);
    runCount = dense.size();
    for (size_t i = 0, from = 0; i < groups.size(); from += groups[i++].observations.size()) {
      const size_t to = from + groups[i].observations.size();
      bool byRun = spansRuns(poolRun, from, to);
      if (i == 0) { // the baseline: the own 0 % experiments and the neighbours together
        std::vector<uint32_t> baseline(poolRun.begin() + from, poolRun.begin() + to);
        baseline.insert(baseline.end(), neighbourRun.begin(), neighbourRun.end());
        byRun = spansRuns(baseline, 0, baseline.size());
        neighboursByRun = byRun;
      }
      std::fill(poolByRun.begin() + from, poolByRun.begin() + to, byRun);
    }
  }
  const bool anyByRun =
      neighboursByRun || std::find(poolByRun.begin(), poolByRun.end(), true) != poolByRun.end();
  std::vector<uint8_t> runWeights(anyByRun ? runCount * block : 0);
  std::vector<uint32_t> runPicks(anyByRun ? runCount : 0);
  const bool poissonRuns = runCount >= poissonFrom;
  auto drawRunWeights = [&](size_t rounds) {
    if (!anyByRun)
      return;
    if (poissonRuns) {
      random.poisson(runWeights.data(), runCount * rounds);
    } else {
      std::fill(runWeights.begin(), runWeights.begin() + runCount * rounds, 0);
      for (size_t r = 0; r < rounds; ++r) {
        random.below(runCount, runPicks.data(), runCount);
        for (size_t i = 0; i < runCount; ++i)
          ++runWeights[runPicks[i] * rounds + r];
      }
    }
    auto copyRun = [&](uint8_t *to, uint32_t run) {
      std::copy_n(runWeights.data() + size_t(run) * rounds, rounds, to);
    };
    for (size_t j = 0; j < poolSize; ++j)
      if (poolByRun[j])
        copyRun(poolWeights.data() + j * rounds, poolRun[j]);
    if (neighboursByRun)
      for (size_t j = 0; j < neighbourCount; ++j)
        copyRun(neighbourWeights.data() + j * rounds, neighbourRun[j]);
  };
  const size_t baselineSlot = groups.size(); // the pooled baseline's sums
  std::vector<double> sums((groups.size() + 1) * 4 * block);
  std::vector<size_t> groupEnd(groups.size()); // in pool
  for (size_t i = 0, end = 0; i < groups.size(); ++i)
    groupEnd[i] = end += groups[i].observations.size();

  std::vector<std::vector<double>> pointSamples(valid.size());
  for (std::vector<double> &samples : pointSamples)
    samples.reserve(options.bootstrapRounds);
  std::vector<double> slopeSamples, maxSamples;
  slopeSamples.reserve(options.bootstrapRounds);
  maxSamples.reserve(options.bootstrapRounds);
  std::vector<double> speedupOf(valid.size()); // by valid group
  for (size_t v = 0; v < valid.size(); ++v)
    speedupOf[v] = groups[valid[v]].percent / 100.0;
  CurveSums replicate;
  replicate.groups.resize(groups.size());
  CurveValues values;
  for (size_t first = 0; first < options.bootstrapRounds; first += block) {
    const size_t rounds = std::min(block, options.bootstrapRounds - first);
    drawWeights(rounds);
    drawRunWeights(rounds);
    auto sumsOf = [&](size_t slot, size_t measure) {
      return sums.data() + (slot * 4 + measure) * rounds;
    };
    std::fill(sums.begin(), sums.end(), 0.0);
    for (size_t i = 0; i < groups.size(); ++i) {
      const size_t measures = i == 0 ? 4 : 2; // the own baseline: also its phase sums
      for (size_t j = i == 0 ? 0 : groupEnd[i - 1]; j < groupEnd[i]; ++j)
        for (size_t m = 0; m < measures; ++m)
          addWeighted(sumsOf(i, m), poolWeights.data() + j * rounds, pool[j].measure[m], rounds);
    }
    for (size_t m = 0; m < 2; ++m) {
      std::copy_n(sumsOf(0, m), rounds, sumsOf(baselineSlot, m));
      for (size_t j = 0; j < neighbourCount; ++j)
        addWeighted(sumsOf(baselineSlot, m), neighbourWeights.data() + j * rounds,
                    neighbours[j].measure[m], rounds);
    }
    for (size_t r = 0; r < rounds; ++r) {
      auto sumsAt = [&](size_t slot) {
        double out[4];
        for (size_t m = 0; m < 4; ++m)
          out[m] = sumsOf(slot, m)[r];
        return toSums(out);
      };
      for (size_t i = 0; i < groups.size(); ++i)
        replicate.groups[i] = sumsAt(i);
      replicate.ownBaseline = replicate.groups[0];
      replicate.baseline = sumsAt(baselineSlot);
      computeCurveInto(result.kind, replicate, rate, options.phaseCorrection, values);
      if (!values.baselineValid)
        continue;
      // The replicate's curve, as fillCurve makes the curve's: its slope
      // and maximum impact.
      OriginSlope slope;
      MaxImpact impact;
      size_t points = 0;
      for (size_t v = 0; v < valid.size(); ++v) {
        double y = values.values[valid[v]];
        if (std::isnan(y))
          continue;
        pointSamples[v].push_back(y);
        slope.add(speedupOf[v], y);
        impact.offer(speedupOf[v], y, work.eligible[v]);
        ++points;
      }
      if (points < 2)
        continue;
      slopeSamples.push_back(slope.value());
      if (!std::isnan(impact.best))
        maxSamples.push_back(impact.best);
    }
  }
  const double confidence = std::clamp(options.confidence, 0.5, 0.999);
  for (size_t v = 0; v < valid.size(); ++v)
    if (result.curve[v].experiments >= 2)
      result.curve[v].interval = percentileInterval(pointSamples[v], confidence);
  result.slopeInterval = percentileInterval(slopeSamples, confidence);
  if (!slopeSamples.empty()) {
    size_t atOrBelowZero = 0;
    for (double slope : slopeSamples)
      atOrBelowZero += !(slope > 0);
    result.slopePValue = (1.0 + atOrBelowZero) / (1.0 + slopeSamples.size());
  }
  result.maxImpactInterval = percentileInterval(maxSamples, confidence);
}

/// Steps 5 to 7 for one (line, point): its curve without intervals, or
/// false when it has not enough data.
bool analyzePoint(PointWork &work, std::map<int, Measurements> &bySpeedup, const PointKey &key,
                  const BaselineIndex &baselines, const RunRate &rate,
                  const AnalysisOptions &options, Analysis &analysis) {
  work.result.kind = PointKind(key.first);
  work.result.point = std::string(key.second);
  groupBySpeedup(bySpeedup, key, baselines, options, analysis, work);
  if (!computeValues(work, rate, options, analysis))
    return false;
  fillCurve(work, rate, options);
  return true;
}

/// Step 8 for every curve, while steps 5 to 7 go on for the next ones: each
/// curve's bootstrap draws from its own random sequence (seeded by its line
/// and point), so the curves can be shared out among threads and the result
/// is the same as one after the other. Helper threads start at once and
/// take the curves as they are added; the thread that adds them joins in at
/// finish(). A curve, once added, is the bootstrap's until finish().
class Bootstrapper {
public:
  explicit Bootstrapper(const AnalysisOptions &options) : options(options) {
    if (options.bootstrapRounds == 0)
      return;
    size_t threads = std::min<size_t>(std::max(1u, std::thread::hardware_concurrency()), 8);
    for (size_t t = 1; t < threads; ++t)
      helpers.emplace_back([this] { takeCurves(); });
  }
  ~Bootstrapper() { finish(); }

  void add(PointWork &work, const RunRate &rate) {
    if (options.bootstrapRounds == 0)
      return;
    std::lock_guard<std::mutex> lock(mutex);
    curves.push_back({&work, rate});
    added.notify_one();
  }

  /// Every curve added has its intervals.
  void finish() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      allAdded = true;
    }
    added.notify_all();
    takeCurves();
    for (std::thread &helper : helpers)
      helper.join();
    helpers.clear();
  }

private:
  const AnalysisOptions &options;
  std::mutex mutex;
  std::condition_variable added;
  std::vector<std::pair<PointWork *, RunRate>> curves;
  size_t next = 0; // the first curve not taken
  bool allAdded = false;
  std::vector<std::thread> helpers;

  void takeCurves() {
    for (;;) {
      std::pair<PointWork *, RunRate> curve;
      {
        std::unique_lock<std::mutex> lock(mutex);
        added.wait(lock, [this] { return next < curves.size() || allAdded; });
        if (next == curves.size())
          return;
        curve = curves[next++];
      }
      bootstrapIntervals(*curve.first, curve.second, options);
    }
  }
};

/// Step 9a, many lines compared: Benjamini-Hochberg at the false-discovery
/// rate q over the lines' p-values. Sorted ascending, p_(1) <= ... <= p_(m),
/// the k smallest are kept for the largest k with p_(k) <= k q / m: among
/// the kept lines the expected share of lines with no positive effect is at
/// most q (independent or positively dependent p-values).
void controlFalseDiscoveries(Analysis &analysis, const AnalysisOptions &options) {
  if (!(options.falseDiscoveryRate > 0) || options.bootstrapRounds == 0)
    return;
  std::vector<LineResult *> compared;
  for (LineResult &line : analysis.lines)
    if (!std::isnan(line.pValue))
      compared.push_back(&line);
  if (compared.empty())
    return;
  std::stable_sort(compared.begin(), compared.end(),
                   [](const LineResult *a, const LineResult *b) { return a->pValue < b->pValue; });
  size_t kept = 0;
  const double m = double(compared.size());
  for (size_t k = 1; k <= compared.size(); ++k)
    if (compared[k - 1]->pValue <= k * options.falseDiscoveryRate / m)
      kept = k;
  for (size_t k = 0; k < kept; ++k)
    compared[k]->discovery = true;
  analysis.fdrApplied = true;
  analysis.fdrRate = options.falseDiscoveryRate;
  analysis.fdrCompared = compared.size();
  analysis.discoveries = kept;
}

/// Step 9b: lines by rank key. A line whose curve exceeds its physical
/// bound is noise: it ranks below every line that respects its bound,
/// whatever its slope. Then the lines the false-discovery control kept,
/// above the others. Lines without enough data: most experiments first.
void rankLines(Analysis &analysis, const AnalysisOptions &options) {
  std::stable_sort(analysis.lines.begin(), analysis.lines.end(),
                   [&](const LineResult &a, const LineResult &b) {
                     if (options.rankBy != RankBy::Name) {
                       if (a.exceedsBound != b.exceedsBound)
                         return b.exceedsBound;
                       if (a.discovery != b.discovery)
                         return a.discovery;
                       if (a.rankKey != b.rankKey)
                         return a.rankKey > b.rankKey;
                     }
                     return lineNameLess(a.line, b.line);
                   });
  std::stable_sort(analysis.notEnoughData.begin(), analysis.notEnoughData.end(),
                   [](const NotEnoughData &a, const NotEnoughData &b) {
                     if (a.experiments != b.experiments)
                       return a.experiments > b.experiments;
                     if (a.line != b.line)
                       return lineNameLess(a.line, b.line);
                     return a.point < b.point;
                   });
}

/// The ranking: steps 1 to 9 over the profile's ordinary runs.
Analysis rankProfile(const Profile &profile, const AnalysisOptions &options) {
  Analysis analysis;
  summarizeRuns(profile, analysis);
  BaselineIndex baselines(profile);
  MeasuredProfile measured(profile, options);
  ObservationsByLine data = collectObservations(measured, options, analysis, baselines);
  std::map<std::string_view, Saturation> saturation = saturationByLine(profile);
  double totalRuntime = virtualRuntime(profile);
  std::map<std::string_view, double> contextRuntime = contextRuntimes(profile);
  double stretch = runQueueStretch(profile);

  // Steps 4 to 7 line by line, every curve's intervals (step 8) on other
  // threads meanwhile as the curves are ready, then the lines in the same
  // order.
  struct LineWork {
    LineResult result;
    RunRate rate;
    std::vector<PointWork *> curves;
  };
  std::vector<LineWork> lines;
  std::deque<PointWork> works; // a deque: the curves' addresses stay
  Bootstrapper bootstrap(options);
  for (auto &[line, byPoint] : data) {
    LineWork &lineWork = lines.emplace_back();
    LineResult &lineResult = lineWork.result;
    lineResult.line = std::string(line);
    if (auto found = saturation.find(line); found != saturation.end())
      lineResult.saturation = found->second;
    lineWork.rate = rateOfLine(profile, line, totalRuntime, contextRuntime, stretch);
    for (auto &[key, bySpeedup] : byPoint) {
      PointWork &work = works.emplace_back(PointWork{measured, line, {}, {}, {}, {}, {}, {}, {}});
      bool curve = analyzePoint(work, bySpeedup, key, baselines, lineWork.rate, options, analysis);
      lineResult.experiments += work.result.experiments;
      if (curve) {
        lineWork.curves.push_back(&work);
        bootstrap.add(work, lineWork.rate);
      }
    }
  }
  bootstrap.finish();
  for (LineWork &lineWork : lines) {
    LineResult &lineResult = lineWork.result;
    for (PointWork *work : lineWork.curves) {
      checkBound(work->result, lineWork.rate, work->sums.ownBaseline);
      lineResult.points.push_back(std::move(work->result));
    }
    if (lineResult.points.empty())
      continue;
    double key = -INFINITY;
    for (const PointResult &point : lineResult.points) {
      double value = rankValue(options.rankBy == RankBy::MaxImpact ? point.maxImpact : point.slope);
      if (value > key || &point == &lineResult.points.front()) {
        key = std::max(key, value);
        lineResult.pValue = point.slopePValue;
      }
      lineResult.exceedsBound = lineResult.exceedsBound || point.bound.exceeded();
    }
    lineResult.rankKey = key;
    analysis.lines.push_back(std::move(lineResult));
  }
  controlFalseDiscoveries(analysis, options);
  rankLines(analysis, options);
  for (ProgressPointSummary &point : analysis.progressPoints)
    for (const NotEnoughData &entry : analysis.notEnoughData)
      if (entry.point == point.name && entry.reason != Shortfall::InvalidBaseline)
        ++point.pairsShortOfVisits;
  return analysis;
}

// ---- Confirmation (A/B runs) ------------------------------------------------

/// One A/B pair's measurements of one point: arm A (0 %) and arm B.
struct AbPair {
  Sums a, b;
};

/// Program speedup of arm B over arm A: (m_A - m_B) / m_A; NaN when either
/// arm has no usable measure.
double abEstimate(PointKind kind, const Sums &a, const Sums &b) {
  double ma = progressMeasure(kind, a), mb = progressMeasure(kind, b);
  return ma > 0 && mb > 0 ? (ma - mb) / ma : NAN;
}

/// A window in which the program was starved of CPU by other processes:
/// its threads waited for a CPU more than kStarvedWaitRatio times as long
/// as they ran, while the process kept less than 80 % of its CPUs busy and
/// they did not stand idle (the rule of Saturation::otherLoad; with CPUs
/// idle the waits were the program's own wake-ups, which the arms share). Such a window measures
/// the machine's load, not the program: on a busy 2-CPU machine windows of 1 s with 1 % of a CPU
/// swung an A/B estimate of +16 % [+11, +21] to +4 % [-51, +31]. Run-queue waits do not depend on
/// the arm (a delay is a pause, not a wait for a CPU), so leaving such pairs out does not favour
/// either arm.
constexpr double kStarvedWaitRatio = 4;

bool starved(const Experiment &e) {
  return e.running >= 0 && e.waiting >= 0 && e.cpus > 0 &&
         e.waiting > kStarvedWaitRatio * e.running && e.running < 0.8 * e.cpus &&
         !cpusLeftIdle(e.cpus, e.running, e.idle);
}

/// The pairs of one (line, point) in the A/B runs: in each run, the line's
/// experiments that measured the point, in order; an experiment pairs with
/// the next one of the other arm (the runtime writes 0, S, S, 0, ...: the
/// pairs are (0, S) and (S, 0) in turn), an experiment whose neighbour is of
/// its own arm or missing is left unpaired.
struct AbSeries {
  PointKind kind = PointKind::Throughput;
  double speedup = NAN;
  std::set<size_t> runs;
  size_t experiments = 0;
  size_t starvedPairs = 0;
  std::vector<AbPair> pairs;
  /// An experiment waiting for its partner.
  struct Waiting {
    bool present = false;
    bool armB = false;
    bool starved = false;
    Sums sums;
  };
  std::map<size_t, Waiting> pending; // per run
};

using Waiting = AbSeries::Waiting;

std::vector<Confirmation> confirmationsOf(const Profile &profile, const Analysis &ranking,
                                          const AnalysisOptions &options) {
  // (line, point, B-arm speedup in percent): runs at another speedup are
  // another confirmation.
  std::map<std::tuple<std::string_view, PointKey, int>, AbSeries> series;
  MeasuredProfile measured(profile, options);
  // Each run's first and last A/B experiment are left out: the first (always
  // arm A) runs while the program starts (page faults, cold caches), the last
  // is cut short by the exit and holds its path. In short runs (bench/accuracy's
  // serial, 2 s) the slow first window alone biased D by +3 to +4 %.
  std::map<size_t, std::pair<size_t, size_t>> ends; // run -> (first, last) index
  for (size_t index = 0; index < profile.experiments.size(); ++index) {
    const Experiment &experiment = profile.experiments[index];
    if (experiment.abSpeedup > 0 && !ranked(profile, experiment)) {
      auto found = ends.try_emplace(experiment.run, index, index).first;
      found->second.second = index;
    }
  }
  for (size_t index = 0; index < profile.experiments.size(); ++index) {
    const Experiment &experiment = profile.experiments[index];
    if (ranked(profile, experiment) || !(experiment.abSpeedup > 0))
      continue;
    const auto &[first, last] = ends[experiment.run];
    if (index == first || index == last)
      continue;
    for (size_t p = 0; p < experiment.points.size(); ++p) {
      const PointMeasurement &point = experiment.points[p];
      AbSeries &entry = series[{experiment.selected, PointKey{int(point.kind), point.name},
                                int(std::lround(experiment.abSpeedup * 100))}];
      entry.kind = point.kind;
      entry.runs.insert(experiment.run);
      ++entry.experiments;
      if (std::isnan(entry.speedup))
        entry.speedup = experiment.abSpeedup;
      Waiting &pending = entry.pending[experiment.run];
      // A duration <= 0 is an arm-B window whose delay reached its length: for
      // throughput an estimate like any other, as in the curves (dropping it
      // keeps the B windows whose delay fell short, and lowers D at high
      // speedups); a latency window's in-flight count is undefined then, and
      // the window breaks the sequence: no pair across it.
      if (!(experiment.durationNs > 0) && point.kind != PointKind::Throughput) {
        pending.present = false;
        continue;
      }
      Waiting current{true, experiment.speedup > 0, starved(experiment), Sums()};
      current.sums.add(observationOf(measured, MeasurementRef{uint32_t(index), uint32_t(p)}));
      if (pending.present && pending.armB != current.armB) {
        if (pending.starved || current.starved)
          ++entry.starvedPairs;
        else
          entry.pairs.push_back(current.armB ? AbPair{pending.sums, current.sums}
                                             : AbPair{current.sums, pending.sums});
        pending.present = false;
      } else {
        pending = current;
      }
    }
  }

  std::vector<Confirmation> out;
  const double confidence = std::clamp(options.confidence, 0.5, 0.999);
  for (auto &[key, entry] : series) {
    Confirmation c;
    c.line = std::string(std::get<0>(key));
    c.point = std::string(std::get<1>(key).second);
    c.kind = entry.kind;
    c.speedup = entry.speedup;
    c.runs = entry.runs.size();
    c.experiments = entry.experiments;
    c.pairs = entry.pairs.size();
    c.starvedPairs = entry.starvedPairs;
    Sums a, b;
    for (const AbPair &pair : entry.pairs) {
      a.add(pair.a);
      b.add(pair.b);
    }
    c.durationNs = a.duration + b.duration;
    c.visits = visitsOf(entry.kind, a) + visitsOf(entry.kind, b);
    if (enoughVisits(entry.kind, a, options.minVisits))
      c.estimate = abEstimate(entry.kind, a, b);
    // Pairs bootstrap: experiment-to-experiment variance, and the pairing
    // keeps each A next to the B it ran beside.
    if (!std::isnan(c.estimate) && options.bootstrapRounds > 0 && entry.pairs.size() >= 2) {
      SplitMix64 random(options.seed ^ hashName(c.line, c.point) ^ 0xAB);
      std::vector<double> replicates;
      replicates.reserve(options.bootstrapRounds);
      for (size_t round = 0; round < options.bootstrapRounds; ++round) {
        Sums ra, rb;
        for (size_t k = 0; k < entry.pairs.size(); ++k) {
          const AbPair &pick = entry.pairs[random.below(entry.pairs.size())];
          ra.add(pick.a);
          rb.add(pick.b);
        }
        double value = abEstimate(entry.kind, ra, rb);
        if (!std::isnan(value))
          replicates.push_back(value);
      }
      // Few pairs (7 in a 2-second run of bench/accuracy's open loop): the
      // plain percentile interval is too narrow; read it at the expanded
      // level.
      c.interval = percentileInterval(replicates,
                                      expandedPercentileConfidence(confidence, entry.pairs.size()));
    }
    // The ranking's prediction at the same speedup.
    for (size_t r = 0; r < ranking.lines.size(); ++r) {
      if (ranking.lines[r].line != c.line)
        continue;
      c.rank = r + 1;
      for (const PointResult &point : ranking.lines[r].points)
        if (point.point == c.point && point.kind == c.kind) {
          c.predicted = true;
          c.prediction = point.slope * c.speedup;
          if (point.slopeInterval.valid)
            c.predictionInterval = {point.slopeInterval.low * c.speedup,
                                    point.slopeInterval.high * c.speedup, true};
          c.predictionPhaseCorrected = point.phaseCorrected;
        }
    }
    judgeConfirmation(c, options);
    out.push_back(std::move(c));
  }
  std::stable_sort(out.begin(), out.end(), [](const Confirmation &x, const Confirmation &y) {
    if ((x.rank == 0) != (y.rank == 0))
      return x.rank != 0;
    if (x.rank != y.rank)
      return x.rank < y.rank;
    if (x.line != y.line)
      return lineNameLess(x.line, y.line);
    return x.point < y.point;
  });
  return out;
}

} // namespace

const char *verdictName(Verdict verdict) {
  switch (verdict) {
  case Verdict::Confirmed:
    return "confirmed";
  case Verdict::Refuted:
    return "refuted";
  case Verdict::Open:
    return "open";
  }
  return "?";
}

namespace {
std::string points(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%+.1f%%", fraction * 100);
  return text;
}
} // namespace

void judgeConfirmation(Confirmation &c, const AnalysisOptions &options) {
  c.verdict = Verdict::Open;
  if (std::isnan(c.estimate)) {
    c.reason = "no estimate: too few visits, or no progress, in the 0% arm";
    return;
  }
  if (c.pairs < options.minConfirmPairs || !c.interval.valid) {
    c.reason = std::to_string(c.pairs) + " A/B pairs; a verdict needs " +
               std::to_string(std::max<size_t>(options.minConfirmPairs, 2)) +
               (options.bootstrapRounds ? "" : " and intervals (--bootstrap > 0)");
    return;
  }
  const Interval &ci = c.interval;
  bool narrow = c.width() <= options.confirmNarrowWidth + 1e-12;
  // Only a phase-corrected prediction is a whole-run prediction, which is
  // what an A/B run on a fixed line measures.
  bool comparable = c.predicted && c.predictionPhaseCorrected;
  double predictedLeast = c.predictionInterval.valid ? c.predictionInterval.low : c.prediction;
  if (ci.high < 0) {
    c.verdict = Verdict::Refuted;
    c.reason = "the speedup made the program slower (interval below 0)";
  } else if (comparable && predictedLeast > 0 && ci.high < predictedLeast / 2) {
    c.verdict = Verdict::Refuted;
    c.reason = "at most " + points(ci.high) + ", under half the least the ranking predicted (" +
               points(predictedLeast) + ")";
  } else if (ci.low > 0) {
    c.verdict = Verdict::Confirmed;
    c.reason = "interval above 0";
  } else if (narrow && !(c.predicted && c.prediction <= ci.high)) {
    c.verdict = Verdict::Refuted;
    c.reason = "narrow interval about 0: no effect above " + points(ci.high) +
               (c.predicted ? " (predicted " + points(c.prediction) + ")" : "");
  } else if (narrow) {
    c.reason = "narrow interval about 0 that also holds the prediction (" + points(c.prediction) +
               "): the effect is too small to tell from 0";
  } else {
    c.reason =
        "interval includes 0 and is wider than " + points(options.confirmNarrowWidth).substr(1);
  }
}

ConfirmStop confirmationStop(const Confirmation *c, double elapsedSeconds, double budgetSeconds,
                             const AnalysisOptions &options) {
  if (c && c->pairs >= options.minConfirmPairs && c->width() <= options.confirmNarrowWidth + 1e-12)
    return ConfirmStop::Narrow;
  if (elapsedSeconds >= budgetSeconds)
    return ConfirmStop::Budget;
  return ConfirmStop::Continue;
}

Analysis analyze(const Profile &profile, const AnalysisOptions &options) {
  Analysis analysis = rankProfile(profile, options);
  for (const Run &run : profile.runs)
    analysis.confirmationRuns += run.abRun;
  if (analysis.confirmationRuns != 0) {
    analysis.confirmationExperiments = profile.experiments.size() - analysis.experiments;
    analysis.confirmations = confirmationsOf(profile, analysis, options);
  }
  estimateShortfalls(analysis, profile, options);
  addFunctionNames(analysis, profile);
  return analysis;
}

const Confirmation *findConfirmation(const Analysis &analysis, const std::string &line) {
  const LineResult *ranked = nullptr;
  for (const LineResult &result : analysis.lines)
    if (result.line == line)
      ranked = &result;
  const Confirmation *first = nullptr;
  for (const Confirmation &c : analysis.confirmations) {
    if (c.line != line)
      continue;
    if (!first)
      first = &c;
    if (ranked)
      for (const PointResult &point : ranked->points)
        // The point that gave the line its rank.
        if (point.point == c.point && point.kind == c.kind &&
            rankValue(point.slope) == ranked->rankKey)
          return &c;
  }
  return first;
}

bool ProgressPointSummary::sparse(const AnalysisOptions &o) const {
  double needed = o.minExperiments ? o.minEvidenceVisits / double(o.minExperiments) : 0;
  return experiments && visitsPerExperiment() < std::max(needed, o.minVisits);
}

std::vector<LineSamples> hottestLines(const Profile &profile) {
  std::vector<LineSamples> lines;
  lines.reserve(profile.samples.size());
  for (const auto &[location, totals] : profile.samples)
    if (totals.all > 0 && !splitLineName(location).isPath()) { // counted in its line's own
      LineSamples line{std::string(location), totals.all, {}};
      if (auto found = profile.functions.find(std::string(location));
          found != profile.functions.end())
        line.label.function = found->second;
      lines.push_back(std::move(line));
    }
  std::stable_sort(lines.begin(), lines.end(),
                   [](const LineSamples &a, const LineSamples &b) { return a.count > b.count; });
  return lines;
}

} // namespace causal::profile
