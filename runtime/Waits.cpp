//===- runtime/Waits.cpp - Recording blocking episodes (--waits) ----------===//
//
// The recorder of Waits.h: per-thread buffers, the waker table, and the
// writer of PROFILE.waits (causal/waits_format.h, docs/waits.md).
//
//===----------------------------------------------------------------------===//

#include "Waits.h"

#include "ModuleRegistry.h"
#include "Runtime.h"
#include "Sampler.h"
#include "SidecarFile.h"
#include "SpinLock.h"
#include "Support.h"
#include "WaitTargets.h"
#include "WakerTable.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace causal::rt {

uint32_t g_waits_classes = 0;

namespace {

// ---- State ------------------------------------------------------------------------

SpinLock g_write_lock;
char g_path[PATH_MAX + 8];
AddressRange g_runtime_code; // the runtime's own calls are not the program's waits
WakerTable<CAUSAL_WAITS_WAKER_SLOTS> g_wakers;
// Set while the thread holds g_write_lock: what the writer itself calls
// (readSmallFile's read) is not recorded.
__thread bool tls_writing CAUSAL_RT_TLS = false;

struct WriteLock {
  WriteLock() {
    g_write_lock.lock();
    tls_writing = true;
  }
  ~WriteLock() {
    tls_writing = false;
    g_write_lock.unlock();
  }
};

// Everything below is used under g_write_lock only.
uint64_t g_run = 0;          // RunId
uint64_t g_run_start_ns = 0; // CLOCK_MONOTONIC at the run's start
uint64_t g_run_realtime_ns = 0;
bool g_run_begun = false; // RunBegin written
bool g_finished = false;  // RunEnd written: nothing more
uint64_t g_episodes_written = 0;
uint64_t g_dropped_at_end = 0; // dropped by threads that ended
std::atomic<uint64_t> g_buffer_bytes{0};

// Texts defined in this run: key -> id (open addressing; key 0 = empty).
struct StringSlot {
  uint64_t key;
  uint32_t id;
};
StringSlot *g_strings = nullptr; // CAUSAL_WAITS_STRING_SLOTS, mmap'd at setup
uint32_t g_next_string = 1;

// The file, with the staging buffer chunks are rendered into, and the
// episodes of one buffer converted to the file's layout.
constexpr size_t kStagingBytes = 512 * 1024;
SidecarWriter g_sidecar(g_path, wf::kMagic, wf::kVersion, "waits", kStagingBytes);
wf::Episode *g_converted = nullptr; // CAUSAL_WAITS_BUFFER_EPISODES

void *mapZeroed(size_t bytes) {
  void *memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return memory == MAP_FAILED ? nullptr : memory;
}

// ---- The file ----------------------------------------------------------------------

// Room for a chunk of |payload| bytes in the staging buffer (writing out
// what is staged if needed); null if it can never fit.
char *stageChunk(wf::ChunkType type, size_t payload) {
  return g_sidecar.stageChunk(uint32_t(type), g_run, payload);
}

// ---- Texts ---------------------------------------------------------------------------

uint32_t defineString(uint64_t key, const char *text, size_t length) {
  if (!g_strings || key == 0)
    return 0;
  uint32_t mask = CAUSAL_WAITS_STRING_SLOTS - 1;
  uint32_t index = uint32_t((key * 0x9e3779b97f4a7c15ull) >> 40) & mask;
  for (uint32_t probe = 0; probe <= mask; ++probe, index = (index + 1) & mask) {
    StringSlot &slot = g_strings[index];
    if (slot.key == key)
      return slot.id;
    if (slot.key != 0)
      continue;
    if (g_next_string >= CAUSAL_WAITS_STRING_SLOTS) // keep the table from filling up
      return 0;
    char *at = stageChunk(wf::ChunkType::String, sizeof(wf::StringHead) + length);
    if (!at)
      return 0;
    wf::StringHead head;
    head.id = g_next_string++;
    head.length = uint32_t(length);
    memcpy(at, &head, sizeof(head));
    memcpy(at + sizeof(head), text, length);
    slot.key = key;
    slot.id = head.id;
    return head.id;
  }
  return 0;
}

uint64_t hashText(const char *text, size_t length) {
  uint64_t hash = 0xcbf29ce484222325ull; // FNV-1a
  for (size_t i = 0; i < length; ++i)
    hash = (hash ^ uint8_t(text[i])) * 0x100000001b3ull;
  return hash;
}

// Texts that are not lines (names, paths) are keyed by their hash.
uint32_t textString(const char *text) {
  size_t length = strlen(text);
  if (length == 0)
    return 0;
  return defineString(hashText(text, length) | (1ull << 63), text, length);
}

// "FILE:LINE" of the code at |address|, through the line tables; 0 if no
// instrumented line holds it.
uint32_t lineString(uint64_t address) {
  if (address == 0)
    return 0;
  ResolvedAddress where;
  ModuleTablesRead reading(g_modules);
  bool found = g_modules.resolve(uintptr_t(address), &where);
  uint32_t id = 0;
  if (found) {
    uint64_t key = ((uint64_t(where.module) << 32) | where.line) + 1;
    const causal_linetab_header *table = g_modules.table(where.module);
    if (table && where.line < table->num_lines) {
      const causal_linetab_line &line = causal_linetab_lines(table)[where.line];
      const char *file = causal_linetab_file(table, line.file_index);
      char text[PATH_MAX + 16];
      size_t length = formatTo(text, sizeof(text), "%s:%u", file ? file : "?", line.line);
      id = defineString(key, text, length);
    }
  }
  return id;
}

// A return address names the instruction after the call: the call's line
// is that of the byte before it.
uint32_t callLineString(uint64_t return_address) {
  return return_address ? lineString(return_address - 1) : 0;
}

// ---- Chunks --------------------------------------------------------------------------

// FNV-1a of the executable's line table (0: it has none); the reader tells
// a sidecar of another build from it.
uint64_t executableTableHash() {
  char exe[PATH_MAX];
  long n = rawSyscall(SYS_readlink, long("/proc/self/exe"), long(exe), sizeof(exe) - 1);
  if (n <= 0)
    return 0;
  exe[n] = '\0';
  for (uint32_t slot = 0, used = g_modules.slotsUsed(); slot < used; ++slot) {
    const causal_linetab_header *table = g_modules.table(slot);
    const char *path = g_modules.path(slot);
    if (table && path && !strcmp(path, exe))
      return hashText(reinterpret_cast<const char *>(table), table->total_size);
  }
  return 0;
}

void beginRunIfNeeded() {
  if (g_run_begun)
    return;
  g_run_begun = true;
  wf::RunBegin begin;
  memset(&begin, 0, sizeof(begin));
  begin.start_ns = g_run_start_ns;
  begin.realtime_ns = g_run_realtime_ns;
  begin.pid = uint32_t(getpid());
  begin.what = g_waits_classes;
  begin.binary_hash = executableTableHash();
  char *at = stageChunk(wf::ChunkType::RunBegin, sizeof(begin));
  // The executable's path follows as the run's first String (id 1).
  char exe[PATH_MAX];
  long n = rawSyscall(SYS_readlink, long("/proc/self/exe"), long(exe), sizeof(exe) - 1);
  exe[n > 0 ? n : 0] = '\0';
  begin.program_name = textString(exe);
  memcpy(at, &begin, sizeof(begin));
}

// Writes the episodes [buffer->written, count) of |buffer| (under the lock).
void stageEpisodes(WaitBuffer *buffer) {
  uint32_t count = buffer->count.load(std::memory_order_acquire);
  uint32_t first = buffer->written;
  if (count <= first)
    return;
  beginRunIfNeeded();
  for (uint32_t i = first; i < count; ++i) {
    const RawEpisode &raw = buffer->episodes[i];
    wf::Episode &out = g_converted[i - first];
    out.start_ns = raw.start_ns;
    out.end_ns = raw.end_ns;
    out.object = raw.object;
    out.line = callLineString(raw.pc);
    out.waker = raw.waker;
    out.waker_line = callLineString(raw.waker_pc);
    out.kind = raw.kind;
    out.end = raw.end;
    out.flags = uint16_t(raw.flags & ~kRawEpisodeWrote);
  }
  uint32_t n = count - first;
  char *at = stageChunk(wf::ChunkType::Episodes, 8 + size_t(n) * sizeof(wf::Episode));
  if (at) {
    uint32_t head[2] = {buffer->tid, n};
    memcpy(at, head, sizeof(head));
    memcpy(at + sizeof(head), g_converted, size_t(n) * sizeof(wf::Episode));
    g_episodes_written += n;
  }
  buffer->written = count;
}

// The thread's name: its own (prctl) when it is the calling thread, else
// /proc's comm.
void threadName(uint32_t tid, bool self, char *name, size_t size) {
  name[0] = '\0';
  if (self) {
    char comm[17] = {};
    if (prctl(PR_GET_NAME, comm, 0, 0, 0) == 0)
      formatTo(name, size, "%s", comm);
    return;
  }
  char path[64];
  formatTo(path, sizeof(path), "/proc/self/task/%u/comm", tid);
  if (readSmallFile(path, name, size)) {
    size_t length = strlen(name);
    if (length && name[length - 1] == '\n')
      name[length - 1] = '\0';
  }
}

void stageThread(WaitBuffer *buffer, bool self, uint64_t end_ns, uint64_t cpu_ns) {
  beginRunIfNeeded();
  char name[64];
  threadName(buffer->tid, self, name, sizeof(name));
  wf::Thread thread;
  memset(&thread, 0, sizeof(thread));
  thread.tid = buffer->tid;
  thread.parent_tid = buffer->parent_tid;
  thread.name = textString(name);
  thread.start_routine = buffer->routine_line;
  thread.start_ns = buffer->start_ns;
  thread.end_ns = end_ns;
  thread.cpu_ns = cpu_ns;
  thread.blocked_ns = buffer->blocked_ns;
  thread.dropped = buffer->dropped.load(std::memory_order_relaxed);
  if (char *at = stageChunk(wf::ChunkType::Thread, sizeof(thread)))
    memcpy(at, &thread, sizeof(thread));
  buffer->ended = true;
}

// The caller's full buffer, written out by its own thread.
bool writeOutFull(WaitBuffer *buffer) {
  WriteLock lock;
  bool open = !g_finished;
  if (open) {
    stageEpisodes(buffer);
    g_sidecar.close();
  }
  buffer->count.store(0, std::memory_order_release);
  buffer->written = 0;
  return open;
}

void startRun() {
  g_run_start_ns = fastMonotonicNs();
  g_run_realtime_ns = realtimeNs();
  g_run = (uint64_t(getpid()) << 32) ^ (g_run_start_ns & 0xffffffffull);
  g_run_begun = false;
  g_finished = false;
  g_episodes_written = 0;
  g_dropped_at_end = 0;
  g_next_string = 1;
  if (g_strings)
    memset(g_strings, 0, sizeof(StringSlot) * CAUSAL_WAITS_STRING_SLOTS);
  g_sidecar.restart();
}

} // namespace

// ---- Life cycle ------------------------------------------------------------------------

void setupWaits(const char *profile_path, uint32_t classes) {
  if (classes == 0)
    return;
  // A profile sent to a device (/dev/null) sends its waits there too.
  struct stat st;
  bool device = rawSyscall(SYS_stat, long(profile_path), long(&st)) == 0 && S_ISCHR(st.st_mode);
  formatTo(g_path, sizeof(g_path), "%s%s", profile_path, device ? "" : wf::kSuffix);
  g_strings = static_cast<StringSlot *>(mapZeroed(sizeof(StringSlot) * CAUSAL_WAITS_STRING_SLOTS));
  g_sidecar.setBuffer(static_cast<char *>(mapZeroed(kStagingBytes)));
  g_converted =
      static_cast<wf::Episode *>(mapZeroed(sizeof(wf::Episode) * CAUSAL_WAITS_BUFFER_EPISODES));
  if (!g_strings || !g_sidecar.hasBuffer() || !g_converted) {
    message("out of memory for --waits; no waits are recorded");
    return;
  }
#ifndef CAUSAL_RT_STATIC
  g_runtime_code = executableRangeOf(reinterpret_cast<const void *>(&setupWaits));
#endif
  initFastClock(); // calibrated now (about 1 ms), not in the first hook
  startRun();
  g_waits_classes = classes;
}

void waitsThreadBegins(ThreadState *state, uint32_t parent_tid, uint64_t start_routine) {
  if (!g_waits_classes || !state)
    return;
  WaitBuffer *buffer = state->waits;
  if (!buffer) {
    buffer = static_cast<WaitBuffer *>(mapZeroed(sizeof(WaitBuffer)));
    if (!buffer)
      return; // this thread's waits are not recorded
    g_buffer_bytes.fetch_add(sizeof(WaitBuffer), std::memory_order_relaxed);
  }
  buffer->count.store(0, std::memory_order_relaxed);
  buffer->written = 0;
  buffer->tid = uint32_t(rawSyscall(SYS_gettid));
  buffer->parent_tid = parent_tid;
  buffer->start_routine = start_routine;
  buffer->routine_line = 0;
  if (start_routine) { // the line of a function's entry address: its first line
    WriteLock lock;
    beginRunIfNeeded();
    buffer->routine_line = lineString(start_routine);
  }
  buffer->start_ns = fastMonotonicNs();
  buffer->blocked_ns = 0;
  buffer->dropped.store(0, std::memory_order_relaxed);
  buffer->busy = 0;
  buffer->ended = false;
  buffer->spin_object = 0;
  buffer->woken_object = buffer->previous_woken = 0;
  __atomic_store_n(&state->waits, buffer, __ATOMIC_RELEASE);
}

void waitsThreadEnds(ThreadState *state) {
  WaitBuffer *buffer = state ? state->waits : nullptr;
  if (!g_waits_classes || !buffer)
    return;
  // Its joiners wake when it is gone: it is their waker, at the line of its
  // start routine (a return address one byte in, as lines are resolved).
  recordWake(kJoinKeyTag | uint64_t(pthread_self()),
             buffer->start_routine ? buffer->start_routine + 1 : 0);
  buffer->busy = 1;
  uint64_t cpu_ns = threadCpuNs();
  WriteLock lock;
  if (!g_finished && !buffer->ended) {
    stageEpisodes(buffer);
    stageThread(buffer, true, fastMonotonicNs(), cpu_ns);
    g_sidecar.close();
    g_dropped_at_end += buffer->dropped.load(std::memory_order_relaxed);
  }
  buffer->ended = true; // the next thread that reuses the state starts it again
  buffer->busy = 0;
}

void finishWaits() {
  if (!g_waits_classes)
    return;
  WriteLock lock;
  if (g_finished)
    return;
  uint64_t now = fastMonotonicNs();
  uint64_t dropped = g_dropped_at_end;
  uint32_t self = uint32_t(rawSyscall(SYS_gettid));
  beginRunIfNeeded();
  for (uint32_t i = 0, used = g_threads.slotsUsed(); i < used; ++i) {
    ThreadState *state = g_threads.slot(i);
    if (!state || !state->in_use.load(std::memory_order_acquire))
      continue;
    WaitBuffer *buffer = __atomic_load_n(&state->waits, __ATOMIC_ACQUIRE);
    if (!buffer || buffer->ended)
      continue;
    bool is_self = buffer->tid == self;
    stageEpisodes(buffer);
    stageThread(buffer, is_self, now, is_self ? threadCpuNs() : threadCpuNs(pid_t(buffer->tid)));
    dropped += buffer->dropped.load(std::memory_order_relaxed);
  }
  wf::RunEnd end;
  end.end_ns = now;
  end.episodes = g_episodes_written;
  end.dropped = dropped;
  end.buffer_bytes = g_buffer_bytes.load(std::memory_order_relaxed);
  if (char *at = stageChunk(wf::ChunkType::RunEnd, sizeof(end)))
    memcpy(at, &end, sizeof(end));
  g_sidecar.close();
  g_finished = true;
}

void waitsBeforeUnload() {
  if (!g_waits_classes)
    return;
  WriteLock lock;
  if (g_finished)
    return;
  for (uint32_t i = 0, used = g_threads.slotsUsed(); i < used; ++i) {
    ThreadState *state = g_threads.slot(i);
    if (!state || !state->in_use.load(std::memory_order_acquire))
      continue;
    WaitBuffer *buffer = __atomic_load_n(&state->waits, __ATOMIC_ACQUIRE);
    if (buffer && !buffer->ended)
      stageEpisodes(buffer);
  }
  g_sidecar.close();
}

void waitsForkChild(ThreadState *self) {
  if (!g_waits_classes)
    return;
  g_write_lock.reset(); // a holder was another thread of the parent
  tls_writing = false;
  g_wakers.clear();
  startRun();
  g_buffer_bytes.store(0, std::memory_order_relaxed);
  for (uint32_t i = 0, used = g_threads.slotsUsed(); i < used; ++i) {
    ThreadState *state = g_threads.slot(i);
    if (state && state != self && state->waits)
      state->waits->ended = true; // the parent's threads: not in the child's run
  }
  if (self && self->waits) {
    uint32_t parent = uint32_t(getppid());
    uint64_t routine = self->waits->start_routine;
    waitsThreadBegins(self, parent, routine);
    g_buffer_bytes.store(sizeof(WaitBuffer), std::memory_order_relaxed);
  }
}

// ---- The hooks' side -----------------------------------------------------------------

WaitBuffer *recordingBuffer(ThreadState *state, uint64_t caller) {
  if (!state || inRuntimeWork(state) || tls_writing)
    return nullptr;
  WaitBuffer *buffer = state->waits;
  if (!buffer || buffer->ended || g_runtime_code.contains(uintptr_t(caller)))
    return nullptr;
  buffer->previous_woken = buffer->woken_object;
  buffer->woken_object = 0;
  return buffer;
}

bool appendEpisode(WaitBuffer *buffer, const RawEpisode &episode) {
  // The waits clock (FastClock.h) may, rarely, read a few nanoseconds back
  // across a re-anchoring, or more when it steps: an episode that ends
  // before it starts is no episode, and is counted as dropped.
  if (__builtin_expect(episode.end_ns < episode.start_ns, 0)) {
    buffer->dropped.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  if (episode.end_ns - episode.start_ns < CAUSAL_WAITS_MIN_EPISODE_NS)
    return false;
  if (buffer->busy) { // a signal handler's hook while this thread records
    buffer->dropped.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  if (g_wait_targets) // a candidate for experiments, and the selected wait's credit
    onWaitEnded(tls_thread, episode.pc, episode.kind, episode.end, episode.waker,
                (episode.flags & kRawEpisodeWrote) != 0, episode.start_ns, episode.end_ns);
  buffer->busy = 1;
  uint32_t count = buffer->count.load(std::memory_order_relaxed);
  if (count == CAUSAL_WAITS_BUFFER_EPISODES) {
    if (!writeOutFull(buffer)) {
      buffer->dropped.fetch_add(1, std::memory_order_relaxed);
      buffer->busy = 0;
      return false;
    }
    count = 0;
  }
  buffer->episodes[count] = episode;
  buffer->blocked_ns += episode.end_ns - episode.start_ns;
  buffer->count.store(count + 1, std::memory_order_release);
  buffer->busy = 0;
  return true;
}

uint32_t waitsTid() {
  ThreadState *state = tls_thread;
  if (state && state->waits)
    return state->waits->tid;
  return uint32_t(rawSyscall(SYS_gettid));
}

void recordWake(uint64_t key, uint64_t caller, bool progress, bool timed) {
  ThreadState *state = tls_thread;
  if (progress && state && state->waits) // a hooked call between two waits
    state->waits->woken_object = 0;
  WakeRecord record;
  record.object = key;
  record.pc = caller;
  record.time_ns = timed ? fastMonotonicNs() : 0;
  record.tid = waitsTid();
  g_wakers.record(record);
}

// A thread is never its own waker: when the last wake on the object is the
// caller's own (it unlocked, then was preempted in its next lock, or another
// thread's wake was not recorded), nothing is known.
bool lookupWake(uint64_t key, WakeRecord *record) {
  return g_wakers.lookupLast(key, waitsTid(), record);
}

bool lookupFirstWaker(uint64_t key, uint64_t since_ns, uint32_t *waker, uint64_t *waker_pc) {
  WakeRecord record;
  if (!g_wakers.lookupFirstSince(key, since_ns, waitsTid(), &record))
    return false;
  *waker = record.tid;
  *waker_pc = record.pc;
  return true;
}

bool lookupWaker(uint64_t key, uint32_t *waker, uint64_t *waker_pc) {
  WakeRecord record;
  if (!lookupWake(key, &record))
    return false;
  *waker = record.tid;
  *waker_pc = record.pc;
  return true;
}

} // namespace causal::rt

// ---- CAUSAL_SPIN_BEGIN / END / WAKE (causal/causal.h) ------------------------------

using namespace causal::rt;

// A busy wait the program marks: from BEGIN to END on the same object, one
// episode of kind Spin (one level: a BEGIN inside a spin restarts it), whose
// waker is the last CAUSAL_SPIN_WAKE on the object.
extern "C" CAUSAL_RT_EXPORT void __causal_spin_begin(const void *object) {
  if (!waitsRecorded(wf::WaitKind::Spin))
    return;
  uint64_t caller = uint64_t(__builtin_return_address(0));
  if (WaitBuffer *buffer = recordingBuffer(tls_thread, caller)) {
    buffer->spin_pc = caller;
    buffer->spin_start_ns = fastMonotonicNs();
    buffer->spin_object = uint64_t(uintptr_t(object));
  }
}

extern "C" CAUSAL_RT_EXPORT void __causal_spin_end(const void *object) {
  if (!waitsRecorded(wf::WaitKind::Spin))
    return;
  uint64_t caller = uint64_t(__builtin_return_address(0));
  WaitBuffer *buffer = recordingBuffer(tls_thread, caller);
  uint64_t key = uint64_t(uintptr_t(object));
  if (!buffer || buffer->spin_object != key || key == 0)
    return;
  buffer->spin_object = 0;
  RawEpisode episode = {};
  episode.start_ns = buffer->spin_start_ns;
  episode.end_ns = fastMonotonicNs();
  episode.object = key;
  episode.pc = buffer->spin_pc;
  episode.kind = uint8_t(wf::WaitKind::Spin);
  episode.end = uint8_t(wf::WaitEnd::Woken);
  episode.waker = wf::kPseudoUnknown;
  lookupWaker(key, &episode.waker, &episode.waker_pc);
  appendEpisode(buffer, episode);
}

extern "C" CAUSAL_RT_EXPORT void __causal_spin_wake(const void *object) {
  if (waitsRecorded(wf::WaitKind::Spin))
    recordWake(uint64_t(uintptr_t(object)), uint64_t(__builtin_return_address(0)));
}
