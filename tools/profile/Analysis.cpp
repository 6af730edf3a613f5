//===- Analysis.cpp - From experiments to causal profiles -----------------===//
#include "Analysis.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <tuple>

namespace causal::profile {

const char *shortfallText(Shortfall reason) {
  switch (reason) {
  case Shortfall::None:
    return "ok";
  case Shortfall::NoBaseline:
    return "no 0% (baseline) experiment";
  case Shortfall::InvalidBaseline:
    return "baseline without progress";
  case Shortfall::TooFewSpeedups:
    return "too few distinct speedups";
  }
  return "?";
}

double slopeThroughOrigin(const std::vector<CurvePoint> &curve) {
  double sxy = 0, sxx = 0;
  for (const CurvePoint &point : curve) {
    sxy += point.speedup * point.programSpeedup;
    sxx += point.speedup * point.speedup;
  }
  return sxx > 0 ? sxy / sxx : 0;
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

/// One experiment's contribution to one (line, point, speedup) group.
struct Observation {
  double duration = 0;
  double delta = 0;          // throughput visits
  double arrivals = 0;       // latency
  double departures = 0;     // latency
  double differenceTime = 0; // in-flight count x duration
  double selectedSamples = -1;
};

struct Sums {
  double duration = 0, delta = 0, arrivals = 0, differenceTime = 0;
  double phaseSamples = 0, phaseDuration = 0; // experiments that carry selected-samples
  void add(const Observation &o) {
    duration += o.duration;
    delta += o.delta;
    arrivals += o.arrivals;
    differenceTime += o.differenceTime;
    if (o.selectedSamples >= 0) {
      phaseSamples += o.selectedSamples;
      phaseDuration += o.duration;
    }
  }
};

/// Period between visits (throughput) or mean latency (Little's law); both
/// shrink when the program gets faster. NaN when undefined.
double progressMeasure(PointKind kind, const Sums &sums) {
  if (kind == PointKind::Throughput)
    return sums.delta > 0 && sums.duration > 0 ? sums.duration / sums.delta : NAN;
  // W = L / lambda, L = sum(d_i t_i) / sum(t_i), lambda = sum(a_i) / sum(t_i).
  return sums.arrivals > 0 && sums.differenceTime > 0 ? sums.differenceTime / sums.arrivals : NAN;
}

struct Group {
  int percent = 0;
  std::vector<Observation> observations;
};

/// Phase-correction numerator: samples of the line per nanosecond over
/// whole runs (s / T of Eq. 6 and 8).
struct RunRate {
  double samples = 0, time = 0;
  bool valid() const { return time > 0; }
};

class SplitMix64 {
public:
  explicit SplitMix64(uint64_t seed) : state(seed) {}
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  size_t below(size_t n) { return size_t((unsigned __int128)next() * n >> 64); }

private:
  uint64_t state;
};

uint64_t hashName(const std::string &a, const std::string &b) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : a)
    h = (h ^ uint8_t(c)) * 0x100000001b3ull;
  h = (h ^ 0xFF) * 0x100000001b3ull;
  for (char c : b)
    h = (h ^ uint8_t(c)) * 0x100000001b3ull;
  return h;
}

/// The curve computed from one set of group sums (the data, or one
/// bootstrap replicate). values[i] is NaN where undefined.
struct CurveValues {
  bool baselineValid = false;
  double factor = 1;
  bool corrected = false;
  std::vector<double> values;
};

CurveValues computeCurve(PointKind kind, const std::vector<Sums> &sums, const RunRate &rate,
                         bool phaseCorrection) {
  CurveValues out;
  out.values.assign(sums.size(), NAN);
  double baseline = progressMeasure(kind, sums[0]);
  if (!(baseline > 0))
    return out;
  out.baselineValid = true;
  if (phaseCorrection && rate.valid() && sums[0].phaseDuration > 0 && sums[0].phaseSamples > 0) {
    double observedRate = sums[0].phaseSamples / sums[0].phaseDuration;
    double overallRate = rate.samples / rate.time;
    out.factor = std::clamp(overallRate / observedRate, 0.0, 1.0);
    out.corrected = true;
  }
  for (size_t i = 0; i < sums.size(); ++i) {
    double measure = progressMeasure(kind, sums[i]);
    if (measure > 0)
      out.values[i] = out.factor * (baseline - measure) / baseline;
  }
  out.values[0] = 0;
  return out;
}

Interval percentileInterval(std::vector<double> &values, double confidence) {
  Interval interval;
  if (values.size() < 2)
    return interval;
  std::sort(values.begin(), values.end());
  double alpha = (1 - confidence) / 2;
  interval.low = quantileSorted(values, alpha);
  interval.high = quantileSorted(values, 1 - alpha);
  interval.valid = true;
  return interval;
}

/// "file.c:12" sorts before "file.c:100".
bool lineNameLess(const std::string &a, const std::string &b) {
  size_t ca = a.rfind(':'), cb = b.rfind(':');
  if (ca != std::string::npos && cb != std::string::npos) {
    int byFile = a.compare(0, ca, b, 0, cb);
    if (byFile != 0)
      return byFile < 0;
    char *endA = nullptr, *endB = nullptr;
    unsigned long la = std::strtoul(a.c_str() + ca + 1, &endA, 10);
    unsigned long lb = std::strtoul(b.c_str() + cb + 1, &endB, 10);
    if (la != lb)
      return la < lb;
  }
  return a < b;
}

} // namespace

Analysis analyze(const Profile &profile, const AnalysisOptions &options) {
  Analysis analysis;
  analysis.runs = profile.runs.size();
  analysis.experiments = profile.experiments.size();
  bool allCausal = !profile.runs.empty();
  for (const Run &run : profile.runs) {
    if (run.runtimeNs > 0) {
      ++analysis.runsWithRuntime;
      analysis.runtimeNs += run.runtimeNs;
    }
    allCausal = allCausal && run.writtenByCausal;
  }
  analysis.latencyTimeAveraged = allCausal;

  std::set<std::string> wanted(options.onlyPoints.begin(), options.onlyPoints.end());
  std::set<std::string> seenWanted;

  // line -> (kind, point) -> percent -> observations
  using PointKey = std::pair<int, std::string>;
  std::map<std::string, std::map<PointKey, std::map<int, std::vector<Observation>>>> data;
  std::map<PointKey, ProgressPointSummary> pointSummaries;
  for (const Experiment &experiment : profile.experiments) {
    if (!(experiment.durationNs > 0)) {
      ++analysis.droppedBadDuration;
      continue;
    }
    analysis.experimentTimeNs += experiment.durationNs;
    if (experiment.delayNs > 0)
      analysis.insertedDelayNs += experiment.delayNs;
    int percent = int(std::lround(experiment.speedup * 100));
    bool used = false;
    for (const PointMeasurement &point : experiment.points) {
      PointKey key{int(point.kind), point.name};
      ProgressPointSummary &summary = pointSummaries[key];
      summary.name = point.name;
      summary.kind = point.kind;
      ++summary.experiments;
      summary.visits += point.kind == PointKind::Throughput ? point.delta : point.arrivals;
      if (!wanted.empty()) {
        if (!wanted.count(point.name))
          continue;
        seenWanted.insert(point.name);
      }
      // Every experiment counts, however few visits it saw: leaving out
      // the ones with few visits would keep the windows that happened to
      // catch more visits than their length predicts, and that favours the
      // experiments whose progress is slowest in real time (high speedups,
      // which insert the most delay). The visit minimum applies to groups.
      Observation observation;
      observation.duration = experiment.durationNs;
      observation.selectedSamples = experiment.selectedSamples;
      if (point.kind == PointKind::Throughput) {
        observation.delta = point.delta;
      } else {
        observation.arrivals = point.arrivals;
        observation.departures = point.departures;
        observation.differenceTime = point.difference * experiment.durationNs;
      }
      data[experiment.selected][key][percent].push_back(observation);
      used = true;
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

  // Samples per line per nanosecond over whole runs, for Eq. 8.
  double totalRuntime = 0;
  for (const Run &run : profile.runs)
    if (run.runtimeNs > 0)
      totalRuntime += run.runtimeNs;

  // Saturation per selected line, from the experiments that recorded it.
  std::map<std::string, Saturation> saturation;
  std::map<std::string, double> delayOfLine;
  for (const Experiment &experiment : profile.experiments) {
    if (experiment.cpus < 0 || experiment.running < 0 || experiment.waiting < 0)
      continue;
    Saturation &entry = saturation[experiment.selected];
    ++entry.experiments;
    entry.cpus += experiment.cpus;
    entry.running += experiment.running;
    entry.waiting += experiment.waiting;
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
    double delay = delayOfLine[line];
    entry.sharedDelayShare = delay > 0 ? entry.sharedDelayShare / delay : 0;
  }

  const double confidence = std::clamp(options.confidence, 0.5, 0.999);
  for (auto &lineEntry : data) {
    const std::string &lineName = lineEntry.first;
    LineResult lineResult;
    lineResult.line = lineName;
    if (auto found = saturation.find(lineName); found != saturation.end())
      lineResult.saturation = found->second;
    RunRate rate;
    rate.time = totalRuntime;
    for (const Run &run : profile.runs) {
      if (!(run.runtimeNs > 0))
        continue;
      auto found = run.samples.find(lineName);
      if (found != run.samples.end())
        rate.samples += found->second;
    }
    for (auto &pointEntry : lineEntry.second) {
      PointResult result;
      result.kind = PointKind(pointEntry.first.first);
      result.point = pointEntry.first.second;
      std::vector<Group> groups;
      for (auto &speedupEntry : pointEntry.second) {
        result.experiments += speedupEntry.second.size();
        // A speedup whose experiments together saw fewer than minVisits
        // visits (latency: arrivals or departures) says too little.
        double visits = 0, departures = 0;
        for (const Observation &o : speedupEntry.second) {
          visits += result.kind == PointKind::Throughput ? o.delta : o.arrivals;
          departures += o.departures;
        }
        if (visits < options.minVisits ||
            (result.kind != PointKind::Throughput && departures < options.minVisits)) {
          ++analysis.droppedLowVisits;
          continue;
        }
        groups.push_back({speedupEntry.first, std::move(speedupEntry.second)});
      }
      lineResult.experiments += result.experiments;
      NotEnoughData shortfall{lineName, result.point, Shortfall::None, result.experiments, 0};
      if (groups.empty() || groups.front().percent != 0) {
        shortfall.reason = Shortfall::NoBaseline;
        shortfall.distinctSpeedups = groups.size();
        analysis.notEnoughData.push_back(shortfall);
        continue;
      }
      std::vector<Sums> sums(groups.size());
      for (size_t i = 0; i < groups.size(); ++i)
        for (const Observation &o : groups[i].observations)
          sums[i].add(o);
      CurveValues curve = computeCurve(result.kind, sums, rate, options.phaseCorrection);
      if (!curve.baselineValid) {
        shortfall.reason = Shortfall::InvalidBaseline;
        shortfall.distinctSpeedups = groups.size();
        analysis.notEnoughData.push_back(shortfall);
        continue;
      }
      std::vector<size_t> valid; // group indices with a value
      for (size_t i = 0; i < groups.size(); ++i)
        if (!std::isnan(curve.values[i]))
          valid.push_back(i);
      result.distinctSpeedups = valid.size();
      if (valid.size() < std::max<size_t>(options.minSpeedups, 2)) {
        shortfall.reason = Shortfall::TooFewSpeedups;
        shortfall.distinctSpeedups = valid.size();
        analysis.notEnoughData.push_back(shortfall);
        continue;
      }
      result.phaseCorrected = curve.corrected;
      result.phaseFactor = curve.factor;
      if (options.phaseCorrection && !curve.corrected) {
        if (!rate.valid())
          result.phaseNote = "no runtime/samples records";
        else if (sums[0].phaseDuration <= 0)
          result.phaseNote = "baseline experiments carry no selected-samples";
        else
          result.phaseNote = "no samples in the line during its baseline experiments";
      }
      for (size_t i : valid) {
        CurvePoint point;
        point.speedup = groups[i].percent / 100.0;
        point.programSpeedup = curve.values[i];
        point.experiments = groups[i].observations.size();
        point.durationNs = sums[i].duration;
        result.curve.push_back(point);
      }
      result.slope = slopeThroughOrigin(result.curve);
      auto maxOf = [](const std::vector<CurvePoint> &points, double &at) {
        double best = -INFINITY;
        for (const CurvePoint &point : points)
          if (point.speedup > 0 && point.programSpeedup > best) {
            best = point.programSpeedup;
            at = point.speedup;
          }
        return best;
      };
      result.maxImpact = maxOf(result.curve, result.maxImpactSpeedup);

      // Bootstrap: resample the (line, point) pair's experiments with
      // replacement, all speedups together (a pairs bootstrap, so the scatter
      // between speedups counts too); replicates without a usable baseline
      // are skipped. A curve point measured by one experiment gets no
      // interval of its own: one value says nothing about its spread.
      if (options.bootstrapRounds > 0) {
        SplitMix64 random(options.seed ^ hashName(lineName, result.point));
        std::vector<std::pair<size_t, const Observation *>> pool;
        for (size_t i = 0; i < groups.size(); ++i)
          for (const Observation &o : groups[i].observations)
            pool.push_back({i, &o});
        std::vector<std::vector<double>> pointSamples(valid.size());
        std::vector<double> slopeSamples, maxSamples;
        std::vector<Sums> replicate(groups.size());
        std::vector<CurvePoint> replicateCurve;
        for (size_t round = 0; round < options.bootstrapRounds; ++round) {
          std::fill(replicate.begin(), replicate.end(), Sums());
          for (size_t k = 0; k < pool.size(); ++k) {
            const auto &pick = pool[random.below(pool.size())];
            replicate[pick.first].add(*pick.second);
          }
          CurveValues values = computeCurve(result.kind, replicate, rate, options.phaseCorrection);
          if (!values.baselineValid)
            continue;
          replicateCurve.clear();
          for (size_t v = 0; v < valid.size(); ++v) {
            double y = values.values[valid[v]];
            if (std::isnan(y))
              continue;
            pointSamples[v].push_back(y);
            replicateCurve.push_back({groups[valid[v]].percent / 100.0, y, {}, 0, 0});
          }
          if (replicateCurve.size() < 2)
            continue;
          slopeSamples.push_back(slopeThroughOrigin(replicateCurve));
          double at;
          maxSamples.push_back(maxOf(replicateCurve, at));
        }
        for (size_t v = 0; v < valid.size(); ++v)
          if (groups[valid[v]].observations.size() >= 2)
            result.curve[v].interval = percentileInterval(pointSamples[v], confidence);
        result.slopeInterval = percentileInterval(slopeSamples, confidence);
        result.maxImpactInterval = percentileInterval(maxSamples, confidence);
      }
      lineResult.points.push_back(std::move(result));
    }
    if (lineResult.points.empty())
      continue;
    double key = -INFINITY;
    for (const PointResult &point : lineResult.points)
      key = std::max(key, options.rankBy == RankBy::MaxImpact ? point.maxImpact : point.slope);
    lineResult.rankKey = key;
    analysis.lines.push_back(std::move(lineResult));
  }

  std::stable_sort(analysis.lines.begin(), analysis.lines.end(),
                   [&](const LineResult &a, const LineResult &b) {
                     if (options.rankBy != RankBy::Name && a.rankKey != b.rankKey)
                       return a.rankKey > b.rankKey;
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
  return analysis;
}

std::vector<LineSamples> hottestLines(const Profile &profile) {
  std::map<std::string, double> totals;
  for (const Run &run : profile.runs)
    for (const auto &[location, count] : run.samples)
      totals[location] += count;
  std::vector<LineSamples> lines;
  lines.reserve(totals.size());
  for (const auto &[location, count] : totals)
    if (count > 0)
      lines.push_back({location, count});
  std::stable_sort(lines.begin(), lines.end(),
                   [](const LineSamples &a, const LineSamples &b) { return a.count > b.count; });
  return lines;
}

} // namespace causal::profile
