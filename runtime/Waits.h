//===- runtime/Waits.h - Recording blocking episodes (--waits) ------------===//
//
// `causal run --waits[=sync|io|all]` (CAUSAL_WAITS): every blocking call the
// hooks see becomes an episode (thread, start and end on CLOCK_MONOTONIC,
// kind, object, the program line that blocked, who ended it) written to
// PROFILE.waits in the layout of causal/waits_format.h (docs/waits.md).
//
//   * Each program thread gets a fixed buffer of CAUSAL_WAITS_BUFFER_EPISODES
//     episodes when it starts (not in a hook). The hooks append to it with
//     no lock and no allocation; lines stay return addresses until the
//     buffer is written out. A full buffer is written out by its thread,
//     inside the hook, never in a signal handler (a hook entered from a
//     signal handler while its thread was recording drops the episode).
//   * Waking calls record themselves in a WakerTable keyed by object; the
//     woken thread reads it when its wait returns. Sleeps and timeouts are
//     ended by the timer pseudo-thread, files by their device's disk
//     pseudo-thread, sockets by the network one; otherwise unknown.
//   * Writing (thread end, full buffer, process end) is serialized by one
//     spin lock, resolves return addresses to "FILE:LINE" through the line
//     tables and appends whole chunks with one write(2) each on an O_APPEND
//     descriptor opened and closed around it, with direct system calls (the
//     runtime's own I/O never enters a hook).
//
// With --waits off nothing is allocated, and each hook pays one predictable
// branch on g_waits_classes.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_RUNTIME_WAITS_H
#define CAUSAL_RUNTIME_WAITS_H

#include "FastClock.h"
#include "ThreadState.h"
#include "WakerTable.h"

#include "causal/tunables.h"
#include "causal/waits_format.h"

#include <atomic>
#include <signal.h>
#include <stdint.h>

namespace causal::rt {

namespace wf = causal::waits_format;

/// The classes of waits recorded (wf::WaitClass bits); 0: --waits is off.
/// Written once at start-up, before any program thread exists.
extern uint32_t g_waits_classes;

/// The class of a kind of wait (--waits=sync or io).
constexpr uint32_t waitClassOf(wf::WaitKind kind) {
  switch (kind) {
  case wf::WaitKind::Sleep:
  case wf::WaitKind::Poll:
  case wf::WaitKind::FileIo:
  case wf::WaitKind::PipeIo:
  case wf::WaitKind::SocketIo:
    return wf::kWaitIo;
  default:
    return wf::kWaitSync;
  }
}

/// Whether waits of |kind| are recorded: the one branch of the hooks.
inline bool waitsRecorded(wf::WaitKind kind) {
  return __builtin_expect((g_waits_classes & waitClassOf(kind)) != 0, 0);
}

/// An episode as the hooks record it; lines are still return addresses.
struct RawEpisode {
  uint64_t start_ns;
  uint64_t end_ns;
  uint64_t object;
  uint64_t pc;       // return address of the blocking call
  uint64_t waker_pc; // return address of the waking call (0: none)
  uint32_t waker;    // tid or wf::PseudoThread
  uint8_t kind;      // wf::WaitKind
  uint8_t end;       // wf::WaitEnd
  uint16_t flags;    // wf::EpisodeFlags
};
static_assert(sizeof(RawEpisode) == 48, "the memory bound in docs/waits.md counts 48 bytes");
/// RawEpisode::flags bit the file never holds: the call wrote (an I/O call
/// that blocked on the reader's side is no wait for the outside world).
inline constexpr uint16_t kRawEpisodeWrote = 0x8000;

/// One thread's episodes (ThreadState::waits), mmap'd when it starts and
/// kept with its ThreadState for the next thread that reuses it.
struct WaitBuffer {
  std::atomic<uint32_t> count; // episodes appended since the last write-out
  uint32_t written;            // of those, already written (process end)
  uint32_t tid;
  uint32_t parent_tid;
  uint64_t start_routine; // address of the start routine (0: main thread)
  uint32_t routine_line;  // its String id, resolved when the thread starts
  uint64_t start_ns;
  uint64_t blocked_ns;           // sum of the recorded episodes' lengths
  std::atomic<uint64_t> dropped; // lost: buffer full and not writable, nested,
                                 // or ending before their start (the clock)
  volatile sig_atomic_t busy;    // appending or writing: a nested hook drops
  bool ended;                    // its Thread chunk is written
  uint64_t spin_object;          // CAUSAL_SPIN_BEGIN's object (0: not spinning)
  uint64_t spin_start_ns;
  uint64_t spin_pc;
  uint64_t woken_object;   // its last hooked call was a woken wait on it, recorded (0: not)
  uint64_t previous_woken; // woken_object when the current hooked call began
  RawEpisode episodes[CAUSAL_WAITS_BUFFER_EPISODES];
};

/// Keys of the waker table for what is not an address.
inline constexpr uint64_t kJoinKeyTag = 1ull << 62;
inline constexpr uint64_t kInodeKeyTag = 1ull << 63;
inline uint64_t inodeKey(uint64_t dev, uint64_t ino) {
  return kInodeKeyTag | ((dev * 0x100000001b3ull) ^ ino);
}
/// Data flowing through a socket or an anonymous descriptor
/// (runtime/hooks/Descriptors.h): both tags, and a hash of the flow.
inline constexpr uint64_t kFlowKeyTag = kInodeKeyTag | kJoinKeyTag;

// ---- Life cycle (Runtime.cpp, Threads.cpp, ProcessEnd.cpp, Fork.cpp) -----------

/// Reads nothing itself: |classes| from CAUSAL_WAITS, the sidecar is
/// |profile_path| + wf::kSuffix. Before the first thread begins.
void setupWaits(const char *profile_path, uint32_t classes);
/// The calling thread starts (its buffer is allocated here).
void waitsThreadBegins(ThreadState *state, uint32_t parent_tid, uint64_t start_routine);
/// The calling thread ends: its joiners' waker is recorded, its episodes
/// and its Thread chunk written.
void waitsThreadEnds(ThreadState *state);
/// Process end (exit, _exit, exec): every thread's episodes, Thread chunks
/// for the threads still running, RunEnd. Once.
void finishWaits();
/// Fork child: a run of its own, |self| its one thread.
void waitsForkChild(ThreadState *self);
/// An image is about to be unloaded (dlclose, or the executable's
/// destructors at exit): the episodes buffered so far are written while
/// its line table can still resolve their lines.
void waitsBeforeUnload();

// ---- The hooks' side (runtime/hooks/HookCore.h) ---------------------------------

/// The calling thread's buffer if it records now: a program thread, not in
/// the runtime's signal handler, |caller| not in the runtime's own code.
WaitBuffer *recordingBuffer(ThreadState *state, uint64_t caller);
/// Appends |episode| (if it lasted at least CAUSAL_WAITS_MIN_EPISODE_NS);
/// false if it did not.
bool appendEpisode(WaitBuffer *buffer, const RawEpisode &episode);
/// A waking call on |key| by the calling thread from |caller|. |progress|:
/// false for the unlock inside a condition wait, which does not end a run of
/// false wake-ups. |timed|: the wake's time is read (a clock read, ~30 ns on
/// these VMs) only where a lookup uses it: waits that may wake falsely
/// (lookupFirstWaker) and data flows (lookupWake); a lock, a semaphore, a
/// barrier or a join takes the last wake, whenever it was.
void recordWake(uint64_t key, uint64_t caller, bool progress = true, bool timed = true);
/// Who last woke |key| (a lock, a semaphore, a barrier: whoever released it
/// last): fills |waker| and |waker_pc|; false if unknown.
bool lookupWaker(uint64_t key, uint32_t *waker, uint64_t *waker_pc);
/// The same, with the time of the waking call.
bool lookupWake(uint64_t key, WakeRecord *record);
/// Who first woke |key| at or after |since_ns| (a condition or futex wait
/// begun then: the signal that ended it, not a later one); false if unknown.
bool lookupFirstWaker(uint64_t key, uint64_t since_ns, uint32_t *waker, uint64_t *waker_pc);

// False wake-ups (wf::kEpisodeRewait): a condition or futex wait that was
// woken and recorded sets WaitBuffer::woken_object; every hooked call of the
// thread clears it (recordingBuffer, recordWake), so a wait whose
// previous_woken is its own object made no progress since that wake-up.

/// wf::kEpisodeRewait if the current call of |buffer|'s thread follows a
/// woken wait on |key| with no hooked call in between, else 0.
inline uint16_t rewaitFlag(const WaitBuffer *buffer, uint64_t key) {
  return key != 0 && buffer->previous_woken == key ? uint16_t(wf::kEpisodeRewait) : 0;
}
/// A condition or futex wait on |key| was woken and recorded.
inline void noteWokenWait(WaitBuffer *buffer, uint64_t key) { buffer->woken_object = key; }
/// The calling thread's tid (cached in its buffer when it has one).
uint32_t waitsTid();

} // namespace causal::rt

#endif // CAUSAL_RUNTIME_WAITS_H
