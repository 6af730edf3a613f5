//===- PathsControl.cpp - Live control of a running program's call paths ---===//
//
// The client side of causal/paths_control.h. See PathsControl.h.
//
//===----------------------------------------------------------------------===//
#include "PathsControl.h"

#include "causal/paths_control.h"

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <signal.h>
#include <sstream>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace causal::profile {

namespace pc = causal::paths_control;

namespace {

bool readText(const std::string &path, std::string &text) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  std::ostringstream all;
  all << in.rdbuf();
  text = all.str();
  return true;
}

bool isDirectory(const std::string &path) {
  struct stat st;
  return !path.empty() && stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

const char *stateName(uint32_t state) {
  switch (state) {
  case pc::kIdle:
    return "no profiler thread serves it";
  case pc::kServing:
    return "its profiler thread serves it";
  case pc::kEnded:
    return "its profiling has ended";
  }
  return "unknown state";
}

using Clock = std::chrono::steady_clock;

} // namespace

bool parseProcStat(std::string_view text, std::string &comm, uint64_t &startTime) {
  size_t open = text.find('('), close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open)
    return false;
  comm = std::string(text.substr(open + 1, close - open - 1));
  // Field 3 follows ") "; field 22 is 19 fields further.
  size_t at = close + 1;
  for (int field = 2; field < 22; ++field) {
    at = text.find(' ', at);
    if (at == std::string_view::npos)
      return false;
    ++at;
  }
  size_t end = text.find_first_not_of("0123456789", at);
  std::string digits(text.substr(at, end == std::string_view::npos ? end : end - at));
  if (digits.empty())
    return false;
  startTime = std::strtoull(digits.c_str(), nullptr, 10);
  return true;
}

bool parseStatusUid(std::string_view text, uint32_t &uid) {
  size_t at = text.find("\nUid:");
  if (at == std::string_view::npos)
    return false;
  at += 5;
  while (at < text.size() && (text[at] == ' ' || text[at] == '\t'))
    ++at;
  size_t end = text.find_first_not_of("0123456789", at);
  if (end == at || at >= text.size())
    return false;
  uid = uint32_t(std::strtoul(std::string(text.substr(at, end - at)).c_str(), nullptr, 10));
  return true;
}

std::string controlFileName(const std::string &directory, uint32_t uid, int pid) {
  return directory + "/" + pc::kPrefix + std::to_string(uid) + "-" + std::to_string(pid) +
         pc::kSuffix;
}

bool joinControlNames(const std::vector<std::string> &names, std::string &patterns,
                      std::string &error) {
  patterns.clear();
  for (const std::string &name : names) {
    if (name.find_first_not_of(", ") == std::string::npos) {
      error = "an empty function name";
      return false;
    }
    patterns += (patterns.empty() ? "" : ",") + name;
  }
  if (patterns.size() >= pc::kPatternBytes) {
    error = "the names are too long together (" + std::to_string(patterns.size()) +
            " bytes; at most " + std::to_string(pc::kPatternBytes - 1) + ")";
    return false;
  }
  return true;
}

PathsControl::~PathsControl() { close(); }

void PathsControl::close() {
  if (block_)
    munmap(block_, sizeof(pc::Block));
  if (fd_ >= 0)
    ::close(fd_);
  block_ = nullptr;
  fd_ = -1;
}

std::string PathsControl::who() const {
  return "process " + std::to_string(pid_) + (comm_.empty() ? "" : " (" + comm_ + ")");
}

bool PathsControl::open(int pid, std::string &error) {
  close();
  pid_ = pid;
  comm_.clear();
  if (pid <= 0) {
    error = "no process " + std::to_string(pid) + ": a pid is a positive number";
    return false;
  }
  std::string proc = "/proc/" + std::to_string(pid), stat, status;
  uint64_t startTime = 0;
  if (!readText(proc + "/stat", stat) || !parseProcStat(stat, comm_, startTime)) {
    error = "no process " + std::to_string(pid) + " (it has exited, or never ran)";
    return false;
  }
  uint32_t uid = 0;
  if (!readText(proc + "/status", status) || !parseStatusUid(status, uid)) {
    error = "cannot read " + proc + "/status: " + std::strerror(errno);
    return false;
  }
  uint32_t me = uint32_t(getuid());
  if (uid != me && me != 0) {
    error = who() + " belongs to uid " + std::to_string(uid) + ", not to you (uid " +
            std::to_string(me) + "): its call paths are not yours to control";
    return false;
  }
  // Where its runtime made the file: kDirectory, else kFallbackDirectory.
  std::string file = controlFileName(
      isDirectory(pc::kDirectory) ? pc::kDirectory : pc::kFallbackDirectory, uid, pid);
  struct stat st;
  if (lstat(file.c_str(), &st) == 0) {
    checkProc_ = true;
    return openFile(file, pid, startTime, error);
  }
  std::string children;
  if (comm_ == "causal" &&
      readText(proc + "/task/" + std::to_string(pid) + "/children", children) &&
      children.find_first_of("0123456789") != std::string::npos) {
    // The pid of `causal run` itself, not of the program it runs.
    children = children.substr(children.find_first_of("0123456789"));
    children = children.substr(0, children.find(' '));
    error = who() + " is `causal run` itself, not the program it runs: its program is process " +
            children + " (--pid " + children + ")";
    return false;
  }
  error = who() + " serves no call paths control (no " + file +
          "): it does not run under the causal runtime (`causal run`), its program has no "
          "function chosen with -fcausal-paths, it runs with --no-paths-control, or its "
          "profiling has ended";
  return false;
}

bool PathsControl::openFile(const std::string &file, int pid, uint64_t startTime,
                            std::string &error) {
  close();
  pid_ = pid;
  startTime_ = startTime;
  file_ = file;
  fd_ = ::open(file.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
  struct stat st;
  if (fd_ < 0 || fstat(fd_, &st) != 0) {
    error = "cannot open " + file + ": " + std::strerror(errno);
    close();
    return false;
  }
  if (!S_ISREG(st.st_mode) || st.st_size < off_t(sizeof(pc::Block)) ||
      (st.st_uid != getuid() && getuid() != 0)) {
    error = file + " is not a control file of causal (a regular file of " +
            std::to_string(sizeof(pc::Block)) + " bytes, yours)";
    close();
    return false;
  }
  void *memory = mmap(nullptr, sizeof(pc::Block), PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  if (memory == MAP_FAILED) {
    error = "cannot map " + file + ": " + std::strerror(errno);
    close();
    return false;
  }
  block_ = memory;
  auto *block = static_cast<pc::Block *>(block_);
  // The runtime writes the magic last: a file just made may not have it yet.
  for (int i = 0; i < 100 && std::memcmp(block->magic, pc::kMagic, sizeof(pc::kMagic)) != 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  __atomic_thread_fence(__ATOMIC_ACQUIRE);
  if (std::memcmp(block->magic, pc::kMagic, sizeof(pc::kMagic)) != 0) {
    error = file + " is not a control file of causal (bad magic)";
    close();
    return false;
  }
  if (block->version != pc::kVersion || block->size != sizeof(pc::Block)) {
    error = file + " was made by another version of causal (control version " +
            std::to_string(block->version) + "; this causal speaks version " +
            std::to_string(pc::kVersion) + ")";
    close();
    return false;
  }
  if (int(block->pid) != pid || block->start_time != startTime) {
    error = file + " is stale: it was left by an earlier process " + std::to_string(block->pid) +
            " (started at tick " + std::to_string(block->start_time) + "; " + who() +
            " started at tick " + std::to_string(startTime) +
            "). A process killed leaves its file behind; remove it";
    close();
    return false;
  }
  block->sidecar[sizeof(block->sidecar) - 1] = '\0';
  sidecar_ = block->sidecar;
  if (ended()) {
    error = "the profiling of " + who() + " has ended; its paths are in " + sidecar_;
    close();
    return false;
  }
  return true;
}

bool PathsControl::processAlive() const {
  if (!checkProc_)
    return true;
  std::string stat, comm;
  uint64_t startTime = 0;
  if (!readText("/proc/" + std::to_string(pid_) + "/stat", stat) ||
      !parseProcStat(stat, comm, startTime) || startTime != startTime_)
    return false;
  size_t close = stat.rfind(')');
  return !(close + 2 < stat.size() && stat[close + 2] == 'Z'); // a zombie has exited
}

bool PathsControl::ended() const {
  auto *block = static_cast<pc::Block *>(block_);
  return !block || __atomic_load_n(&block->state, __ATOMIC_ACQUIRE) == uint32_t(pc::kEnded);
}

bool PathsControl::command(uint32_t op, const std::string &patterns, double timeoutSeconds,
                           ControlAnswer &answer, std::string &error) {
  auto *block = static_cast<pc::Block *>(block_);
  if (!block) {
    error = "no control block open";
    return false;
  }
  if (patterns.size() >= pc::kPatternBytes) {
    error = "the names are too long together";
    return false;
  }
  auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(timeoutSeconds));
  // Why waiting failed, or "" while it may go on.
  auto waitProblem = [&]() -> std::string {
    if (ended())
      return "the profiling of " + who() + " has ended; its paths are in " + sidecar_;
    if (!processAlive())
      return who() + " has exited";
    if (Clock::now() >= deadline) {
      std::ostringstream text;
      text << who() << " did not answer within " << timeoutSeconds << " s ("
           << stateName(__atomic_load_n(&block->state, __ATOMIC_ACQUIRE))
           << "; a stopped process, SIGSTOP or a debugger, does not answer either)";
      return text.str();
    }
    return "";
  };
  // One command at a time: the lock, then no command outstanding.
  while (flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) {
      error = "cannot lock " + file_ + ": " + std::strerror(errno);
      return false;
    }
    if (std::string problem = waitProblem(); !problem.empty()) {
      error = Clock::now() >= deadline ? "another `causal paths` command holds the control of " +
                                             who() + " (" + file_ + ")"
                                       : problem;
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  struct Unlock {
    int fd;
    ~Unlock() { flock(fd, LOCK_UN); }
  } unlock{fd_};
  uint64_t asked = __atomic_load_n(&block->command.sequence, __ATOMIC_RELAXED);
  while (__atomic_load_n(&block->ack.sequence, __ATOMIC_ACQUIRE) != asked) {
    if (std::string problem = waitProblem(); !problem.empty()) {
      error = problem + " (an earlier command is still outstanding)";
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  block->command.op = op;
  std::memset(block->command.patterns, 0, sizeof(block->command.patterns));
  std::memcpy(block->command.patterns, patterns.data(), patterns.size());
  uint64_t sequence = asked + 1;
  __atomic_store_n(&block->command.sequence, sequence, __ATOMIC_RELEASE);
  int naps = 0;
  while (__atomic_load_n(&block->ack.sequence, __ATOMIC_ACQUIRE) != sequence) {
    if (std::string problem = waitProblem(); !problem.empty()) {
      error = problem;
      return false;
    }
    // The profiler thread polls every millisecond.
    std::this_thread::sleep_for(std::chrono::milliseconds(++naps < 50 ? 1 : 10));
  }
  const pc::Ack &ack = block->ack;
  answer = ControlAnswer();
  answer.matched = ack.matched;
  answer.changed = ack.changed;
  answer.functions = ack.functions;
  answer.enabled = ack.enabled;
  answer.flushGeneration = ack.flush_generation;
  std::string unmatched(ack.unmatched, strnlen(ack.unmatched, sizeof(ack.unmatched)));
  for (size_t at = 0; at < unmatched.size();) {
    size_t end = unmatched.find('\n', at);
    if (end == std::string::npos)
      end = unmatched.size();
    if (end > at)
      answer.unmatched.push_back(unmatched.substr(at, end - at));
    at = end + 1;
  }
  if (ack.status != pc::kOk) {
    error = who() + ": " + std::string(ack.error, strnlen(ack.error, sizeof(ack.error)));
    return false;
  }
  return true;
}

} // namespace causal::profile
