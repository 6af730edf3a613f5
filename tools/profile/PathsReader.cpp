//===- PathsReader.cpp - Read the paths sidecar ---------------------------===//
#include "PathsReader.h"

#include <cstring>

#include "SidecarChunks.h"

#include "causal/paths_format.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <memory>
#include <set>
#include <sys/stat.h>

namespace causal::profile {

namespace pf = causal::paths_format;

namespace {

class Reader : SidecarRecords<PathRun> {
public:
  Reader(std::string_view bytes, const std::string &name, PathsFile &into)
      : SidecarRecords(name, into.runs, into.warnings, &typeName), bytes(bytes), out(into) {}

  bool read(std::string &error) {
    out.path = name;
    static const SidecarFormat format = {"paths", pf::kMagic, pf::kVersion, "--paths"};
    if (!readSidecarChunks(
            bytes, name, format, out.version,
            [this](const pf::ChunkHeader &chunk, std::string_view payload, uint64_t at,
                   std::string &error) { return readChunk(chunk, payload, at, error); },
            error))
      return false;
    finish();
    return true;
  }

private:
  std::string_view bytes;
  PathsFile &out;
  std::map<size_t, std::set<uint32_t>> pathIds;

  static const char *typeName(uint32_t type) {
    switch (pf::ChunkType(type)) {
    case pf::ChunkType::RunBegin:
      return "RunBegin";
    case pf::ChunkType::String:
      return "String";
    case pf::ChunkType::Function:
      return "Function";
    case pf::ChunkType::Path:
      return "Path";
    case pf::ChunkType::RunEnd:
      return "RunEnd";
    }
    return "?";
  }

  bool readChunk(const pf::ChunkHeader &chunk, std::string_view payload, uint64_t at,
                 std::string &error) {
    switch (pf::ChunkType(chunk.type)) {
    case pf::ChunkType::RunBegin: {
      // Version 1 wrote the fields up to time_one_in; the others read as 0.
      size_t size = out.version >= 2 ? sizeof(pf::RunBegin) : pf::kRunBeginV1Size;
      if (!fixedSize(chunk, size, at, error))
        return false;
      pf::RunBegin begin;
      memset(&begin, 0, sizeof(begin));
      memcpy(&begin, payload.data(), size);
      // A run written again (the periodic flush): its state so far is
      // replaced by what follows, in the place of its first write.
      size_t index;
      auto found = runIndex.find(chunk.run);
      if (found != runIndex.end()) {
        index = found->second;
      } else {
        index = out.runs.size();
        runIndex[chunk.run] = index;
        out.runs.emplace_back();
      }
      PathRun &run = out.runs[index];
      unsigned writes = run.writes;
      run = PathRun();
      run.writes = writes + 1;
      run.id = chunk.run;
      run.offset = at;
      run.startNs = begin.start_ns;
      run.realtimeNs = begin.realtime_ns;
      run.pid = begin.pid;
      run.flags = begin.flags;
      run.samplePeriodNs = begin.sample_period_ns;
      run.cpuEstimated = !(begin.flags & pf::kCpuClock);
      run.timeOneIn = begin.time_one_in > 1 ? begin.time_one_in : 1;
      // Version 1: every entry walked.
      run.walkOneIn = out.version >= 2 ? begin.walk_one_in : 1;
      run.walkGapMax = begin.walk_gap_max > 1 ? begin.walk_gap_max : 1;
      pendingProgram.erase(index);
      if (begin.program_name != 0)
        pendingProgram[index] = begin.program_name;
      pathIds.erase(index);
      return true;
    }
    case pf::ChunkType::String:
      return readString(chunk, payload, at, error);
    case pf::ChunkType::Function: {
      if (!fixedSize(chunk, sizeof(pf::Function), at, error))
        return false;
      PathRun *run = runOf(chunk, at, error);
      if (!run)
        return false;
      auto record = loadRecord<pf::Function>(payload.data());
      std::string what = "Function chunk of function " + std::to_string(record.id);
      if (!knownString(*run, record.symbol, what + " (symbol)", at, error) ||
          !knownString(*run, record.name, what + " (name)", at, error))
        return false;
      PathFunction function;
      function.id = record.id;
      function.symbol = run->text(record.symbol);
      function.name = run->text(record.name);
      function.enabled = record.enabled != 0;
      auto [where, inserted] = run->functions.emplace(record.id, function);
      if (!inserted) {
        if (where->second.symbol != function.symbol || where->second.name != function.name)
          return fail(error, at,
                      "function id " + std::to_string(record.id) +
                          " defined twice with different names");
        where->second.enabled = where->second.enabled || function.enabled;
      }
      return true;
    }
    case pf::ChunkType::Path: {
      PathRun *run = runOf(chunk, at, error);
      if (!run)
        return false;
      if (payload.size() < sizeof(pf::PathHead))
        return fail(error, at,
                    "Path chunk of " + std::to_string(payload.size()) +
                        " bytes; its head alone has " + std::to_string(sizeof(pf::PathHead)));
      auto head = loadRecord<pf::PathHead>(payload.data());
      std::string what = "path " + std::to_string(head.id);
      if (head.depth == 0)
        return fail(error, at,
                    what + " has depth 0 (a path has at least the function's own frame)");
      uint64_t frameBytes = payload.size() - sizeof(pf::PathHead);
      if (frameBytes != uint64_t(head.depth) * sizeof(pf::Frame))
        return fail(error, at,
                    what + " says depth " + std::to_string(head.depth) + " (" +
                        std::to_string(uint64_t(head.depth) * sizeof(pf::Frame)) +
                        " bytes of frames), its chunk holds " + std::to_string(frameBytes) +
                        " bytes of frames");
      auto function = run->functions.find(head.function);
      if (function == run->functions.end())
        return fail(error, at,
                    what + " is of function id " + std::to_string(head.function) +
                        ", which no Function chunk of its run defined before");
      size_t index = size_t(run - out.runs.data());
      if (!pathIds[index].insert(head.id).second)
        return fail(error, at,
                    "path id " + std::to_string(head.id) + " used twice in run " +
                        hexNumber(chunk.run));
      PathRecord path;
      path.id = head.id;
      path.function = head.function;
      path.truncated = (head.flags & pf::kPathTruncated) != 0;
      path.calls = head.calls;
      path.recursiveCalls = head.recursive_calls;
      path.wallNs = head.wall_ns;
      path.blockedNs = head.blocked_ns;
      path.samples = head.samples;
      path.threads = head.threads;
      if (run->cpuEstimated) {
        // samples x period, saturating (a damaged file must not wrap around).
        unsigned __int128 product = (unsigned __int128)head.samples * run->samplePeriodNs;
        path.cpuNs = product > UINT64_MAX ? UINT64_MAX : uint64_t(product);
      } else {
        path.cpuNs = head.cpu_ns;
      }
      path.frames.reserve(head.depth);
      for (uint32_t i = 0; i < head.depth; ++i) {
        auto frame = loadRecord<pf::Frame>(payload.data() + sizeof(pf::PathHead) +
                                           size_t(i) * sizeof(pf::Frame));
        std::string where = what + " (frame " + std::to_string(i) + ")";
        if (!knownString(*run, frame.function, where, at, error) ||
            !knownString(*run, frame.location, where, at, error))
          return false;
        path.frames.push_back({run->text(frame.function), run->text(frame.location)});
      }
      run->paths.push_back(std::move(path));
      return true;
    }
    case pf::ChunkType::RunEnd: {
      if (!fixedSize(chunk, sizeof(pf::RunEnd), at, error))
        return false;
      PathRun *run = runOf(chunk, at, error);
      if (!run)
        return false;
      if (run->hasEnd)
        return fail(error, at,
                    "a second RunEnd for run " + hexNumber(chunk.run) +
                        " with no RunBegin between them");
      auto end = loadRecord<pf::RunEnd>(payload.data());
      run->hasEnd = true;
      run->endNs = end.end_ns;
      run->pathsWritten = end.paths;
      run->droppedEntries = end.dropped_entries;
      run->truncatedWalks = end.truncated_walks;
      return true;
    }
    }
    return skipUnknown(chunk, at);
  }

  void finish() {
    for (size_t index = 0; index < out.runs.size(); ++index) {
      PathRun &run = out.runs[index];
      std::string label = runLabel(index, run);
      resolveProgram(index, run, label);
      if (!run.hasEnd)
        warn(label + " has no RunEnd: the process ended before writing its totals; its paths "
                     "up to its last write are used");
      else if (run.pathsWritten != run.paths.size())
        warn(label + ": its RunEnd counts " + std::to_string(run.pathsWritten) +
             " paths, the file holds " + std::to_string(run.paths.size()));
      if (run.droppedEntries)
        warn(label + ": " + std::to_string(run.droppedEntries) +
             " entries were not recorded (a thread's path table or active stack was full): "
             "calls and times are too low");
    }
  }
};

} // namespace

std::string PathFunction::displayName() const {
  if (!name.empty())
    return name;
  if (!symbol.empty())
    return symbol;
  return "function #" + std::to_string(id);
}

std::string PathFunction::key() const { return symbol.empty() ? displayName() : symbol; }

const std::string &PathRun::text(uint32_t id) const {
  static const std::string none;
  auto found = strings.find(id);
  return found == strings.end() ? none : found->second;
}

std::string pathsPathFor(const std::string &profilePath) { return profilePath + pf::kSuffix; }

bool startsLikePathsFile(std::string_view head) {
  return head.size() >= sizeof(pf::kMagic) &&
         head.compare(0, sizeof(pf::kMagic), std::string_view(pf::kMagic, sizeof(pf::kMagic))) == 0;
}

bool readPathsData(std::string_view bytes, const std::string &name, PathsFile &into,
                   std::string &error) {
  return Reader(bytes, name, into).read(error);
}

std::vector<std::string> pathsPartFiles(const std::string &path) {
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  std::string prefix =
      (slash == std::string::npos ? path : path.substr(slash + 1)) + pf::kPartInfix;
  std::vector<std::string> parts;
  std::unique_ptr<DIR, int (*)(DIR *)> listing(opendir(dir.c_str()), closedir);
  if (!listing)
    return parts;
  while (const dirent *entry = readdir(listing.get())) {
    std::string_view name = entry->d_name;
    bool temporary = name.size() >= 4 && name.substr(name.size() - 4) == ".tmp";
    if (name.size() > prefix.size() && name.compare(0, prefix.size(), prefix) == 0 && !temporary)
      parts.push_back((slash == std::string::npos ? "" : dir) + std::string(name));
  }
  std::sort(parts.begin(), parts.end());
  return parts;
}

bool readPathsFile(const std::string &path, PathsFile &into, std::string &error) {
  // The part files first: a process that ends meanwhile appends its run to
  // PROFILE.paths before it removes its part file, so the run is read
  // whole from one or the other.
  std::vector<PathsFile> parts;
  for (const std::string &name : pathsPartFiles(path)) {
    std::string bytes, partError;
    PathsFile part;
    struct stat gone;
    if (readSidecarFile(name, bytes, partError) && readPathsData(bytes, name, part, partError))
      parts.push_back(std::move(part));
    else if (stat(name.c_str(), &gone) == 0 || errno != ENOENT) // not removed since the listing
      into.warnings.push_back(partError + " (a part file: left out)");
  }
  struct stat st;
  bool mainMissing = stat(path.c_str(), &st) != 0 && errno == ENOENT;
  std::string bytes;
  if (!(mainMissing && !parts.empty()) &&
      !(readSidecarFile(path, bytes, error) && readPathsData(bytes, path, into, error)))
    return false;
  into.path = path;
  for (PathsFile &part : parts) {
    if (into.version == 0)
      into.version = part.version;
    for (PathRun &run : part.runs) {
      auto same = std::find_if(into.runs.begin(), into.runs.end(),
                               [&run](const PathRun &known) { return known.id == run.id; });
      if (same == into.runs.end())
        into.runs.push_back(std::move(run)); // still running, or killed
      else if (!same->hasEnd)
        *same = std::move(run); // its write to PROFILE.paths was cut off
      // else PROFILE.paths holds its end, written after its last part
    }
    into.warnings.insert(into.warnings.end(), part.warnings.begin(), part.warnings.end());
  }
  return true;
}

} // namespace causal::profile
