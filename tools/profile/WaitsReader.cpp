//===- WaitsReader.cpp - Read the waits sidecar ---------------------------===//
#include "WaitsReader.h"

#include "SidecarChunks.h"

#include "causal/tunables.h"
#include "causal/waits_format.h"

#include <set>
#include <sstream>

namespace causal::profile {

namespace wf = causal::waits_format;

namespace {

class Reader : SidecarRecords<WaitRun> {
public:
  Reader(std::string_view bytes, const std::string &name, WaitsFile &into)
      : SidecarRecords(name, into.runs, into.warnings, &typeName), bytes(bytes), out(into) {}

  bool read(std::string &error) {
    out.path = name;
    static const SidecarFormat format = {"waits", wf::kMagic, wf::kVersion, "--waits"};
    if (!readSidecarChunks(
            bytes, name, format, out.version,
            [this](const wf::ChunkHeader &chunk, std::string_view payload, uint64_t at,
                   std::string &error) { return readChunk(chunk, payload, at, error); },
            error))
      return false;
    return finish(error);
  }

private:
  std::string_view bytes;
  WaitsFile &out;

  static const char *typeName(uint32_t type) {
    switch (wf::ChunkType(type)) {
    case wf::ChunkType::RunBegin:
      return "RunBegin";
    case wf::ChunkType::String:
      return "String";
    case wf::ChunkType::Thread:
      return "Thread";
    case wf::ChunkType::Episodes:
      return "Episodes";
    case wf::ChunkType::RunEnd:
      return "RunEnd";
    }
    return "?";
  }

  void seeTime(WaitRun &run, uint64_t ns) {
    if (!run.hasEnd && ns > run.endNs)
      run.endNs = ns;
  }

  bool readChunk(const wf::ChunkHeader &chunk, std::string_view payload, uint64_t at,
                 std::string &error) {
    switch (wf::ChunkType(chunk.type)) {
    case wf::ChunkType::RunBegin: {
      if (!fixedSize(chunk, sizeof(wf::RunBegin), at, error))
        return false;
      if (runIndex.count(chunk.run))
        return fail(error, at, "a second RunBegin for run " + hexNumber(chunk.run));
      auto begin = loadRecord<wf::RunBegin>(payload.data());
      WaitRun run;
      run.id = chunk.run;
      run.offset = at;
      run.startNs = begin.start_ns;
      run.endNs = begin.start_ns;
      run.realtimeNs = begin.realtime_ns;
      run.pid = begin.pid;
      run.what = begin.what;
      run.binaryHash = begin.binary_hash;
      if (begin.program_name != 0)
        pendingProgram[out.runs.size()] = begin.program_name;
      runIndex[chunk.run] = out.runs.size();
      out.runs.push_back(std::move(run));
      return true;
    }
    case wf::ChunkType::String:
      return readString(chunk, payload, at, error);
    case wf::ChunkType::Thread: {
      if (!fixedSize(chunk, sizeof(wf::Thread), at, error))
        return false;
      WaitRun *run = runOf(chunk, at, error);
      if (!run)
        return false;
      auto record = loadRecord<wf::Thread>(payload.data());
      if (record.tid == 0 || wf::isPseudoThread(record.tid))
        return fail(error, at, "Thread chunk with thread id " + std::to_string(record.tid));
      if (!knownString(*run, record.name, "Thread chunk (name)", at, error) ||
          !knownString(*run, record.start_routine, "Thread chunk (start routine)", at, error))
        return false;
      if (record.end_ns < record.start_ns)
        return fail(error, at, "thread " + std::to_string(record.tid) + " ends before it starts");
      WaitThread &thread = run->threads[record.tid];
      if (thread.described)
        return fail(error, at, "a second Thread chunk for thread " + std::to_string(record.tid));
      thread.tid = record.tid;
      thread.parentTid = record.parent_tid;
      thread.name = run->text(record.name);
      thread.startRoutine = run->text(record.start_routine);
      thread.startNs = record.start_ns;
      thread.endNs = record.end_ns;
      thread.cpuNs = record.cpu_ns;
      thread.blockedNs = record.blocked_ns;
      thread.dropped = record.dropped;
      thread.described = true;
      seeTime(*run, record.end_ns);
      return true;
    }
    case wf::ChunkType::Episodes: {
      WaitRun *run = runOf(chunk, at, error);
      if (!run)
        return false;
      if (payload.size() < 8)
        return fail(error, at, "Episodes chunk of " + std::to_string(payload.size()) + " bytes");
      uint32_t tid = loadRecord<uint32_t>(payload.data());
      uint32_t count = loadRecord<uint32_t>(payload.data() + 4);
      if ((payload.size() - 8) != uint64_t(count) * sizeof(wf::Episode))
        return fail(error, at,
                    "Episodes chunk says " + std::to_string(count) + " episodes in " +
                        std::to_string(payload.size() - 8) + " bytes (each takes " +
                        std::to_string(sizeof(wf::Episode)) + ")");
      if (tid == 0 || wf::isPseudoThread(tid))
        return fail(error, at, "Episodes chunk of thread id " + std::to_string(tid));
      for (uint32_t i = 0; i < count; ++i) {
        uint64_t where = at + sizeof(wf::ChunkHeader) + 8 + uint64_t(i) * sizeof(wf::Episode);
        auto record = loadRecord<wf::Episode>(payload.data() + 8 + size_t(i) * sizeof(wf::Episode));
        if (record.end_ns < record.start_ns)
          return fail(error, where,
                      "episode of thread " + std::to_string(tid) + " ends (" +
                          std::to_string(record.end_ns) + ") before it starts (" +
                          std::to_string(record.start_ns) + ")");
        if (record.kind < uint8_t(wf::WaitKind::Mutex) ||
            record.kind > uint8_t(wf::WaitKind::Other))
          return fail(error, where, "episode of unknown kind " + std::to_string(record.kind));
        if (record.end < uint8_t(wf::WaitEnd::Woken) || record.end > uint8_t(wf::WaitEnd::Failed))
          return fail(error, where, "episode with unknown end " + std::to_string(record.end));
        if (!knownString(*run, record.line, "episode (line)", where, error) ||
            !knownString(*run, record.waker_line, "episode (waker line)", where, error))
          return false;
        WaitEpisode episode;
        episode.tid = tid;
        episode.waker = record.waker == 0 ? uint32_t(wf::kPseudoUnknown) : record.waker;
        episode.startNs = record.start_ns;
        episode.endNs = record.end_ns;
        episode.object = record.object;
        episode.line = record.line;
        episode.wakerLine = record.waker_line;
        episode.kind = record.kind;
        episode.end = record.end;
        episode.flags = record.flags;
        if (record.start_ns < run->startNs)
          ++episodesBeforeStart[run - out.runs.data()];
        seeTime(*run, record.end_ns);
        run->episodes.push_back(episode);
      }
      return true;
    }
    case wf::ChunkType::RunEnd: {
      if (!fixedSize(chunk, sizeof(wf::RunEnd), at, error))
        return false;
      WaitRun *run = runOf(chunk, at, error);
      if (!run)
        return false;
      if (run->hasEnd)
        return fail(error, at, "a second RunEnd for run " + hexNumber(chunk.run));
      auto end = loadRecord<wf::RunEnd>(payload.data());
      if (end.end_ns < run->startNs)
        return fail(error, at, "run " + hexNumber(chunk.run) + " ends before it starts");
      run->hasEnd = true;
      run->endNs = end.end_ns;
      run->episodesWritten = end.episodes;
      run->dropped = end.dropped;
      run->bufferBytes = end.buffer_bytes;
      return true;
    }
    }
    return skipUnknown(chunk, at);
  }

  std::map<size_t, uint64_t> episodesBeforeStart;

  bool finish(std::string &) {
    std::set<uint64_t> hashes;
    for (size_t index = 0; index < out.runs.size(); ++index) {
      WaitRun &run = out.runs[index];
      std::string label = runLabel(index, run);
      resolveProgram(index, run, label);
      if (run.binaryHash)
        hashes.insert(run.binaryHash);
      if (!run.hasEnd)
        warn(label + " has no RunEnd: the process ended before writing its totals; its waits "
                     "up to its last flush are used");
      if (auto found = episodesBeforeStart.find(index); found != episodesBeforeStart.end())
        warn(label + ": " + std::to_string(found->second) + " episodes start before the run");
      // Threads with episodes but no Thread chunk: made up from their episodes.
      std::map<uint32_t, size_t> undescribed;
      for (const WaitEpisode &episode : run.episodes) {
        WaitThread &thread = run.threads[episode.tid];
        if (thread.described)
          continue;
        if (thread.tid == 0) {
          thread.tid = episode.tid;
          thread.startNs = episode.startNs;
        }
        thread.startNs = std::min(thread.startNs, episode.startNs);
        thread.endNs = std::max(thread.endNs, episode.endNs);
        thread.blockedNs += episode.endNs - episode.startNs;
        ++undescribed[episode.tid];
      }
      if (!undescribed.empty())
        warn(label + ": " + std::to_string(undescribed.size()) +
             " thread(s) have episodes but no Thread chunk (first: tid " +
             std::to_string(undescribed.begin()->first) +
             "); their names, CPU time and unexplained share are unknown");
      uint64_t dropped = 0;
      size_t droppedThreads = 0;
      for (const auto &[tid, thread] : run.threads)
        if (thread.dropped) {
          dropped += thread.dropped;
          ++droppedThreads;
        }
      dropped = std::max(dropped, run.dropped);
      if (dropped)
        warn(label + " lost " + std::to_string(dropped) + " episodes to full buffers (" +
             std::to_string(droppedThreads) + " threads): weights are too low");
    }
    if (hashes.size() > 1)
      warn("runs of " + std::to_string(hashes.size()) +
           " different binaries are appended in this file (RunBegin binary hashes differ); "
           "their threads are analysed together");
    return true;
  }
};

} // namespace

const std::string &WaitRun::text(uint32_t id) const {
  static const std::string none;
  auto found = strings.find(id);
  return found == strings.end() ? none : found->second;
}

std::string waitsPathFor(const std::string &profilePath) { return profilePath + wf::kSuffix; }

bool startsLikeWaitsFile(std::string_view head) {
  return head.size() >= sizeof(wf::kMagic) &&
         head.compare(0, sizeof(wf::kMagic), std::string_view(wf::kMagic, sizeof(wf::kMagic))) == 0;
}

bool readWaitsData(std::string_view bytes, const std::string &name, WaitsFile &into,
                   std::string &error) {
  return Reader(bytes, name, into).read(error);
}

bool readWaitsFile(const std::string &path, WaitsFile &into, std::string &error) {
  std::string bytes;
  return readSidecarFile(path, bytes, error,
                         ": no waits were recorded; run the program with `causal run --waits` to "
                         "record them") &&
         readWaitsData(bytes, path, into, error);
}

std::string waitsProfileMismatch(const WaitsFile &waits, const Profile &profile) {
  std::vector<double> starts;
  for (const Run &run : profile.runs)
    if (run.startupTimeNs >= 0)
      starts.push_back(run.startupTimeNs);
  if (starts.empty() || waits.runs.empty())
    return "";
  const double slack = double(CAUSAL_WAITS_RUN_MATCH_SLACK_NS);
  std::vector<size_t> unmatched;
  for (size_t index = 0; index < waits.runs.size(); ++index) {
    double start = double(waits.runs[index].realtimeNs);
    bool matched = false;
    for (double startup : starts)
      matched = matched || (start >= startup - slack && start <= startup + slack);
    if (!matched)
      unmatched.push_back(index);
  }
  if (unmatched.empty())
    return "";
  std::ostringstream message;
  if (unmatched.size() == waits.runs.size())
    message << "none of the " << waits.runs.size() << " runs in " << waits.path
            << " started when a run of the profile did: the sidecar was recorded by another run "
               "(perhaps of another binary); record both again with `causal run --waits`";
  else
    message << unmatched.size() << " of the " << waits.runs.size() << " runs in " << waits.path
            << " (first: pid " << waits.runs[unmatched.front()].pid
            << ") started when no run of the profile did: they come from another run";
  return message.str();
}

const char *waitKindName(uint8_t kind) {
  switch (wf::WaitKind(kind)) {
  case wf::WaitKind::Mutex:
    return "mutex";
  case wf::WaitKind::RwLock:
    return "rwlock";
  case wf::WaitKind::CondVar:
    return "condvar";
  case wf::WaitKind::Barrier:
    return "barrier";
  case wf::WaitKind::Join:
    return "join";
  case wf::WaitKind::Semaphore:
    return "semaphore";
  case wf::WaitKind::Sleep:
    return "sleep";
  case wf::WaitKind::Poll:
    return "poll";
  case wf::WaitKind::Futex:
    return "futex";
  case wf::WaitKind::FileIo:
    return "file-io";
  case wf::WaitKind::PipeIo:
    return "pipe-io";
  case wf::WaitKind::SocketIo:
    return "socket-io";
  case wf::WaitKind::Spin:
    return "spin";
  case wf::WaitKind::Signal:
    return "signal";
  case wf::WaitKind::Other:
    return "other";
  }
  return "?";
}

const char *waitEndName(uint8_t end) {
  switch (wf::WaitEnd(end)) {
  case wf::WaitEnd::Woken:
    return "woken";
  case wf::WaitEnd::TimedOut:
    return "timed-out";
  case wf::WaitEnd::Failed:
    return "failed";
  }
  return "?";
}

} // namespace causal::profile
