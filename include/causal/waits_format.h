//===- causal/waits_format.h - The waits sidecar, byte by byte ---*- C++ -*-===//
//
// Part of the contract between the runtime (the writer, `causal run --waits`)
// and the profile library (the reader, `causal waits`, `causal report`): the
// layout of PROFILE.waits, the binary file of blocking episodes written next to
// the profile (profile.coz stays the Coz viewer's text format). Every record
// layout is here and nowhere else; docs/waits.md describes the same in prose.
// C++17, header only, no library: the runtime includes it.
//
// The file: a FileHeader, then chunks, each a ChunkHeader and `size` bytes of
// payload. Several runs and processes append to one file: each process writes
// whole chunks with single write(2) calls on an O_APPEND descriptor, so chunks
// never interleave, and every chunk names the run (RunId) it belongs to. A
// reader skips chunks of a type it does not know (their size says how far),
// and stops with a clear error at a truncated chunk.
//
// All integers are little-endian, fields naturally aligned, no padding other
// than the explicit `reserved` fields (static_asserts below keep it so).
//
// Identifiers inside one run:
//   * threads: the kernel thread id (tid); pseudo-threads (waits no program
//     thread ended) have fixed ids from PseudoThread below, all >= 0xFFFFFF00;
//   * text (source lines "FILE:LINE", thread names, object descriptions): a
//     String chunk gives an id its text; id 0 is "no text" and is never
//     defined; ids are defined before the records that use them.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_WAITS_FORMAT_H
#define CAUSAL_WAITS_FORMAT_H

#include "causal/sidecar_format.h"

#include <stdint.h>

namespace causal::waits_format {

/// "CAUSALW" and a NUL.
inline constexpr char kMagic[8] = {'C', 'A', 'U', 'S', 'A', 'L', 'W', '\0'};
/// Bumped with every change to a layout below; a reader refuses newer majors.
inline constexpr uint32_t kVersion = 2; // 2: Episode::flags
/// The sidecar's name: the profile's name with this appended.
inline constexpr const char *kSuffix = ".waits";

using FileHeader = sidecar_format::FileHeader; // causal/sidecar_format.h

enum class ChunkType : uint32_t {
  RunBegin = 1, // one per process run, before its other chunks
  String = 2,   // a text id and its bytes
  Thread = 3,   // one per program thread: identity, name, times
  Episodes = 4, // a batch of Episode records of one thread
  RunEnd = 5,   // totals; absent if the process died before writing it
};

using ChunkHeader = sidecar_format::ChunkHeader;

/// RunId: (pid << 32) ^ low 32 bits of the start time in ns, unique enough
/// among the runs appended to one file.

struct RunBegin {
  uint64_t start_ns;    // CLOCK_MONOTONIC at start-up
  uint64_t realtime_ns; // CLOCK_REALTIME at the same moment
  uint32_t pid;
  uint32_t what;         // WaitClass bits recorded (--waits=sync|io|all)
  uint64_t binary_hash;  // of the executable's embedded line tables (0: none)
  uint32_t program_name; // String id: the executable's path
  uint32_t reserved;
};

/// String payload: uint32_t id, uint32_t length, then `length` bytes (no NUL).
using StringHead = sidecar_format::StringHead;

struct Thread {
  uint32_t tid;
  uint32_t parent_tid;    // the thread that created it (0: main or unknown)
  uint32_t name;          // String id: pthread_setname_np / comm at its end
  uint32_t start_routine; // String id: the line of its start routine (0: main)
  uint64_t start_ns;      // CLOCK_MONOTONIC
  uint64_t end_ns;        // exit, or the run's end if it was still running
  uint64_t cpu_ns;        // its CPU time (CLOCK_THREAD_CPUTIME_ID) at end_ns
  uint64_t blocked_ns;    // sum of its recorded episodes' lengths
  uint64_t dropped;       // episodes lost to a full buffer
};

/// What a thread blocked in.
enum class WaitKind : uint8_t {
  Mutex = 1,     // pthread_mutex_*lock, std::mutex
  RwLock = 2,    // pthread_rwlock_*
  CondVar = 3,   // pthread_cond_*wait, std::condition_variable
  Barrier = 4,   // pthread_barrier_wait
  Join = 5,      // pthread_join and friends
  Semaphore = 6, // sem_*wait
  Sleep = 7,     // nanosleep, usleep, sleep, clock_nanosleep
  Poll = 8,      // poll, ppoll, select, pselect, epoll_*wait
  Futex = 9,     // syscall(SYS_futex), std::atomic::wait
  FileIo = 10,   // read/write/pread/pwrite/readv/writev/fsync/fdatasync/open on a file
  PipeIo = 11,   // the same on a pipe or FIFO
  SocketIo = 12, // accept, connect, recv*, send*, read/write on a socket
  Spin = 13,     // CAUSAL_SPIN_BEGIN/END (a hand-written busy wait)
  Signal = 14,   // sigwait, sigsuspend, pause
  Other = 15,
};

/// Classes for --waits=sync|io|all (RunBegin::what is a mask of them).
enum WaitClass : uint32_t {
  kWaitSync = 1, // Mutex .. Semaphore, Futex, Spin, Signal
  kWaitIo = 2,   // Sleep, Poll, FileIo, PipeIo, SocketIo
};

/// Who ended a wait when no program thread did: the pseudo-threads of the
/// wPerf paper. A disk is 0xFFFFFF10 + (minor device number of the file's
/// device, low 8 bits) so that each device is its own pseudo-thread.
enum PseudoThread : uint32_t {
  kPseudoTimer = 0xFFFFFF01,   // a sleep or a timeout ended it
  kPseudoNetwork = 0xFFFFFF02, // a socket with no program thread at the other end
  kPseudoUnknown = 0xFFFFFF03, // nothing says who
  kPseudoDiskBase = 0xFFFFFF10,
  kPseudoFirst = 0xFFFFFF00,
};
inline constexpr bool isPseudoThread(uint32_t tid) { return tid >= kPseudoFirst; }

/// How a wait ended.
enum class WaitEnd : uint8_t {
  Woken = 1,    // another thread (or pseudo-thread) ended it
  TimedOut = 2, // its own timer
  Failed = 3,   // an error other than a timeout, or interrupted
};

/// One blocking episode: a thread inside a blocking call from start_ns to
/// end_ns (CLOCK_MONOTONIC). Episodes payload: uint32_t tid, uint32_t count,
/// then `count` Episode records, oldest first.
struct Episode {
  uint64_t start_ns;
  uint64_t end_ns;
  uint64_t object;     // the lock, condition, barrier... address; the fd for I/O;
                       // the joined tid for Join; 0 for sleeps
  uint32_t line;       // String id: the program line that blocked (the hook's caller)
  uint32_t waker;      // tid of the thread that ended it, or a PseudoThread
  uint32_t waker_line; // String id: the line of the waking call (0: unknown)
  uint8_t kind;        // WaitKind
  uint8_t end;         // WaitEnd
  uint16_t flags;      // EpisodeFlags bits (0 from recorders before they existed)
};

/// Episode::flags.
enum EpisodeFlags : uint16_t {
  /// A wait on a condition or futex that the thread began right after a wait
  /// on the same object that was woken, with no other hooked call in between
  /// (no unlock, no wake, no I/O): that wake-up made no progress (a false
  /// wake-up; the analysis fuses the two waits).
  kEpisodeRewait = 1,
};

struct RunEnd {
  uint64_t end_ns;       // CLOCK_MONOTONIC
  uint64_t episodes;     // written, all threads
  uint64_t dropped;      // lost to full buffers, all threads
  uint64_t buffer_bytes; // the memory the buffers took at most
};

static_assert(sizeof(RunBegin) == 40, "layout");
static_assert(sizeof(Thread) == 56, "layout");
static_assert(sizeof(Episode) == 40, "layout");
static_assert(sizeof(RunEnd) == 32, "layout");

} // namespace causal::waits_format

#endif
