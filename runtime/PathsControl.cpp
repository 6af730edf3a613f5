//===- runtime/PathsControl.cpp - Live control of call paths ---------------===//
//
// The server side of causal/paths_control.h (PathsControl.h; the client:
// tools/profile/PathsControl). The block is created with the runtime's own
// system calls (the program's open() may be hooked), never from a signal
// handler; it is served by the profiler thread only, one command at a time.
//
//===----------------------------------------------------------------------===//

#include "PathsControl.h"

#include "Experiment.h"
#include "Paths.h"
#include "Runtime.h"
#include "Settings.h"
#include "Support.h"

#include "causal/paths_control.h"

#include <atomic>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace causal::rt {

namespace pc = causal::paths_control;

namespace {

pc::Block *g_block = nullptr; // mapped shared; never unmapped while it is served
pid_t g_block_pid = 0;        // the process that created it
char g_file[PATH_MAX];
std::atomic<uint32_t> g_opening{0};
uint64_t g_done = 0;       // the last Ack::sequence stored (the profiler thread's)
uint64_t g_generation = 0; // flushes made
bool g_serving = false;    // the profiler thread said kServing

// Field 22 of /proc/self/stat: the process's start, in clock ticks after
// boot (the comm field, 2, may hold spaces and parentheses: after its last ')').
uint64_t processStartTime() {
  char text[1024];
  long fd = rawSyscall(SYS_openat, AT_FDCWD, long("/proc/self/stat"), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  long n = rawSyscall(SYS_read, fd, long(text), sizeof(text) - 1);
  rawSyscall(SYS_close, fd);
  if (n <= 0)
    return 0;
  text[n] = '\0';
  const char *p = strrchr(text, ')');
  if (!p)
    return 0;
  // p: the end of field 2; field 22 is 20 blanks further.
  for (int field = 2; field < 22 && *p; ++p)
    if (*p == ' ')
      ++field;
  return strtoull(p, nullptr, 10);
}

bool isDirectory(const char *path) {
  struct stat st;
  return path && path[0] && rawSyscall(SYS_stat, long(path), long(&st)) == 0 && S_ISDIR(st.st_mode);
}

long openExclusive(const char *path) {
  return rawSyscall(SYS_openat, AT_FDCWD, long(path),
                    O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
}

bool createBlock() {
  // Not $TMPDIR: the runtime reads no variable but its settings, and the
  // client must find the file without the process's environment.
  const char *directory = isDirectory(pc::kDirectory) ? pc::kDirectory : pc::kFallbackDirectory;
  pid_t pid = getpid();
  formatTo(g_file, sizeof(g_file), "%s/%s%u-%d%s", directory, pc::kPrefix, unsigned(getuid()),
           int(pid), pc::kSuffix);
  long fd = openExclusive(g_file);
  if (fd == -EEXIST) {
    // Left by an earlier process of this pid (killed, or an image that exec
    // replaced): this pid is ours now.
    rawSyscall(SYS_unlink, long(g_file));
    fd = openExclusive(g_file);
  }
  if (fd < 0) {
    message("cannot create %s (%s): no live control of the call paths", g_file, strerror(int(-fd)));
    return false;
  }
  void *memory = MAP_FAILED;
  if (rawSyscall(SYS_ftruncate, fd, sizeof(pc::Block)) == 0)
    memory = mmap(nullptr, sizeof(pc::Block), PROT_READ | PROT_WRITE, MAP_SHARED, int(fd), 0);
  rawSyscall(SYS_close, fd);
  if (memory == MAP_FAILED) {
    message("cannot map %s: no live control of the call paths", g_file);
    rawSyscall(SYS_unlink, long(g_file));
    return false;
  }
  auto *block = static_cast<pc::Block *>(memory);
  block->version = pc::kVersion;
  block->size = sizeof(pc::Block);
  block->pid = uint32_t(pid);
  block->uid = uint32_t(getuid());
  block->start_time = processStartTime();
  const char *sidecar = pathsSidecarPath();
  char cwd[PATH_MAX];
  if (sidecar[0] != '/' && rawSyscall(SYS_getcwd, long(cwd), sizeof(cwd)) > 0)
    formatTo(block->sidecar, sizeof(block->sidecar), "%s/%s", cwd, sidecar);
  else
    formatTo(block->sidecar, sizeof(block->sidecar), "%s", sidecar);
  __atomic_store_n(&block->state, uint32_t(pc::kIdle), __ATOMIC_RELAXED);
  // The magic last: a client that finds it finds the rest.
  __atomic_thread_fence(__ATOMIC_RELEASE);
  memcpy(block->magic, pc::kMagic, sizeof(pc::kMagic));
  g_done = 0;
  g_generation = 0;
  g_serving = false;
  g_block_pid = pid;
  __atomic_store_n(&g_block, block, __ATOMIC_RELEASE);
  return true;
}

void copyText(char *to, size_t size, const char *text) {
  formatTo(to, size, "%s", text ? text : "");
}

} // namespace

void pathsControlFunctionsRegistered() {
  if (__atomic_load_n(&g_block, __ATOMIC_ACQUIRE) ||
      g_status.load(std::memory_order_acquire) != kActive || pathsFunctionCount() == 0 ||
      !settingOn(Setting::PATHS_CONTROL))
    return;
  uint32_t expected = 0;
  if (!g_opening.compare_exchange_strong(expected, 1))
    return; // another thread creates it
  bool created = !g_block && createBlock();
  g_opening.store(0);
  if (created)
    startExperiments(); // the profiler thread serves it
}

bool pathsControlOpen() { return __atomic_load_n(&g_block, __ATOMIC_ACQUIRE) != nullptr; }

void pollPathsControl() {
  pc::Block *block = __atomic_load_n(&g_block, __ATOMIC_ACQUIRE);
  if (!block)
    return;
  if (!g_serving) {
    uint32_t idle = pc::kIdle; // never after kEnded
    __atomic_compare_exchange_n(&block->state, &idle, uint32_t(pc::kServing), false,
                                __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
    g_serving = true;
  }
  uint64_t sequence = __atomic_load_n(&block->command.sequence, __ATOMIC_RELAXED);
  if (sequence == g_done)
    return;
  if (__atomic_load_n(&block->state, __ATOMIC_RELAXED) == uint32_t(pc::kEnded))
    return; // profiling ended: nothing is carried out any more (the client sees why)
  __atomic_thread_fence(__ATOMIC_ACQUIRE);
  uint32_t op = block->command.op;
  static char patterns[pc::kPatternBytes];
  memcpy(patterns, block->command.patterns, sizeof(patterns));
  patterns[sizeof(patterns) - 1] = '\0';

  pc::Ack &ack = block->ack;
  ack.status = pc::kOk;
  ack.matched = ack.changed = 0;
  ack.unmatched[0] = ack.error[0] = '\0';
  const char *error = nullptr;
  bool ok = false;
  if (op == pc::kEnable || op == pc::kDisable) {
    PathsChange change;
    ok = changePaths(patterns, op == pc::kEnable, &change, ack.unmatched, sizeof(ack.unmatched),
                     &error);
    ack.matched = change.matched;
    ack.changed = change.changed;
  } else if (op == pc::kFlush) {
    ok = flushPathsNow(&error);
    if (ok)
      ++g_generation;
  } else {
    error = "unknown command (a client of another version?)";
  }
  if (!ok) {
    ack.status = pc::kFailed;
    copyText(ack.error, sizeof(ack.error), error ? error : "failed");
  }
  pathsEnabledCounts(&ack.functions, &ack.enabled);
  ack.flush_generation = g_generation;
  __atomic_store_n(&ack.sequence, sequence, __ATOMIC_RELEASE);
  g_done = sequence;
}

void pathsControlStopsServing() {
  pc::Block *block = __atomic_load_n(&g_block, __ATOMIC_RELAXED);
  uint32_t serving = pc::kServing; // never over kEnded
  if (block && g_serving)
    __atomic_compare_exchange_n(&block->state, &serving, uint32_t(pc::kIdle), false,
                                __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
  g_serving = false;
}

void pathsControlEnds() {
  pc::Block *block = __atomic_load_n(&g_block, __ATOMIC_ACQUIRE);
  if (!block || g_block_pid != pid_t(rawSyscall(SYS_getpid)))
    return; // none, or the parent's (a child that was not profiled)
  __atomic_store_n(&block->state, uint32_t(pc::kEnded), __ATOMIC_RELEASE);
  rawSyscall(SYS_unlink, long(g_file));
  // Mapped still: a poll under way on the profiler thread reads it safely.
}

void pathsControlForkChild() {
  pc::Block *block = __atomic_load_n(&g_block, __ATOMIC_RELAXED);
  g_opening.store(0);
  if (!block)
    return;
  munmap(block, sizeof(pc::Block)); // the parent's (it stays mapped in the parent)
  __atomic_store_n(&g_block, static_cast<pc::Block *>(nullptr), __ATOMIC_RELEASE);
  g_serving = false;
  if (pathsFunctionCount() != 0 && settingOn(Setting::PATHS_CONTROL))
    createBlock(); // the child's; its profiler thread is restarted after this
}

} // namespace causal::rt
