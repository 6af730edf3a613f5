//===- test/unit/runtime/ProfileParse.h - Reads Coz records back ----------===//
#ifndef CAUSAL_TEST_UNIT_RUNTIME_PROFILEPARSE_H
#define CAUSAL_TEST_UNIT_RUNTIME_PROFILEPARSE_H

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace causal::test {

struct ProfileRecord {
  std::string type;
  std::map<std::string, std::string> fields;
};

/// Parses "type\tkey=value\t..." lines. Lines that do not have this shape
/// (a known type, every field key=value with a non-empty key) are returned
/// in |malformed|.
inline std::vector<ProfileRecord> parseProfile(const std::string &text,
                                               std::vector<std::string> *malformed) {
  std::vector<ProfileRecord> records;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> parts;
    size_t begin = 0;
    for (;;) {
      size_t tab = line.find('\t', begin);
      parts.push_back(line.substr(begin, tab - begin));
      if (tab == std::string::npos)
        break;
      begin = tab + 1;
    }
    ProfileRecord record;
    record.type = parts[0];
    bool ok = record.type == "startup" || record.type == "runtime" || record.type == "samples" ||
              record.type == "experiment" || record.type == "throughput-point" ||
              record.type == "latency-point" || record.type == "shutdown";
    for (size_t i = 1; i < parts.size() && ok; ++i) {
      size_t eq = parts[i].find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == parts[i].size()) {
        ok = false;
        break;
      }
      record.fields[parts[i].substr(0, eq)] = parts[i].substr(eq + 1);
    }
    // The runtime adds sample-period= (renderProfile leaves it out when
    // given no period).
    // A run written in parts (the periodic flush) names itself with run= in
    // startup and in the runtime record each later part starts with, and its
    // last part ends with shutdown.
    size_t named = record.fields.count("run");
    if (ok && record.type == "startup")
      ok = (parts.size() == 3 + named ||
            (parts.size() == 4 + named && record.fields.count("sample-period"))) &&
           record.fields.count("time") && record.fields["profiler"] == "causal";
    // ... samples-outside= when samples landed outside instrumented code,
    // always samples-expected= and samples-arrived= (schema 5),
    // timer-samples= when a CPU-time timer took any (schema 8), and
    // samples-expected-spread= when the expected count has one (schema 9).
    size_t extra = named + record.fields.count("timer-samples") +
                   record.fields.count("samples-expected-spread");
    if (ok && record.type == "runtime")
      ok = (parts.size() == 4 + extra ||
            (parts.size() == 5 + extra && record.fields.count("samples-outside"))) &&
           record.fields.count("time") && record.fields.count("samples-expected") &&
           record.fields.count("samples-arrived");
    if (ok && record.type == "shutdown")
      ok = parts.size() == 3 && record.fields.count("time") && record.fields.count("samples");
    // ... and ab-speedup= in A/B runs (CAUSAL_AB_SPEEDUP), idle= where
    // /proc/stat could be read (schema 7).
    size_t optional = record.fields.count("ab-speedup") + record.fields.count("idle");
    if (ok && record.type == "experiment")
      ok = parts.size() == 10 + optional && record.fields.count("selected") &&
           record.fields.count("speedup") && record.fields.count("duration") &&
           record.fields.count("selected-samples") && record.fields.count("delay") &&
           record.fields.count("shared-cpu-delay") && record.fields.count("cpus") &&
           record.fields.count("running") && record.fields.count("waiting");
    if (ok && record.type == "throughput-point")
      ok = parts.size() == 3 && record.fields.count("name") && record.fields.count("delta");
    // ... and in-flight= unless no request was in flight.
    if (ok && record.type == "latency-point")
      ok = (parts.size() == 5 || (parts.size() == 6 && record.fields.count("in-flight"))) &&
           record.fields.count("name") && record.fields.count("arrivals") &&
           record.fields.count("departures") && record.fields.count("difference");
    if (ok && record.type == "samples")
      ok = parts.size() == 3 && record.fields.count("location") && record.fields.count("count");
    if (ok)
      records.push_back(record);
    else if (malformed)
      malformed->push_back(line);
  }
  return records;
}

inline std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

/// Sum of the counts of samples records at |location| in records
/// [begin, end).
inline unsigned long long samplesAt(const std::vector<ProfileRecord> &records,
                                    const std::string &location, size_t begin = 0,
                                    size_t end = ~size_t(0)) {
  // Counts are cumulative within a run, the last one counts; a run in parts
  // repeats a line in later parts (which start with runtime run=ID).
  std::map<std::string, unsigned long long> last; // run -> count
  std::string run = "#0";
  size_t runs = 0;
  for (size_t i = begin; i < records.size() && i < end; ++i) {
    const ProfileRecord &record = records[i];
    auto named = record.fields.find("run");
    if (record.type == "startup")
      run = named != record.fields.end() ? named->second : "#" + std::to_string(++runs);
    else if (record.type == "runtime" && named != record.fields.end())
      run = named->second;
    else if (record.type == "samples" && record.fields.at("location") == location)
      last[run] = std::stoull(record.fields.at("count"));
  }
  unsigned long long total = 0;
  for (const auto &entry : last)
    total += entry.second;
  return total;
}

/// A field of the last runtime record (a profile of one run), -1 if absent.
inline long long lastRuntimeField(const std::vector<ProfileRecord> &records,
                                  const std::string &key) {
  for (size_t i = records.size(); i-- > 0;)
    if (records[i].type == "runtime") {
      auto field = records[i].fields.find(key);
      return field == records[i].fields.end() ? -1 : std::stoll(field->second);
    }
  return -1;
}

} // namespace causal::test

#endif // CAUSAL_TEST_UNIT_RUNTIME_PROFILEPARSE_H
