//===- RunWatch.cpp - `causal run`: the program as a watched child --------===//
//
// Runs the program as a child and, while it runs, reads what it appends to
// the profile and analyses it with the profile library (profile::analyze,
// the report's default options): a status line on a terminal, a summary
// line at the end, and for --until-stable the stop file the runtime's
// profiler thread looks for (docs/architecture.md, "Bounded profiling").
// The child keeps the terminal, its standard streams and its exit status:
// `causal run` exits as it did (the same signal, if one killed it).
//
//===----------------------------------------------------------------------===//
#include "Commands.h"
#include "LineName.h"
#include "Options.h"
#include "RunProgress.h"

#include "causal/settings.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <string>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace causal {
namespace {

using Clock = std::chrono::steady_clock;

double secondsBetween(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

// ---- Signals ---------------------------------------------------------------

// Signals sent to `causal run` itself (kill PID: si_code <= 0) go on to the
// program; the terminal's ^C and ^\ (si_code SI_KERNEL) reach the program
// directly, as the whole foreground process group gets them.
constexpr int kForwardedSignals[] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2};
volatile sig_atomic_t g_child = 0;
int g_childExited[2] = {-1, -1}; // SIGCHLD's self-pipe

void forwardSignal(int signal, siginfo_t *info, void *) {
  int savedErrno = errno;
  if (info && info->si_code <= 0 && g_child > 0)
    kill(pid_t(g_child), signal);
  errno = savedErrno;
}

void onChildSignal(int) {
  int savedErrno = errno;
  char byte = 0;
  if (write(g_childExited[1], &byte, 1) < 0) {
    // The pipe is full: a wake-up is pending anyway.
  }
  errno = savedErrno;
}

struct SavedSignals {
  struct sigaction forwarded[sizeof(kForwardedSignals) / sizeof(int)];
  struct sigaction pipe, child;
};

void installSignals(SavedSignals &saved) {
  struct sigaction action = {};
  action.sa_sigaction = forwardSignal;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  for (size_t i = 0; i < sizeof(kForwardedSignals) / sizeof(int); ++i)
    sigaction(kForwardedSignals[i], &action, &saved.forwarded[i]);
  // A closed stderr must not end `causal run` before the program.
  struct sigaction ignore = {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, &saved.pipe);
  struct sigaction child = {};
  child.sa_handler = onChildSignal;
  child.sa_flags = SA_RESTART | SA_NOCLDSTOP;
  sigemptyset(&child.sa_mask);
  sigaction(SIGCHLD, &child, &saved.child);
}

void restoreSignals(const SavedSignals &saved) {
  for (size_t i = 0; i < sizeof(kForwardedSignals) / sizeof(int); ++i)
    sigaction(kForwardedSignals[i], &saved.forwarded[i], nullptr);
  sigaction(SIGPIPE, &saved.pipe, nullptr);
  sigaction(SIGCHLD, &saved.child, nullptr);
}

// ---- Reading the run's profile --------------------------------------------

/// What this run appended to the profile: the bytes from \p offset to the
/// last complete line, read and analysed. False when nothing could be read.
bool readRun(const std::string &path, off_t offset, profile::RunProgress &progress) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  std::string text;
  char buffer[1 << 16];
  off_t at = offset;
  for (;;) {
    ssize_t n = pread(fd, buffer, sizeof(buffer), at);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    text.append(buffer, size_t(n));
    at += n;
  }
  close(fd);
  size_t end = text.rfind('\n');
  if (end == std::string::npos)
    return false;
  text.resize(end + 1);
  profile::Profile profile;
  profile::ReadOptions options;
  options.lenient = true; // a line being written is skipped; the next reading has it
  std::string error;
  if (!profile::readProfileText(text, path, profile, options, error))
    return false;
  profile::AnalysisOptions analysisOptions; // the ranking `causal report` shows
  profile::Analysis analysis = profile::analyze(profile, analysisOptions);
  progress = profile::runProgress(profile, analysis, analysisOptions);
  return true;
}

std::string formatNumber(const char *format, double value) {
  char text[64];
  std::snprintf(text, sizeof(text), format, value);
  return text;
}

std::string baseName(const std::string &name) {
  // The file's directory only: a wait's kind or a caller ("operator/(...)")
  // after FILE:LINE stays whole.
  profile::LineName split = profile::splitLineName(name);
  std::string file = split.valid ? split.file : name;
  size_t slash = file.rfind('/');
  return slash == std::string::npos ? name : name.substr(slash + 1);
}

/// "84 experiments, 2 lines ranked, leader F:L (slope +0.40 [+0.18, +0.54])".
std::string describeProgress(const profile::RunProgress &p, bool shortNames) {
  std::string text = std::to_string(p.experiments) +
                     (p.experiments == 1 ? " experiment, " : " experiments, ") +
                     (p.rankedLines == 0   ? std::string("no line ranked yet")
                      : p.rankedLines == 1 ? std::string("1 line ranked")
                                           : std::to_string(p.rankedLines) + " lines ranked");
  if (!p.leader.empty()) {
    text += ", leader " + (shortNames ? baseName(p.leader) : p.leader) + " (slope " +
            formatNumber("%+.2f", p.leaderSlope);
    if (p.leaderInterval.valid)
      text += " [" + formatNumber("%+.2f", p.leaderInterval.low) + ", " +
              formatNumber("%+.2f", p.leaderInterval.high) + "]";
    if (!p.leaderDiscovery)
      text += "?"; // as the report marks a rank that may be noise
    text += ")";
  }
  return text;
}

// ---- The status line -------------------------------------------------------

int terminalColumns() {
  struct winsize size = {};
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0)
    return size.ws_col;
  return 80;
}

void writeAll(const std::string &text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(STDERR_FILENO, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return;
    done += size_t(n);
  }
}

/// Rewrites the status line: back to its start, the text (cut to the
/// terminal's width, so that it never wraps), the rest of the line cleared.
void drawStatus(const std::string &text) {
  size_t columns = size_t(terminalColumns());
  std::string line = text.size() >= columns ? text.substr(0, columns - 1) : text;
  writeAll("\r" + line + "\033[K");
}

void clearStatus() { writeAll("\r\033[K"); }

} // namespace

int watchProgram(const Environment &env, const Args &program, const WatchPlan &plan) {
  struct stat before;
  off_t offset = stat(plan.profilePath.c_str(), &before) == 0 ? before.st_size : 0;
  int execFailed[2]; // the child's errno when exec fails; closed by a successful exec
  if (pipe2(execFailed, O_CLOEXEC) != 0) {
    std::fprintf(stderr, "causal run: error: cannot create a pipe: %s\n", std::strerror(errno));
    return -1;
  }
  if (pipe2(g_childExited, O_CLOEXEC | O_NONBLOCK) != 0) {
    std::fprintf(stderr, "causal run: error: cannot create a pipe: %s\n", std::strerror(errno));
    return -1;
  }
  std::vector<char *> argv;
  for (const std::string &word : program)
    argv.push_back(const_cast<char *>(word.c_str()));
  argv.push_back(nullptr);
  std::fflush(nullptr);
  SavedSignals saved;
  installSignals(saved);
  Clock::time_point start = Clock::now();
  pid_t child = fork();
  if (child == 0) {
    restoreSignals(saved);
    unsetenv(CAUSAL_ENV_DISABLE);
    for (const auto &[name, value] : env)
      setenv(name.c_str(), value.c_str(), 1);
    execvp(argv[0], argv.data());
    int err = errno;
    std::fprintf(stderr, "causal run: error: cannot execute '%s': %s\n", argv[0],
                 std::strerror(err));
    if (write(execFailed[1], &err, sizeof(err)) < 0) {
      // The parent then shows its summary line: nothing worse.
    }
    _exit(err == ENOENT ? 127 : 126);
  }
  close(execFailed[1]);
  if (child < 0) {
    int err = errno;
    close(execFailed[0]);
    close(execFailed[1]);
    restoreSignals(saved);
    std::fprintf(stderr, "causal run: error: cannot start a process: %s\n", std::strerror(err));
    return -1;
  }
  g_child = child;
  int execError = 0;
  ssize_t got;
  while ((got = read(execFailed[0], &execError, sizeof(execError))) < 0 && errno == EINTR) {
  }
  close(execFailed[0]);
  bool executed = got != ssize_t(sizeof(execError)); // the pipe closed by exec: no error came

  profile::RunProgress progress;
  profile::RankingStability stability;
  bool haveProgress = false, stopRequested = false;
  double stoppedAt = 0;
  Clock::time_point nextRead = start + std::chrono::seconds(1);
  Clock::time_point nextDraw = nextRead;
  bool reading = plan.statusLine || plan.untilStable;
  int status = 0;
  for (;;) {
    pid_t done = waitpid(child, &status, WNOHANG);
    if (done == child)
      break;
    if (done < 0 && errno != EINTR) {
      status = 0;
      break;
    }
    Clock::time_point now = Clock::now();
    if (reading && now >= nextRead) {
      profile::RunProgress read;
      if (readRun(plan.profilePath, offset, read)) {
        progress = read;
        haveProgress = true;
        if (plan.untilStable && !stopRequested && stability.update(progress)) {
          int fd = open(plan.stopFile.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
          if (fd >= 0)
            close(fd);
          stopRequested = true;
          stoppedAt = secondsBetween(start, now);
        }
        if (progress.ended)
          reading = false; // the profile is written: it does not change any more
      }
      // The analysis shares the machine with the program: at most a
      // quarter of a CPU for it.
      Clock::time_point after = Clock::now();
      nextRead = after + std::max<Clock::duration>(std::chrono::seconds(1), (after - now) * 4);
      now = after;
    }
    if (plan.statusLine && now >= nextDraw) {
      std::string text =
          "causal run: " + std::to_string(long(secondsBetween(start, now))) + " s, " +
          (haveProgress ? describeProgress(progress, true) : std::string("no profile yet"));
      if (plan.untilStable && !stopRequested && stability.streak())
        text += ", stable " + std::to_string(stability.streak()) + "/" +
                std::to_string(profile::kStableReadings);
      if (haveProgress && progress.ended)
        text += "; profiling ended, the program continues";
      else if (stopRequested)
        text += "; ranking stable, profiling stops";
      drawStatus(text);
      nextDraw = now + std::chrono::seconds(1);
    }
    Clock::time_point wakeAt = Clock::now() + std::chrono::seconds(1);
    if (reading)
      wakeAt = std::min(wakeAt, nextRead);
    if (plan.statusLine)
      wakeAt = std::min(wakeAt, nextDraw);
    long waitMs =
        std::chrono::duration_cast<std::chrono::milliseconds>(wakeAt - Clock::now()).count();
    struct pollfd wake = {g_childExited[0], POLLIN, 0};
    if (poll(&wake, 1, int(std::clamp(waitMs, 1L, 1000L))) > 0) {
      char drain[64];
      while (read(g_childExited[0], drain, sizeof(drain)) > 0) {
      }
    }
  }
  g_child = 0;
  double elapsed = secondsBetween(start, Clock::now());
  restoreSignals(saved);
  close(g_childExited[0]);
  close(g_childExited[1]);
  if (plan.statusLine)
    clearStatus();
  if (plan.summaryLine && executed) {
    std::string text = "causal run: " + formatNumber("%.1f", elapsed) + " s, ";
    profile::RunProgress final;
    if (readRun(plan.profilePath, offset, final) && final.runs > 0) {
      text += describeProgress(final, false);
      if (stopRequested)
        text += "; profiling stopped after " + formatNumber("%.1f", stoppedAt) +
                " s: the ranking was stable (--until-stable)";
      else if (plan.durationSeconds > 0 && final.ended && elapsed > final.profiledSeconds + 0.5)
        text += "; profiling ended after " + formatNumber("%.1f", final.profiledSeconds) +
                " s (--duration)";
      text += "; profile appended to " + plan.profilePath;
    } else {
      text += "nothing appended to " + plan.profilePath;
    }
    writeAll(text + "\n");
  }
  return status;
}

int exitLikeChild(int status) {
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  if (!WIFSIGNALED(status))
    return 1;
  // The same end as the program's: the shell sees the same signal. No core
  // file of `causal run` (the program wrote its own).
  int signal = WTERMSIG(status);
  std::fflush(nullptr);
  struct rlimit noCore = {0, 0};
  setrlimit(RLIMIT_CORE, &noCore);
  struct sigaction byDefault = {};
  byDefault.sa_handler = SIG_DFL;
  sigaction(signal, &byDefault, nullptr);
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, signal);
  sigprocmask(SIG_UNBLOCK, &only, nullptr);
  raise(signal);
  return 128 + signal; // a signal whose default is to be ignored
}

int statusNumber(int status) {
  if (status < 0)
    return 126;
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

} // namespace causal
