//===- PathsControl.h - Live control of a running program's call paths -----===//
//
// The client of the control block a running program's runtime serves
// (include/causal/paths_control.h, runtime/PathsControl.cpp): finds and
// checks the block of a process (its file, owner, version, that it is still
// the process that made it), asks it to enable or disable chosen functions or
// to write PROFILE.paths now, and waits for its acknowledgement. The one
// implementation every tool uses (`causal paths enable|disable|top --pid`).
// docs/paths.md, "Live control".
//
// No LLVM dependency.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_PROFILE_PATHSCONTROL_H
#define CAUSAL_PROFILE_PATHSCONTROL_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace causal::profile {

/// What /proc/PID/stat says: the command name (field 2, without its
/// parentheses) and the start time (field 22, clock ticks after boot).
/// False if \p text does not read as one.
bool parseProcStat(std::string_view text, std::string &comm, uint64_t &startTime);

/// The real uid of the "Uid:" line of /proc/PID/status.
bool parseStatusUid(std::string_view text, uint32_t &uid);

/// The control file's name in \p directory for \p uid and \p pid.
std::string controlFileName(const std::string &directory, uint32_t uid, int pid);

/// What a command's acknowledgement says (paths_control::Ack).
struct ControlAnswer {
  uint32_t matched = 0, changed = 0, functions = 0, enabled = 0;
  uint64_t flushGeneration = 0;
  std::vector<std::string> unmatched; // patterns that matched no chosen function
};

class PathsControl {
public:
  PathsControl() = default;
  PathsControl(const PathsControl &) = delete;
  PathsControl &operator=(const PathsControl &) = delete;
  ~PathsControl();

  /// Opens the control block of process \p pid: false with \p error (no such
  /// process, not ours, no control file, a stale one, another version, its
  /// profiling ended).
  bool open(int pid, std::string &error);

  /// Opens the block in \p file of process \p pid started at \p startTime
  /// (what open() does once it found the file; tests call it directly).
  bool openFile(const std::string &file, int pid, uint64_t startTime, std::string &error);

  /// Op: paths_control::kEnable, kDisable or kFlush (\p patterns unused).
  /// Waits at most \p timeoutSeconds for the acknowledgement.
  bool command(uint32_t op, const std::string &patterns, double timeoutSeconds,
               ControlAnswer &answer, std::string &error);

  int pid() const { return pid_; }
  const std::string &file() const { return file_; }
  /// PROFILE.paths of the process (absolute).
  const std::string &sidecar() const { return sidecar_; }
  /// The process's name (open() only).
  const std::string &name() const { return comm_; }

  /// Whether the process that made the block still runs (same start time).
  bool processAlive() const;
  /// Whether its profiling has ended (paths_control::kEnded).
  bool ended() const;

private:
  void close();
  std::string who() const;

  int fd_ = -1;
  void *block_ = nullptr;
  int pid_ = 0;
  uint64_t startTime_ = 0;
  bool checkProc_ = false; // opened by open(): /proc says whether it is alive
  std::string file_, sidecar_, comm_;
};

/// The patterns of \p names for a command: joined with commas. False with
/// \p error if a name is empty or they do not fit in the block.
bool joinControlNames(const std::vector<std::string> &names, std::string &patterns,
                      std::string &error);

} // namespace causal::profile

#endif
