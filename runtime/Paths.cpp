//===- runtime/Paths.cpp - Call paths of chosen functions (--paths) -------===//
//
// The collector of Paths.h: registration of the chosen functions, the entry
// and exit calls the pass places in them, and the writer of PROFILE.paths
// (causal/paths_format.h, docs/paths.md "Collecting paths").
//
//===----------------------------------------------------------------------===//

#include "Paths.h"
#include "PathsControl.h"

#include "Attribution.h"
#include "ExperimentPolicy.h"
#include "FastClock.h"
#include "ModuleRegistry.h"
#include "Runtime.h"
#include "Sampler.h"
#include "Settings.h"
#include "SidecarFile.h"
#include "SpinLock.h"
#include "Support.h"

#include "causal/abi.h"
#include "causal/paths_format.h"
#include "causal/tunables.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

// abi.h, CAUSAL_PATH_COUNTDOWNS_SYMBOL: the calling thread's countdowns
// (its PathThread's; null until its first entry reached the runtime).
extern "C" CAUSAL_RT_EXPORT __thread int32_t *__causal_path_countdowns CAUSAL_RT_TLS = nullptr;

namespace causal::rt {

namespace pf = causal::paths_format;

namespace {

constexpr uint32_t kMaxDepth = CAUSAL_PATHS_MAX_DEPTH;
constexpr uint32_t kActiveDepth = CAUSAL_PATHS_ACTIVE_DEPTH;
static_assert(kActiveDepth >= 1 && kActiveDepth <= 255, "a token holds the slot in a byte");
// Token of a recursive entry: its time is the outer entry's, its exit does
// nothing. Other tokens: a serial number (23 bits) and the slot + 1 (8 bits).
constexpr uint32_t kRecursiveToken = 0x80000000u;

void *mapZeroed(size_t bytes) {
  void *memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return memory == MAP_FAILED ? nullptr : memory;
}

// Fields the owner thread writes and the writer reads (counters, active
// entries): relaxed atomic stores and loads (plain moves on x86-64), so that
// the writer's reads are no data race.
template <class T> inline void put(T *field, T value) {
  __atomic_store_n(field, value, __ATOMIC_RELAXED);
}
template <class T> inline T read(const T *field) {
  return __atomic_load_n(field, __ATOMIC_RELAXED);
}
inline void add(uint64_t *field, uint64_t value) { put(field, *field + value); }
// A clock's or running total's growth since |start| (0 if it went back).
inline uint64_t since(uint64_t total, uint64_t start) { return total > start ? total - start : 0; }

// ---- Path tables ------------------------------------------------------------------

struct Record {
  uint64_t hash;
  const char *inlined_at;
  uint32_t fn;     // function id
  uint16_t depth;  // return addresses (frames[0]: the entry call's, in F)
  uint16_t flags;  // pf::PathFlags
  uint32_t frames; // index of the first in the table's pool
  uint32_t threads;
  uint32_t context;       // its calling context for experiments (Paths.h; thread tables)
  uint32_t context_known; // context computed (the mode was on when it was interned)
  uint32_t exact_entries; // entries timed exactly (thread tables; up to
                          // CAUSAL_PATHS_EXACT_TIMED_CALLS)
  uint32_t outer;         // thread tables, for sampled walks (outerPath): 0 not known, 1 F is
                          // not among its callers, n + 2: it is, the outermost F's path is record n
  uint64_t calls, recursive_calls, blocked_ns, samples;
  // Times (docs/paths.md, "Sampled times"). A thread table's: CPU time and
  // running time (wall time less blocked_ns and the pauses that paid
  // experiments' delays) of the calls timed exactly, and of those timed
  // after them (one in g_time_one_in, at random), the calls after them that
  // were not timed. A merged table's: the estimate for all its calls
  // (estimatedTimes), in cpu_ns and running_ns.
  uint64_t cpu_ns, running_ns;
  uint64_t sampled_cpu_ns, sampled_running_ns, sampled_calls, untimed_calls;
};
static_assert(sizeof(Record) == 128, "docs/paths.md, \"Memory and limits\"");

// A record's CPU and running time for all its calls: those timed exactly,
// plus, for the calls after them, their timed calls' mean times their
// number (the exact calls' mean when none of them was timed). The timed
// calls after the exact ones are a random sample of them, so the estimate
// is unbiased, and its error comes only from how much the calls' times
// differ (not from how many were drawn, as multiplying each by K would).
struct Times {
  uint64_t cpu_ns, running_ns;
};
Times estimatedTimes(const Record &r) {
  Times exact = {read(&r.cpu_ns), read(&r.running_ns)};
  Times sampled = {read(&r.sampled_cpu_ns), read(&r.sampled_running_ns)};
  uint64_t sampled_calls = read(&r.sampled_calls), untimed = read(&r.untimed_calls);
  // |times| of |timed| calls standing for |timed| + |untimed|.
  auto extended = [untimed](Times times, uint64_t timed) -> Times {
    if (untimed == 0 || timed == 0)
      return times;
    double scale = double(timed + untimed) / double(timed);
    return {uint64_t(double(times.cpu_ns) * scale + 0.5),
            uint64_t(double(times.running_ns) * scale + 0.5)};
  };
  if (sampled_calls == 0) // none drawn: the exact calls' mean
    return extended(exact, since(read(&r.calls), untimed));
  Times later = extended(sampled, sampled_calls);
  return {exact.cpu_ns + later.cpu_ns, exact.running_ns + later.running_ns};
}

// Open addressing over records appended in order; the owner inserts, a
// writer may read records [0, count) at any time (count is published with
// a release store after the record and its frames).
struct Table {
  uint32_t path_capacity;
  uint32_t frame_capacity;
  uint32_t slot_mask;
  uint32_t count;
  uint32_t frames_used;
  uint32_t *slots; // record index + 1; 0: empty
  Record *records;
  uint64_t *frames;
};

size_t tableBytes(uint32_t paths, uint32_t frames) {
  return size_t(paths) * 2 * sizeof(uint32_t) + size_t(paths) * sizeof(Record) +
         size_t(frames) * sizeof(uint64_t);
}

// Lays a table out in |memory| (tableBytes of it, zeroed).
void placeTable(Table *t, char *memory, uint32_t paths, uint32_t frames) {
  t->path_capacity = paths;
  t->frame_capacity = frames;
  t->slot_mask = paths * 2 - 1; // paths is a power of two: at most half full
  t->count = 0;
  t->frames_used = 0;
  t->records = reinterpret_cast<Record *>(memory);
  t->frames = reinterpret_cast<uint64_t *>(memory + size_t(paths) * sizeof(Record));
  t->slots = reinterpret_cast<uint32_t *>(memory + size_t(paths) * sizeof(Record) +
                                          size_t(frames) * sizeof(uint64_t));
}

void clearTable(Table *t) {
  if (t->count == 0)
    return;
  memset(t->slots, 0, sizeof(uint32_t) * (size_t(t->slot_mask) + 1));
  t->frames_used = 0;
  __atomic_store_n(&t->count, 0, __ATOMIC_RELEASE);
}

// The key's hash, at every entry: four independent lanes over the return
// addresses (a multiply's latency each, the four in parallel; one chain took
// a third of an entry's time), mixed at the end. Only this process's tables
// use it.
uint64_t keyHash(uint32_t fn, const char *inlined_at, uint32_t flags, const uint64_t *frames,
                 uint32_t depth) {
  constexpr uint64_t kOdd = 0x9e3779b97f4a7c15ull;
  auto step = [](uint64_t lane, uint64_t frame) {
    uint64_t x = (lane ^ frame) * 0xff51afd7ed558ccdull;
    return (x << 29) | (x >> 35);
  };
  uint64_t a = (uint64_t(fn) << 32 | flags) ^ uint64_t(uintptr_t(inlined_at)) * kOdd;
  uint64_t b = depth * kOdd, c = 0xc4ceb9fe1a85ec53ull, d = 0xbf58476d1ce4e5b9ull;
  uint32_t i = 0;
  for (; i + 4 <= depth; i += 4) {
    a = step(a, frames[i]);
    b = step(b, frames[i + 1]);
    c = step(c, frames[i + 2]);
    d = step(d, frames[i + 3]);
  }
  for (; i < depth; ++i)
    a = step(a, frames[i]);
  uint64_t h = a ^ ((b << 17) | (b >> 47)) ^ ((c << 31) | (c >> 33)) ^ ((d << 47) | (d >> 17));
  h ^= h >> 31;
  h *= 0xbf58476d1ce4e5b9ull;
  return h ^ (h >> 29);
}

// The record of the key, inserted if new; UINT32_MAX if the table is full.
uint32_t intern(Table *t, uint64_t hash, uint32_t fn, const char *inlined_at, uint32_t flags,
                const uint64_t *frames, uint32_t depth) {
  uint32_t index = uint32_t(hash >> 17) & t->slot_mask;
  for (uint32_t probe = 0; probe <= t->slot_mask; ++probe, index = (index + 1) & t->slot_mask) {
    uint32_t slot = t->slots[index];
    if (slot != 0) {
      const Record &r = t->records[slot - 1];
      if (r.hash == hash && r.fn == fn && r.inlined_at == inlined_at && r.depth == depth &&
          r.flags == flags && !memcmp(t->frames + r.frames, frames, depth * sizeof(uint64_t)))
        return slot - 1;
      continue;
    }
    if (t->count == t->path_capacity || t->frames_used + depth > t->frame_capacity)
      return UINT32_MAX;
    uint32_t at = t->count;
    Record &r = t->records[at];
    memset(&r, 0, sizeof(r));
    r.hash = hash;
    r.inlined_at = inlined_at;
    r.fn = fn;
    r.depth = uint16_t(depth);
    r.flags = uint16_t(flags);
    r.frames = t->frames_used;
    memcpy(t->frames + t->frames_used, frames, depth * sizeof(uint64_t));
    t->frames_used += depth;
    t->slots[index] = at + 1;
    __atomic_store_n(&t->count, at + 1, __ATOMIC_RELEASE);
    return at;
  }
  return UINT32_MAX;
}

// Adds |from|'s records with anything in them to |into|. |one_thread|: from a
// thread's table (each of its paths counts one thread), else a merged table.
// Returns the records that did not fit.
uint64_t mergeTable(Table *into, const Table *from, bool one_thread) {
  uint64_t lost = 0;
  uint32_t count = __atomic_load_n(&from->count, __ATOMIC_ACQUIRE);
  for (uint32_t i = 0; i < count; ++i) {
    const Record &r = from->records[i];
    uint64_t calls = read(&r.calls), recursive = read(&r.recursive_calls);
    if (calls == 0 && recursive == 0)
      continue;
    uint32_t at =
        intern(into, r.hash, r.fn, r.inlined_at, r.flags, from->frames + r.frames, r.depth);
    if (at == UINT32_MAX) {
      ++lost;
      continue;
    }
    Record &m = into->records[at];
    m.threads += one_thread ? 1 : r.threads;
    m.calls += calls;
    m.recursive_calls += recursive;
    Times times = estimatedTimes(r);
    m.cpu_ns += times.cpu_ns;
    m.running_ns += times.running_ns;
    m.blocked_ns += read(&r.blocked_ns);
    m.samples += read(&r.samples);
  }
  return lost;
}

// ---- State ---------------------------------------------------------------------

// How an entry is timed (timingOf).
enum EntryTiming : uint32_t {
  kUntimed = 0,      // the clocks were not read
  kTimedExactly = 1, // one of its record's first CAUSAL_PATHS_EXACT_TIMED_CALLS
  kTimedSampled = 2, // after them, drawn at random
};

struct Entry {
  uint32_t fn;
  uint32_t token;
  uint32_t record; // in the thread's table
  uint32_t timing; // EntryTiming
  uint32_t weight; // the calls it stands for (sampled walks: walkWeight)
  uint32_t reserved;
  uintptr_t fp;        // the frame pointer of the code that entered (F, or where F was inlined)
  uintptr_t ret_above; // the return address in that frame then (0: not read)
  uint64_t wall_start, cpu_start, blocked_start, samples_start;
  uint64_t paused_start, paused_cpu_start; // ThreadState::path_paused_ns and _cpu_ns then
                                           // (wall_start, cpu_start and these: timed entries)
  uint64_t block_at_start; // ThreadState::path_block_since then (not 0: entered in a blocking call)
};

// What a walk learns of a return address, remembered by the thread: a
// stack's base (the walk ends there), in instrumented code (the walk goes
// on through frame pointers), or elsewhere (libunwind's turn).
enum ReturnKind : uint32_t { kReturnUnknown = 0, kReturnBase, kReturnInstrumented, kReturnForeign };
struct KnownReturn {
  uintptr_t ret;
  uint32_t generation; // kindGeneration() when learned
  uint32_t kind;
};
constexpr uint32_t kKnownReturns = CAUSAL_PATHS_RETURN_KINDS;
static_assert(kKnownReturns >= 2 && (kKnownReturns & (kKnownReturns - 1)) == 0, "a power of two");
constexpr int kKnownReturnBits = __builtin_ctz(kKnownReturns);

// How a walk ended, for a replay (SiteMemo): its last frame a stack's base,
// or the next frame's return address 0 (or the runtime's thread start);
// kWalkEndOther (the unwinder's turn, a truncation): no replay.
enum WalkEnd : uint32_t { kWalkEndOther = 0, kWalkEndBase, kWalkEndZero };

// The path last entered from a call site, which the next entry from there
// replays (replayWalk): the stack under a hot function's call site is most
// often the same as the last time, and checking each frame against the
// record's frames spares the return addresses' kinds, the key's hash and
// the table's probe.
struct SiteMemo {
  uintptr_t ret0;      // the entry call's return address (0: empty)
  uint32_t record;     // in the thread's table (checked: the table may have been cleared)
  uint32_t generation; // kindGeneration() then
  uint32_t end;        // WalkEnd
  uint32_t reserved;
};
constexpr uint32_t kFunctionIds = CAUSAL_PATHS_MAX_FUNCTIONS + 1; // ids 1..max; 0: none
constexpr uint32_t kSiteMemos = CAUSAL_PATHS_SITE_MEMOS;
static_assert(kSiteMemos >= 2 && (kSiteMemos & (kSiteMemos - 1)) == 0, "a power of two");
constexpr int kSiteMemoBits = __builtin_ctz(kSiteMemos);

} // namespace

struct PathThread {
  pid_t tid; // the owner (a reused ThreadState, a fork child: another)
  uint32_t depth;
  uint32_t serial;
  volatile sig_atomic_t busy; // in enter/exit: a signal handler's entry is not recorded
  // Odd while the owner changes its active entries (beginChange, endChange):
  // a writer in another thread copies them between two changes.
  uint32_t changes;
  uint64_t dropped;   // entries not recorded (the writer reads them)
  uint64_t truncated; // walks that stopped early
  uint64_t walks;     // entries that reached the runtime (walkWeight)
  uint64_t random;    // which calls are timed, the walks' gaps (xorshift; never 0)
  Table table;
  Entry active[kActiveDepth];
  KnownReturn known[kKnownReturns]; // direct-mapped by return address
  SiteMemo memo[kSiteMemos];        // direct-mapped by the entry call's return address
  // Sampled walks (docs/paths.md), by function id: the countdown that the
  // compiled code decrements at each entry (abi.h; __causal_path_countdowns
  // points here) and the value it was last armed with, so that armed less
  // countdown is the entries since the last one the runtime saw; the
  // entries of the function walked in the thread (unless every entry is:
  // --paths-walk-one-in 1); and the record of the last outermost entry
  // recorded + 1, which the entries after it are added to at a write
  // (addWalkTails).
  int32_t countdown[kFunctionIds];
  int32_t armed[kFunctionIds];
  uint32_t walked[kFunctionIds];
  uint32_t last_record[kFunctionIds];
  // With --paths-walk-one-in 0 (auto): the mean gap now (0: 1), and the
  // window of walks it was last chosen over (its start, its entries).
  uint32_t mean_gap[kFunctionIds];
  uint32_t window_entries[kFunctionIds];
  uint64_t window_start_ns[kFunctionIds];
};

namespace {

// Functions, registered by image constructors.
struct FunctionInfo {
  const char *symbol; // copies (the image may be unloaded)
  const char *name;
  bool enabled; // enabled in this process at any time
  bool now;     // enabled now (live control may disable it again)
};
SpinLock g_register_lock;
FunctionInfo *g_functions = nullptr;  // CAUSAL_PATHS_MAX_FUNCTIONS
uint32_t *g_function_slots = nullptr; // by symbol: index + 1
constexpr uint32_t kFunctionSlots = CAUSAL_PATHS_MAX_FUNCTIONS * 2;
std::atomic<uint32_t> g_function_count{0};
bool g_functions_full_said = false;
char *g_arena = nullptr; // copies of names
size_t g_arena_left = 0;

// The descriptors registered, per image (live control enables and disables
// them later), under g_register_lock; an image's go before it is unloaded.
struct DescriptorRange {
  causal_path_fn *start, *stop;
};
DescriptorRange g_ranges[CAUSAL_PATHS_DESCRIPTOR_RANGES];
uint32_t g_range_count = 0;
bool g_ranges_full_said = false;

// CAUSAL_PATHS, read at the first registration or at start-up.
struct Selection {
  bool parsed;
  bool all;
  uint32_t count;
  char text[4096];
  const char *patterns[CAUSAL_PATHS_MAX_PATTERNS];
  bool matched[CAUSAL_PATHS_MAX_PATTERNS];
};
Selection g_selection;
std::atomic<bool> g_any_enabled{false};

// Collection and writing.
std::atomic<bool> g_collecting{false}; // enter records (set at start-up, cleared by the last write)
bool g_cpu_clock = false;
uint32_t g_time_one_in = 1; // --paths-time-one-in
uint32_t g_walk_one_in = 1; // --paths-walk-one-in (0: auto; 1 with experiments per calling context)
std::atomic<uint32_t> g_walk_gap_max{1}; // the largest mean gap a thread used (RunBegin)
AddressRange g_runtime_code;
std::atomic<uintptr_t> g_bases[CAUSAL_PATHS_BASE_ADDRESSES];
std::atomic<uint32_t> g_base_count{0};
std::atomic<uint32_t> g_bases_published{0}; // bases stored (after their address)

SpinLock g_paths_lock; // the process's table, the writer (lockPaths)
Table g_process;       // paths of the threads that ended
Table g_merged;        // the writer's
// What merging threads' tables counts besides their paths (mergeThreadTable).
struct MergeTotals {
  uint64_t dropped;   // entries not recorded, and records that did not fit
  uint64_t truncated; // walks that stopped early
  uint64_t walks;     // entries that reached the runtime
};
MergeTotals g_ended = {0, 0, 0};            // of the threads that ended
std::atomic<bool> g_ready{false};           // startCollecting allocated the tables
std::atomic<bool> g_write_unenabled{false}; // a live flush writes with none enabled yet
bool g_finished = false;
char g_path[PATH_MAX + 8];
// A part (the periodic flush, live control) replaces the run's part file,
// PROFILE.paths.part-RUN (docs/paths.md, "Writing"), written as its .tmp
// first; the end appends to g_path and removes it. Not for a device.
bool g_parts_apart = false;
bool g_part_written = false; // this run has a part file
char g_part_path[PATH_MAX + 40], g_part_temp[PATH_MAX + 44];
uint64_t g_run = 0, g_run_start_ns = 0, g_run_realtime_ns = 0;
std::atomic<uint64_t> g_thread_bytes{0};

// Whether the calling thread holds g_paths_lock, or waits for it: a fatal
// signal's write (writePathsOnSignal) waits for another thread that holds
// the lock, never for the one it interrupted.
__thread bool tls_paths_locking CAUSAL_RT_TLS = false;

void lockPaths() {
  tls_paths_locking = true;
  g_paths_lock.lock();
}
void unlockPaths() {
  g_paths_lock.unlock();
  tls_paths_locking = false;
}
// Signal-safe: takes g_paths_lock unless the calling thread holds it (or was
// taking it when the signal came), waiting at most |wait_ns| for another
// holder.
bool lockPathsWithin(uint64_t wait_ns) {
  if (tls_paths_locking)
    return false;
  for (uint64_t waited = 0; !g_paths_lock.tryLock(); waited += CAUSAL_PROFILER_POLL_NS) {
    if (waited >= wait_ns)
      return false;
    rawSleepNs(CAUSAL_PROFILER_POLL_NS);
  }
  tls_paths_locking = true;
  return true;
}

// ---- Choosing ----------------------------------------------------------------------

bool inertByEnvironment() {
  uint32_t status = g_status.load(std::memory_order_acquire);
  return status == kInert || (status == kUninitialized && settingOn(Setting::DISABLE));
}

void parseNames(Selection &s, const char *value, const char *what);

// CAUSAL_PATHS, once.
void parseSelection() {
  Selection &s = g_selection;
  if (s.parsed)
    return;
  s.parsed = true;
  if (inertByEnvironment())
    return;
  const char *value = readSetting(Setting::PATHS).text;
  // Experiments per calling context need the paths of every chosen function
  // unless CAUSAL_PATHS names some.
  if (!value && (readSetting(Setting::FIXED_PATH).text || settingOn(Setting::PATH_EXPERIMENTS)))
    value = "all";
  if (!value)
    return;
  parseNames(s, value, CAUSAL_ENV_PATHS);
}

// Splits |value| (CAUSAL_PATHS, a live command's names) into |s|'s patterns
// at commas outside (), <> and [] (a demangled name's parameter list, a
// template's arguments and a glob's class hold commas); "all": every function.
void parseNames(Selection &s, const char *value, const char *what) {
  formatTo(s.text, sizeof(s.text), "%s", value);
  char *p = s.text;
  while (*p) {
    while (*p == ' ' || *p == ',')
      ++p;
    if (!*p)
      break;
    char *begin = p;
    int nesting = 0;
    for (; *p && !(*p == ',' && nesting == 0); ++p) {
      if (*p == '(' || *p == '<' || *p == '[')
        ++nesting;
      else if ((*p == ')' || *p == '>' || *p == ']') && nesting > 0)
        --nesting;
    }
    char *end = p;
    if (*p)
      *p++ = '\0';
    while (end > begin && end[-1] == ' ')
      *--end = '\0';
    if (!strcmp(begin, "all")) {
      s.all = true;
    } else if (s.count < CAUSAL_PATHS_MAX_PATTERNS) {
      s.patterns[s.count++] = begin;
    } else {
      message("%s: more than %u names; '%s' and the ones after it are ignored", what,
              CAUSAL_PATHS_MAX_PATTERNS, begin);
      break;
    }
  }
}

// |name| without its parameter list (and what follows it: " const").
void withoutParameters(const char *name, char *out, size_t size) {
  formatTo(out, size, "%s", name);
  char *close = strrchr(out, ')');
  if (!close)
    return;
  int nesting = 0;
  for (char *c = close; c >= out; --c) {
    if (*c == ')')
      ++nesting;
    else if (*c == '(' && --nesting == 0) {
      if (c > out)
        *c = '\0';
      return;
    }
  }
}

bool chosenBy(Selection &s, const char *symbol, const char *name) {
  if (s.all)
    return true;
  char bare[1024];
  withoutParameters(name, bare, sizeof(bare));
  bool any = false;
  for (uint32_t i = 0; i < s.count; ++i) {
    const char *p = s.patterns[i];
    if (!fnmatch(p, symbol, 0) || !fnmatch(p, name, 0) || !fnmatch(p, bare, 0)) {
      s.matched[i] = true;
      any = true;
    }
  }
  return any;
}

bool chosen(const char *symbol, const char *name) { return chosenBy(g_selection, symbol, name); }

const char *copyText(const char *text) {
  size_t size = strlen(text) + 1;
  if (size > g_arena_left) {
    size_t chunk = size > 65536 ? size : 65536;
    char *memory = static_cast<char *>(mapZeroed(chunk));
    if (!memory)
      return nullptr;
    g_arena = memory;
    g_arena_left = chunk;
  }
  char *copy = g_arena;
  memcpy(copy, text, size);
  g_arena += size;
  g_arena_left -= size;
  return copy;
}

uint64_t hashText(const char *text, size_t length) {
  uint64_t hash = 0xcbf29ce484222325ull; // FNV-1a
  for (size_t i = 0; i < length; ++i)
    hash = (hash ^ uint8_t(text[i])) * 0x100000001b3ull;
  return hash;
}

// The function's id for |symbol| (a new one if new); 0 if no room.
uint32_t functionId(const char *symbol, const char *name) {
  if (!g_functions) {
    g_functions =
        static_cast<FunctionInfo *>(mapZeroed(sizeof(FunctionInfo) * CAUSAL_PATHS_MAX_FUNCTIONS));
    g_function_slots = static_cast<uint32_t *>(mapZeroed(sizeof(uint32_t) * kFunctionSlots));
    if (!g_functions || !g_function_slots) {
      g_functions = nullptr;
      return 0;
    }
  }
  uint32_t mask = kFunctionSlots - 1;
  uint32_t index = uint32_t(hashText(symbol, strlen(symbol)) >> 20) & mask;
  for (uint32_t probe = 0; probe <= mask; ++probe, index = (index + 1) & mask) {
    uint32_t slot = g_function_slots[index];
    if (slot != 0) {
      if (!strcmp(g_functions[slot - 1].symbol, symbol))
        return slot;
      continue;
    }
    uint32_t count = g_function_count.load(std::memory_order_relaxed);
    if (count == CAUSAL_PATHS_MAX_FUNCTIONS) {
      if (!g_functions_full_said)
        message("more than %u functions chosen for --paths (CAUSAL_PATHS_MAX_FUNCTIONS); '%s' "
                "and later ones are not collected",
                CAUSAL_PATHS_MAX_FUNCTIONS, name);
      g_functions_full_said = true;
      return 0;
    }
    FunctionInfo &f = g_functions[count];
    f.symbol = copyText(symbol);
    f.name = copyText(name);
    if (!f.symbol || !f.name)
      return 0;
    f.enabled = f.now = chosen(symbol, name);
    g_function_slots[index] = count + 1;
    g_function_count.store(count + 1, std::memory_order_release);
    return count + 1;
  }
  return 0;
}

// Keeps [start, stop) for live control (under g_register_lock).
void rememberDescriptors(causal_path_fn *start, causal_path_fn *stop) {
  for (uint32_t i = 0; i < g_range_count; ++i)
    if (g_ranges[i].start == start)
      return;
  if (g_range_count == CAUSAL_PATHS_DESCRIPTOR_RANGES) {
    if (!g_ranges_full_said)
      message("more than %u images with chosen functions (CAUSAL_PATHS_DESCRIPTOR_RANGES); "
              "live control does not reach the later ones",
              CAUSAL_PATHS_DESCRIPTOR_RANGES);
    g_ranges_full_said = true;
    return;
  }
  g_ranges[g_range_count++] = {start, stop};
}

// The descriptors of an image about to be unloaded are no longer reached.
void forgetDescriptorsIn(AddressRange image) {
  if (image.end <= image.begin)
    return;
  g_register_lock.lock();
  for (uint32_t i = 0; i < g_range_count;) {
    uintptr_t start = uintptr_t(g_ranges[i].start);
    if (start >= image.begin && start < image.end)
      g_ranges[i] = g_ranges[--g_range_count];
    else
      ++i;
  }
  g_register_lock.unlock();
}

// ---- The walk ----------------------------------------------------------------------

// A word of the thread's own stack, checked to lie within it (read
// without a sanitizer's checks: Support.h).
inline uintptr_t stackWord(uintptr_t address) { return uintptr_t(readUnchecked64(address)); }

// Whether |fp| is a frame pointer a walk may follow: 8-byte aligned, not
// below |low| (the stack pointer, then the last frame's record: frames
// rise), and its 16-byte record (saved frame pointer, return address)
// inside |stack|.
inline bool followableFrame(uintptr_t fp, uintptr_t low, AddressRange stack) {
  return (fp & 7) == 0 && fp >= low && fp >= stack.begin && stack.end >= 16 && fp <= stack.end - 16;
}

// The slot of |address| in a direct-mapped table of 2^|bits| (Fibonacci
// hashing).
inline uint64_t directSlot(uintptr_t address, int bits) {
  return (uint64_t(address) * 0x9e3779b97f4a7c15ull) >> (64 - bits);
}

bool inInstrumentedCode(uintptr_t address) {
  for (uint32_t slot = 0, used = g_modules.slotsUsed(); slot < used; ++slot)
    if (g_modules.codeRange(slot).contains(address) && g_modules.isActive(slot))
      return true;
  return false;
}

bool isKnownBase(uintptr_t address) {
  uint32_t count = g_base_count.load(std::memory_order_acquire);
  if (count > CAUSAL_PATHS_BASE_ADDRESSES)
    count = CAUSAL_PATHS_BASE_ADDRESSES;
  for (uint32_t i = 0; i < count; ++i)
    if (g_bases[i].load(std::memory_order_relaxed) == address)
      return true;
  return false;
}

void addBase(uintptr_t address) {
  if (isKnownBase(address))
    return;
  uint32_t at = g_base_count.load(std::memory_order_relaxed);
  if (at >= CAUSAL_PATHS_BASE_ADDRESSES)
    return;
  // A slot may be taken twice by racing threads: a duplicate costs nothing.
  if (g_base_count.compare_exchange_strong(at, at + 1, std::memory_order_acq_rel)) {
    g_bases[at].store(address, std::memory_order_release);
    g_bases_published.fetch_add(1, std::memory_order_release); // threads learn kinds again
  }
}

// What a return address's kind depends on (the active modules, the bases
// found), as a number that changes when either does. (It would repeat only
// after 2^32 / (CAUSAL_PATHS_BASE_ADDRESSES + 1) module changes.)
inline uint32_t kindGeneration() {
  return g_modules.changes() * (CAUSAL_PATHS_BASE_ADDRESSES + 1) +
         g_bases_published.load(std::memory_order_acquire);
}

// The kind of |ret| (not 0 nor in the runtime), as the thread remembers it
// or found now: the bases first (a base may lie in instrumented code, where
// a frame-pointer chain broke).
inline ReturnKind returnKind(PathThread *t, uint32_t generation, uintptr_t ret) {
  KnownReturn &known = t->known[directSlot(ret, kKnownReturnBits)];
  if (known.ret == ret && known.generation == generation)
    return ReturnKind(known.kind);
  ReturnKind kind = isKnownBase(ret)          ? kReturnBase
                    : inInstrumentedCode(ret) ? kReturnInstrumented
                                              : kReturnForeign;
  known.ret = ret;
  known.generation = generation;
  known.kind = kind;
  return kind;
}

// Finishes the walk with libunwind from the frame whose return address
// frames[n - 1] was read at |sp| - 8 (the caller's stack pointer once it
// returns: |sp|). Returns the new depth.
uint32_t finishWithUnwinder(ThreadState *state, uint64_t *frames, uint32_t n, uintptr_t sp,
                            uint32_t *flags) {
  uintptr_t found[kMaxDepth];
  bool more = false;
  state->in_handler.store(1, std::memory_order_relaxed); // its locks and reads are ours
  int got = unwindCallersOf(uintptr_t(frames[n - 1]), sp, found, kMaxDepth - n, &more);
  state->in_handler.store(0, std::memory_order_relaxed);
  if (got < 0) {
    *flags |= pf::kPathTruncated;
    return n;
  }
  uint32_t kept = n;
  bool instrumented_above = false;
  for (int i = 0; i < got; ++i) {
    uintptr_t ret = found[i];
    if (ret == 0 || g_runtime_code.contains(ret)) { // a thread's start
      more = false;
      break;
    }
    instrumented_above |= inInstrumentedCode(ret);
    frames[kept++] = ret;
  }
  if (!instrumented_above && !more) {
    // Only code we did not compile up to the stack's base (what calls main,
    // a thread's start): the path ends at frames[n - 1], now and from now on.
    addBase(uintptr_t(frames[n - 1]));
    return n;
  }
  if (more)
    *flags |= pf::kPathTruncated;
  return kept;
}

// The calling context: frames[0] = |ret0| (the entry call's return address,
// in F or where F was inlined), then the callers, innermost first, from the
// frame-pointer chain whose first frame pointer is |fp| (F's), |sp0| the
// stack pointer F called from. |fps| gets the frame pointers the chain went
// through (valid frames of this stack, innermost first).
// |generation|: kindGeneration(); |end| gets how the walk ended.
uint32_t walkStack(ThreadState *state, PathThread *t, uint32_t generation, uintptr_t ret0,
                   uintptr_t fp, uintptr_t sp0, uint64_t *frames, uintptr_t *fps,
                   uint32_t *fp_count, uint32_t *flags, WalkEnd *end) {
  *end = kWalkEndOther;
  uint32_t n = 0;
  *fp_count = 0;
  frames[n++] = ret0;
  uintptr_t low = sp0;     // frame pointers above the stack pointer only
  uintptr_t last_sp = sp0; // where frames[n - 1] returns to
  const AddressRange stack = state->stack;
  for (;;) {
    if (!followableFrame(fp, low, stack)) {
      // A frame without a frame pointer: the unwinder's turn.
      return finishWithUnwinder(state, frames, n, last_sp, flags);
    }
    uintptr_t next = stackWord(fp), ret = stackWord(fp + 8);
    if (*fp_count < kMaxDepth)
      fps[(*fp_count)++] = fp;
    if (ret == 0 || g_runtime_code.contains(ret)) { // the base, or the runtime's thread start
      *end = kWalkEndZero;
      return n;
    }
    ReturnKind kind = returnKind(t, generation, ret);
    if (kind == kReturnBase) {
      if (n == kMaxDepth) {
        *flags |= pf::kPathTruncated;
        return n;
      }
      frames[n++] = ret;
      *end = kWalkEndBase;
      return n;
    }
    if (n == kMaxDepth) {
      *flags |= pf::kPathTruncated;
      return n;
    }
    frames[n++] = ret;
    last_sp = fp + 16;
    if (kind == kReturnForeign) // a caller we did not compile: it may keep no frame pointer
      return finishWithUnwinder(state, frames, n, last_sp, flags);
    low = fp + 16;
    fp = next;
  }
}

// Replays a walk that gave |frames| (|depth| of them, frames[0] the entry
// call's return address) and ended by |end|, from the same arguments as
// walkStack's: true if the stack holds the same return addresses through
// the same valid frames and the walk would end there again (the kinds of
// the addresses are those of the first walk: the caller checks that the
// generation is the same). |fps| and |fp_count| as walkStack's.
__attribute__((noinline)) bool replayWalk(const ThreadState *state, const uint64_t *frames,
                                          uint32_t depth, WalkEnd end, uintptr_t fp, uintptr_t sp0,
                                          uintptr_t *fps, uint32_t *fp_count) {
  const AddressRange stack = state->stack;
  uintptr_t low = sp0;
  *fp_count = 0;
  for (uint32_t n = 1;; ++n) { // n <= depth <= kMaxDepth: fps[n - 1] is in bounds
    if (!followableFrame(fp, low, stack))
      return false;
    uintptr_t next = stackWord(fp), ret = stackWord(fp + 8);
    fps[n - 1] = fp;
    if (n == depth) { // one frame beyond the walk's: its end
      *fp_count = n;
      return end == kWalkEndZero && (ret == 0 || g_runtime_code.contains(ret));
    }
    if (ret != frames[n])
      return false;
    if (n + 1 == depth && end == kWalkEndBase) {
      *fp_count = n;
      return true;
    }
    low = fp + 16;
    fp = next;
  }
}

// ---- Calling contexts (Paths.h) ----------------------------------------------------------

struct ContextSlot {
  std::atomic<uint64_t> hash;  // 0: free
  std::atomic<uint32_t> ready; // name written
  char name[CAUSAL_PATHS_CONTEXT_NAME_BYTES];
};
static_assert(CAUSAL_PATHS_CONTEXTS >= 2 && CAUSAL_PATHS_CONTEXTS <= 32768 &&
                  !(CAUSAL_PATHS_CONTEXTS & (CAUSAL_PATHS_CONTEXTS - 1)),
              "a power of two; ids fit in 16 bits");
ContextSlot g_contexts[CAUSAL_PATHS_CONTEXTS]; // id = index + 1; slot 0: the fixed context
std::atomic<uint32_t> g_context_count{0};
PathContextMode g_context_mode = PathContextMode::None;
std::atomic<bool> g_fixed_context_matched{false}; // a path had the fixed caller

// The id of caller |name| (|length| bytes), interned: lock-free, the first
// thread to claim a slot writes the name. 0 if the table is half full.
uint32_t contextId(const char *name, size_t length) {
  if (length >= CAUSAL_PATHS_CONTEXT_NAME_BYTES)
    length = CAUSAL_PATHS_CONTEXT_NAME_BYTES - 1;
  uint64_t hash = hashText(name, length) | 1;
  constexpr uint32_t mask = CAUSAL_PATHS_CONTEXTS - 1;
  for (uint32_t probe = 0, i = uint32_t(hash >> 7) & mask; probe <= mask;
       ++probe, i = (i + 1) & mask) {
    if (i == 0)
      continue; // the fixed context's
    ContextSlot &slot = g_contexts[i];
    uint64_t seen = slot.hash.load(std::memory_order_acquire);
    if (seen == 0) {
      if (g_context_count.load(std::memory_order_relaxed) >= CAUSAL_PATHS_CONTEXTS / 2)
        return 0;
      if (slot.hash.compare_exchange_strong(seen, hash, std::memory_order_acq_rel)) {
        g_context_count.fetch_add(1, std::memory_order_relaxed);
        memcpy(slot.name, name, length);
        slot.name[length] = 0;
        slot.ready.store(1, std::memory_order_release);
        return i + 1;
      }
    }
    if (seen == hash) {
      // Claimed by another thread, maybe not written yet: the same name
      // unless two names share the 64-bit hash.
      return i + 1;
    }
  }
  return 0;
}

// Does the fixed glob name |name| (demangled, maybe with its parameters)?
bool namedByFixedGlob(const char *name) {
  const char *glob = g_contexts[0].name;
  if (!name || !*name)
    return false;
  if (!fnmatch(glob, name, 0))
    return true;
  char bare[1024];
  withoutParameters(name, bare, sizeof(bare));
  return !fnmatch(glob, bare, 0);
}

// The function names of an inlined_at string ("FUNCTION\tFILE:LINE\n",
// innermost first): calls |visit(name, length)| until it returns true.
template <class Visit> bool anyInlinedCaller(const char *text, Visit visit) {
  for (const char *line = text; line && *line;) {
    const char *end = strchr(line, '\n');
    size_t length = end ? size_t(end - line) : strlen(line);
    const char *tab = static_cast<const char *>(memchr(line, '\t', length));
    if (visit(line, tab ? size_t(tab - line) : length))
      return true;
    line = end ? end + 1 : nullptr;
  }
  return false;
}

// The line table's function of the call before return address |ret|, or null.
// Call inside a ModuleTablesRead.
const char *callerFunction(uint64_t ret) {
  ResolvedAddress where;
  if (!ret || !g_modules.resolve(uintptr_t(ret) - 1, &where))
    return nullptr;
  const causal_linetab_header *table = g_modules.table(where.module);
  return table ? causal_linetab_function(table, where.line) : nullptr;
}

// For sampled walks, where the outer entries of a recursive function may not
// have been walked: whether F (function |id|, not inlined) is among the
// callers of record |record|'s path (a frame whose line names F), and if it
// is, the record of the outermost F's own entry: the same entry call's
// return address, then the callers of that F. Returns Record::outer.
uint32_t outerPath(PathThread *t, uint32_t record, uint32_t id) {
  const Record &r = t->table.records[record];
  const uint64_t *frames = t->table.frames + r.frames;
  const char *name = g_functions[id - 1].name;
  uint32_t outermost = 0;
  for (uint32_t i = 1; i < r.depth; ++i)
    if (const char *function = callerFunction(frames[i]); function && !strcmp(function, name))
      outermost = i;
  if (outermost == 0)
    return 1;
  uint64_t outer[kMaxDepth];
  uint32_t depth = 0;
  outer[depth++] = frames[0];
  for (uint32_t i = outermost + 1; i < r.depth; ++i)
    outer[depth++] = frames[i];
  uint32_t at = intern(&t->table, keyHash(id, nullptr, r.flags, outer, depth), id, nullptr, r.flags,
                       outer, depth);
  return at == UINT32_MAX ? 1 : at + 2;
}

// The context of a new path (Paths.h): F's inlined_at chain first (the
// callers that inlined it, innermost first), then the walked callers.
uint32_t pathContext(const char *inlined_at, const uint64_t *frames, uint32_t depth) {
  if (g_context_mode == PathContextMode::Fixed) {
    char name[CAUSAL_PATHS_CONTEXT_NAME_BYTES];
    if (anyInlinedCaller(inlined_at, [&](const char *text, size_t length) {
          formatTo(name, sizeof(name), "%.*s", int(length), text);
          return namedByFixedGlob(name);
        })) {
      g_fixed_context_matched.store(true, std::memory_order_relaxed);
      return kFixedPathContext;
    }
    bool found = false;
    {
      ModuleTablesRead reading(g_modules);
      for (uint32_t i = 1; i < depth && !found; ++i)
        found = namedByFixedGlob(callerFunction(frames[i]));
    }
    if (found)
      g_fixed_context_matched.store(true, std::memory_order_relaxed);
    return found ? kFixedPathContext : 0;
  }
  uint32_t id = 0;
  if (anyInlinedCaller(inlined_at, [&](const char *text, size_t length) {
        id = contextId(text, length);
        return true;
      }))
    return id;
  if (depth < 2)
    return 0;
  ModuleTablesRead reading(g_modules);
  const char *caller = callerFunction(frames[1]);
  if (caller)
    id = contextId(caller, strlen(caller));
  return id;
}

// ---- Entries -------------------------------------------------------------------------

// The owner changes its active entries between these two (a seqlock's
// writer: the writer of the file copies them in between, copyOpenEntries).
inline void beginChange(PathThread *t) {
  put(&t->changes, t->changes + 1);
  __atomic_thread_fence(__ATOMIC_RELEASE);
}
inline void endChange(PathThread *t) {
  __atomic_store_n(&t->changes, t->changes + 1, __ATOMIC_RELEASE);
}

// The CPU time of an entry begun at CPU clock |cpu_start| and wall clock
// |wall_start|, ended at |cpu| and |now|: at most its wall time. The two
// clocks come from different sources (the kernel's account, the TSC),
// which may disagree by microseconds; a thread never runs longer than it
// exists.
uint64_t cpuSpan(uint64_t cpu_start, uint64_t wall_start, uint64_t cpu, uint64_t now) {
  uint64_t span = since(cpu, cpu_start), wall = since(now, wall_start);
  return span < wall ? span : wall;
}

// What happened inside an entry that is not its function's own time: the
// time in the blocking hooks (counted apart, as blocked time), and the
// pauses that paid the experiments' delays (the profiler's, left out).
struct NotOwn {
  uint64_t blocked_ns, paused_ns, paused_cpu_ns;
};

// A timed entry's running time (its wall time less the time blocked and
// paused) and CPU time (less the CPU spun in pauses), ended at |cpu| and |now|.
Times timesOf(const Entry &e, const NotOwn &not_own, uint64_t cpu, uint64_t now) {
  uint64_t cpu_ns = g_cpu_clock ? cpuSpan(e.cpu_start, e.wall_start, cpu, now) : 0;
  return {since(cpu_ns, not_own.paused_cpu_ns),
          since(since(now, e.wall_start), not_own.blocked_ns + not_own.paused_ns)};
}

// Adds an ended entry's times to its record in the thread's table (the
// thread's own |state|): its blocked time for every entry (the hooks read
// the clock anyway, so a record's blocked time is exact), its other times
// by how it was timed.
void addTimes(Record &r, const Entry &e, uint64_t blocked_ns, const ThreadState *state,
              uint64_t cpu, uint64_t now) {
  const uint64_t w = e.weight; // a sampled walk's entry stands for w calls
  add(&r.blocked_ns, blocked_ns * w);
  if (e.timing == kUntimed) {
    add(&r.untimed_calls, w);
    return;
  }
  NotOwn not_own = {blocked_ns, since(state->path_paused_ns, e.paused_start),
                    since(state->path_paused_cpu_ns, e.paused_cpu_start)};
  Times times = timesOf(e, not_own, cpu, now);
  if (e.timing == kTimedExactly) {
    add(&r.cpu_ns, times.cpu_ns * w);
    add(&r.running_ns, times.running_ns * w);
  } else {
    add(&r.sampled_calls, w);
    add(&r.sampled_cpu_ns, times.cpu_ns * w);
    add(&r.sampled_running_ns, times.running_ns * w);
  }
}

// Closes the thread's active entries down to |depth| (between beginChange
// and endChange).
void closeDownTo(PathThread *t, ThreadState *state, uint32_t depth) {
  if (t->depth <= depth)
    return;
  // The clocks only if an entry closed was timed (the innermost are mostly
  // not: the outer ones, rarer, are).
  bool timed = false;
  for (uint32_t i = t->depth; i-- > depth && !timed;)
    timed = t->active[i].timing != kUntimed;
  uint64_t cpu = timed && g_cpu_clock ? threadCpuNs() : 0; // inside the wall clock's span
  uint64_t now = timed ? fastMonotonicNs() : 0;
  uint64_t blocked = state->path_blocked_ns;
  uint64_t samples = __atomic_load_n(&state->samples, __ATOMIC_RELAXED);
  for (uint32_t i = t->depth; i-- > depth;) {
    const Entry &e = t->active[i];
    Record &r = t->table.records[e.record];
    add(&r.calls, uint64_t(e.weight));
    add(&r.samples, since(samples, e.samples_start) * e.weight);
    addTimes(r, e, since(blocked, e.blocked_start), state, cpu, now);
  }
  put(&t->depth, depth);
  state->path_depth = depth;
  __atomic_store_n(&state->path_context,
                   depth ? t->table.records[t->active[depth - 1].record].context : 0,
                   __ATOMIC_RELAXED);
}

// How a new entry on record |r| is timed: exactly, each of its first
// CAUSAL_PATHS_EXACT_TIMED_CALLS in the thread (every one with
// --paths-time-one-in 1, and every entry of a sampled walk: few of them
// reach the runtime), then one entry in g_time_one_in, drawn at random (a
// fixed stride would alias with a program that alternates its calls'
// lengths).
inline uint64_t nextRandom(PathThread *t) {
  uint64_t x = t->random; // xorshift64
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  t->random = x;
  return x;
}

inline EntryTiming timingOf(PathThread *t, Record &r, bool sampled_walk) {
  if (g_time_one_in <= 1 || sampled_walk) // a sampled walk's entry is timed: it is rare
    return kTimedExactly;
  if (r.exact_entries < CAUSAL_PATHS_EXACT_TIMED_CALLS) {
    put(&r.exact_entries, r.exact_entries + 1);
    return kTimedExactly;
  }
  uint64_t x = nextRandom(t);
  if ((uint64_t(uint32_t(x >> 32)) * g_time_one_in) >> 32 != 0)
    return kUntimed;
  return kTimedSampled;
}

// The mean gap between walks of a function in a thread with
// --paths-walk-one-in 0 (auto), used after its first
// CAUSAL_PATHS_AUTO_EXACT_WALKS walks, and chosen again every
// CAUSAL_PATHS_EXACT_WALKS walks from the entries of those walks' window:
// the gap that keeps the walks' cost, at CAUSAL_PATHS_WALK_COST_NS each,
// under CAUSAL_PATHS_WALK_BUDGET_PERMILLE of the window's wall time (1:
// every entry walked, as long as the function is entered less often than
// that allows).
inline uint32_t autoGap(PathThread *t, uint32_t id, uint32_t walked, uint32_t weight) {
  uint32_t entries = t->window_entries[id] + weight;
  if (walked == 1) {
    t->window_start_ns[id] = fastMonotonicNs();
    entries = weight;
  } else if (walked % CAUSAL_PATHS_EXACT_WALKS == 0) {
    uint64_t now = fastMonotonicNs();
    uint64_t elapsed = now > t->window_start_ns[id] ? now - t->window_start_ns[id] : 1;
    // entries x cost <= budget x elapsed / gap
    double gap = double(entries) * CAUSAL_PATHS_WALK_COST_NS * 1000.0 /
                 (double(CAUSAL_PATHS_WALK_BUDGET_PERMILLE) * double(elapsed));
    uint32_t mean = gap <= 1                              ? 1
                    : gap >= CAUSAL_MAX_PATHS_WALK_ONE_IN ? CAUSAL_MAX_PATHS_WALK_ONE_IN
                                                          : uint32_t(gap + 0.999);
    put(&t->mean_gap[id], mean);
    t->window_start_ns[id] = now;
    entries = 0;
  }
  t->window_entries[id] = entries;
  return t->mean_gap[id] ? t->mean_gap[id] : 1;
}

// Sampled walks (docs/paths.md). An entry of function |id| that reached the
// runtime stands for the entries of the function in this thread since the
// last one that did, itself included: the countdown's fall since it was
// armed (at least 1: code that calls without counting leaves it as armed).
// The countdown is armed again: the next entry calls again (a gap of 1)
// while the thread has walked fewer than CAUSAL_PATHS_EXACT_WALKS entries
// of the function or with --paths-walk-one-in 1, else after a gap drawn
// uniformly from 1..2K-1, K the mean (--paths-walk-one-in K, or autoGap's
// with 0; random, so that no caller's pattern of calls aliases with it).
// Returns the weight; |sampled|: the function's walks are sampled now (a
// mean gap above 1), or this entry stands for others.
inline uint32_t walkWeight(PathThread *t, uint32_t id, bool *sampled) {
  int64_t since_last = int64_t(read(&t->armed[id])) - read(&t->countdown[id]);
  uint32_t weight = since_last <= 1            ? 1
                    : since_last >= UINT32_MAX ? UINT32_MAX
                                               : uint32_t(since_last);
  uint32_t mean = g_walk_one_in;
  if (mean != 1) {
    uint32_t walked = t->walked[id] < UINT32_MAX ? t->walked[id] + 1 : UINT32_MAX;
    put(&t->walked[id], walked);
    if (mean == 0) { // auto: the rate is measured from the first walk on
      mean = autoGap(t, id, walked, weight);
      if (walked <= CAUSAL_PATHS_AUTO_EXACT_WALKS)
        mean = 1;
    } else if (walked <= CAUSAL_PATHS_EXACT_WALKS) {
      mean = 1;
    }
  }
  uint32_t gap = 1;
  if (mean > 1) {
    gap = 1 + uint32_t((uint64_t(uint32_t(nextRandom(t) >> 32)) * (2 * mean - 1)) >> 32);
    // The largest mean used, for RunBegin (rarely grows: a load most times).
    uint32_t top = g_walk_gap_max.load(std::memory_order_relaxed);
    while (mean > top &&
           !g_walk_gap_max.compare_exchange_weak(top, mean, std::memory_order_relaxed))
      ;
  }
  put(&t->armed[id], int32_t(gap - 1));
  put(&t->countdown[id], int32_t(gap - 1));
  add(&t->walks, 1);
  *sampled = mean > 1 || weight > 1;
  return weight;
}

// Starts the entry at the top now (clocks read last: the walk is not F's
// time; the wall clock first, so that the CPU clock's span lies inside it).
void startEntry(Entry *e, ThreadState *state, uint32_t timing) {
  put(&e->timing, timing);
  put(&e->blocked_start, state->path_blocked_ns);
  put(&e->block_at_start, state->path_block_since);
  put(&e->samples_start, __atomic_load_n(&state->samples, __ATOMIC_RELAXED));
  if (timing == kUntimed)
    return; // its clocks and pauses are never read
  put(&e->paused_start, state->path_paused_ns);
  put(&e->paused_cpu_start, state->path_paused_cpu_ns);
  put(&e->wall_start, fastMonotonicNs());
  put(&e->cpu_start, g_cpu_clock ? threadCpuNs() : 0);
}

// The ids functions have had (1..count) and 0: the per-function arrays'
// entries in use.
inline uint32_t functionIdsUsed() {
  uint32_t count = g_function_count.load(std::memory_order_acquire);
  return count + 1 < kFunctionIds ? count + 1 : kFunctionIds;
}

void resetThread(PathThread *t, pid_t tid) {
  clearTable(&t->table);
  // Ids above the count were never entered (the arrays are zero there).
  size_t ids = functionIdsUsed();
  memset(t->countdown, 0, ids * sizeof(t->countdown[0]));
  memset(t->armed, 0, ids * sizeof(t->armed[0]));
  memset(t->walked, 0, ids * sizeof(t->walked[0]));
  memset(t->last_record, 0, ids * sizeof(t->last_record[0]));
  memset(t->mean_gap, 0, ids * sizeof(t->mean_gap[0]));
  put(&t->depth, 0u);
  put(&t->dropped, uint64_t(0));
  put(&t->truncated, uint64_t(0));
  put(&t->walks, uint64_t(0));
  if (t->changes & 1) // a fork child's copy of another thread's, caught in a change
    put(&t->changes, t->changes + 1);
  put(&t->tid, tid);
}

// The calling thread's paths (allocated at its first entry); null if no memory.
PathThread *threadPaths(ThreadState *state) {
  PathThread *t = state->paths;
  pid_t tid = threadId(state);
  if (!t) {
    size_t bytes =
        sizeof(PathThread) + tableBytes(CAUSAL_PATHS_THREAD_PATHS, CAUSAL_PATHS_THREAD_FRAMES);
    char *memory = static_cast<char *>(mapZeroed(bytes));
    if (!memory)
      return nullptr;
    t = reinterpret_cast<PathThread *>(memory);
    placeTable(&t->table, memory + sizeof(PathThread), CAUSAL_PATHS_THREAD_PATHS,
               CAUSAL_PATHS_THREAD_FRAMES);
    put(&t->tid, tid);
    t->random = (uint64_t(uint32_t(tid)) << 32 | 1) ^ fastMonotonicNs();
    if (t->random == 0)
      t->random = 1;
    g_thread_bytes.fetch_add(bytes, std::memory_order_relaxed);
    __atomic_store_n(&state->paths, t, __ATOMIC_RELEASE);
  } else if (t->tid != tid) { // a state reused without its last owner's end
    resetThread(t, tid);
    state->path_depth = 0;
    __atomic_store_n(&state->path_context, 0, __ATOMIC_RELAXED);
  }
  if (state == tls_thread) // the compiled code counts entries down from now on (abi.h)
    __causal_path_countdowns = t->countdown;
  return t;
}

// The entries of |t|'s thread since the last one of each function that the
// runtime recorded (sampled walks let them pass uncounted), added to that
// entry's record in |into| with its record's mean per call. Returns the
// records that did not fit.
uint64_t addWalkTails(Table *into, const PathThread *t) {
  uint64_t lost = 0;
  uint32_t ids = functionIdsUsed();
  uint32_t count = __atomic_load_n(&t->table.count, __ATOMIC_ACQUIRE);
  for (uint32_t id = 1; id < ids; ++id) {
    uint32_t last = read(&t->last_record[id]);
    int64_t tail = int64_t(read(&t->armed[id])) - read(&t->countdown[id]);
    if (last == 0 || last > count || tail <= 0)
      continue;
    const Record &r = t->table.records[last - 1];
    uint32_t at =
        intern(into, r.hash, r.fn, r.inlined_at, r.flags, t->table.frames + r.frames, r.depth);
    if (at == UINT32_MAX) {
      ++lost;
      continue;
    }
    Record &m = into->records[at];
    uint64_t calls = read(&r.calls), n = uint64_t(tail);
    m.calls += n;
    if (calls == 0)
      continue;
    Times times = estimatedTimes(r);
    double per_call = double(n) / double(calls);
    m.cpu_ns += uint64_t(double(times.cpu_ns) * per_call + 0.5);
    m.running_ns += uint64_t(double(times.running_ns) * per_call + 0.5);
    m.blocked_ns += uint64_t(double(read(&r.blocked_ns)) * per_call + 0.5);
    m.samples += uint64_t(double(read(&r.samples)) * per_call + 0.5);
  }
  return lost;
}

// Merges thread |t|'s paths, with the entries after its last walks, into
// |into|, and adds its counts to |totals|.
void mergeThreadTable(Table *into, const PathThread *t, MergeTotals *totals) {
  totals->dropped += read(&t->dropped) + mergeTable(into, &t->table, true) + addWalkTails(into, t);
  totals->truncated += read(&t->truncated);
  totals->walks += read(&t->walks);
}

static_assert(CAUSAL_PATHS_THREAD_PATHS &&
                  !(CAUSAL_PATHS_THREAD_PATHS & (CAUSAL_PATHS_THREAD_PATHS - 1)),
              "a power of two");
static_assert(CAUSAL_PATHS_PROCESS_PATHS &&
                  !(CAUSAL_PATHS_PROCESS_PATHS & (CAUSAL_PATHS_PROCESS_PATHS - 1)),
              "a power of two");

} // namespace

} // namespace causal::rt

using namespace causal::rt;

// ---- The pass's calls (causal/abi.h) ------------------------------------------------------

extern "C" CAUSAL_RT_EXPORT void __causal_register_path_fns(struct causal_path_fn *start,
                                                            struct causal_path_fn *stop) {
  if (!start || !stop || stop <= start || inertByEnvironment())
    return;
  g_register_lock.lock();
  parseSelection();
  rememberDescriptors(start, stop);
  for (causal_path_fn *d = start; d < stop; ++d) {
    if (!d->symbol)
      continue;
    uint32_t id = __atomic_load_n(&d->id, __ATOMIC_RELAXED);
    uint32_t count = g_function_count.load(std::memory_order_relaxed);
    if (id == 0 || id > count || strcmp(g_functions[id - 1].symbol, d->symbol))
      id = functionId(d->symbol, d->name ? d->name : d->symbol);
    if (id == 0)
      continue;
    __atomic_store_n(&d->id, id, __ATOMIC_RELAXED);
    if (g_functions[id - 1].now) {
      g_any_enabled.store(true, std::memory_order_relaxed);
      __atomic_store_n(&d->enabled, uint8_t(CAUSAL_PATH_FN_COUNTED), __ATOMIC_RELEASE);
    }
  }
  bool control = g_function_count.load(std::memory_order_relaxed) > 0;
  g_register_lock.unlock();
  if (control) // an image loaded after start-up: live control now has something to control
    pathsControlFunctionsRegistered();
}

extern "C" CAUSAL_RT_EXPORT __attribute__((noinline)) uint32_t
__causal_path_enter(struct causal_path_fn *fn, const char *inlined_at) {
  ThreadState *state = tls_thread;
  if (!state || !fn || !g_collecting.load(std::memory_order_relaxed) || inRuntimeWork(state))
    return 0;
  uint32_t id = __atomic_load_n(&fn->id, __ATOMIC_RELAXED);
  if (id == 0)
    return 0;
  PathThread *t = state->paths;
  if (__builtin_expect(!t || t->tid != threadId(state), 0) && !(t = threadPaths(state)))
    return 0;
  if (t->busy || id >= kFunctionIds) // a signal handler interrupted this thread's entry or exit
    return 0;
  t->busy = 1;
  bool sampled_walk = false;
  const uint32_t weight = walkWeight(t, id, &sampled_walk);
  beginChange(t);
  auto done = [t](uint32_t token) {
    endChange(t);
    t->busy = 0;
    return token;
  };
  // The caller's stack pointer at the call and F's frame pointer (this
  // function keeps a frame pointer: the runtime is built with
  // -fno-omit-frame-pointer).
  uintptr_t frame = uintptr_t(__builtin_frame_address(0));
  uintptr_t sp = frame + 16;
  uintptr_t fp0 = stackWord(frame);
  uint64_t frames[kMaxDepth];
  uintptr_t fps[kMaxDepth];
  uint32_t fp_count = 0, flags = 0;
  uintptr_t ret0 = uintptr_t(__builtin_return_address(0));
  const uint32_t generation = kindGeneration();
  // The last path entered from this call site, if the stack still holds it.
  SiteMemo &memo = t->memo[directSlot(ret0, kSiteMemoBits)];
  uint32_t record = UINT32_MAX, depth = 0;
  const uint64_t *path_frames = frames;
  if (memo.ret0 == ret0 && memo.generation == generation && memo.record < t->table.count) {
    const Record &r = t->table.records[memo.record];
    const uint64_t *recorded = t->table.frames + r.frames;
    if (r.fn == id && r.inlined_at == inlined_at && r.flags == 0 && recorded[0] == ret0 &&
        replayWalk(state, recorded, r.depth, WalkEnd(memo.end), fp0, sp, fps, &fp_count)) {
      record = memo.record;
      depth = r.depth;
      path_frames = recorded;
    }
  }
  WalkEnd end = kWalkEndOther;
  if (record == UINT32_MAX)
    depth = walkStack(state, t, generation, ret0, fp0, sp, frames, fps, &fp_count, &flags, &end);
  // Entries whose frames are gone (longjmp, an exception through a frame
  // without the exit's cleanup) are closed as if they exited now: F again
  // from the same frame, or a frame the walk did not go through (or went
  // through holding another return address: reused) although it lies
  // below the walk's end. The first such entry and every one above it.
  uint32_t live = 0;
  for (; live < t->depth; ++live) {
    const Entry &e = t->active[live];
    if (e.fp == fp0) {
      if (e.fn == id)
        break;
      continue; // F inlined where the other chosen function was (or is)
    }
    bool seen = false, same = false;
    for (uint32_t j = 1; j < fp_count; ++j)
      if (fps[j] == e.fp) {
        seen = true;
        same = stackWord(e.fp + 8) == e.ret_above;
        break;
      }
    if (seen ? !same : (fp_count != 0 && e.fp <= fps[fp_count - 1]))
      break;
  }
  closeDownTo(t, state, live);
  for (uint32_t i = 0; i < t->depth; ++i) {
    if (t->active[i].fn == id) { // recursion: the outer entry's time
      add(&t->table.records[t->active[i].record].recursive_calls, uint64_t(weight));
      return done(kRecursiveToken | (i + 1));
    }
  }
  if (t->depth == kActiveDepth) {
    add(&t->dropped, uint64_t(weight));
    return done(0);
  }
  if (flags & pf::kPathTruncated)
    add(&t->truncated, 1);
  if (record == UINT32_MAX) {
    record = intern(&t->table, keyHash(id, inlined_at, flags, frames, depth), id, inlined_at, flags,
                    frames, depth);
    if (record == UINT32_MAX) {
      add(&t->dropped, uint64_t(weight));
      return done(0);
    }
    if (end != kWalkEndOther && flags == 0)
      memo = {ret0, record, generation, uint32_t(end), 0};
  }
  // A sampled walk's entry of F inside an F whose entry was not walked:
  // recursive, by its path (outerPath), as the active entries tell the others.
  if (sampled_walk && !inlined_at && !(t->table.records[record].flags & pf::kPathTruncated)) {
    if (t->table.records[record].outer == 0)
      put(&t->table.records[record].outer, outerPath(t, record, id));
    if (uint32_t outer = t->table.records[record].outer; outer >= 2) {
      add(&t->table.records[outer - 2].recursive_calls, uint64_t(weight));
      return done(kRecursiveToken);
    }
  }
  Record &r = t->table.records[record];
  if (g_context_mode != PathContextMode::None && !r.context_known) {
    r.context = pathContext(inlined_at, path_frames, depth);
    r.context_known = 1;
  }
  uint32_t slot = t->depth;
  Entry &e = t->active[slot];
  e.fn = id;
  put(&e.record, record);
  put(&e.weight, weight);
  put(&t->last_record[id], record + 1);
  e.fp = fp0;
  e.ret_above = fp_count != 0 && fps[0] == fp0 ? stackWord(fp0 + 8) : 0;
  t->serial = (t->serial + 1) & 0x7fffff;
  put(&e.token, (t->serial << 8) | (slot + 1));
  put(&t->depth, slot + 1);
  state->path_depth = slot + 1;
  __atomic_store_n(&state->path_context, r.context, __ATOMIC_RELAXED);
  startEntry(&e, state, timingOf(t, r, sampled_walk));
  return done(e.token);
}

extern "C" CAUSAL_RT_EXPORT void __causal_path_exit(struct causal_path_fn *, uint32_t token) {
  if (token == 0 || (token & kRecursiveToken))
    return;
  ThreadState *state = tls_thread;
  PathThread *t = state ? state->paths : nullptr;
  if (!t || t->tid != threadId(state) || t->busy)
    return;
  uint32_t slot = (token & 0xff) - 1;
  if (slot >= t->depth || t->active[slot].token != token)
    return; // stale: closed already (longjmp), or of another thread's state
  t->busy = 1;
  beginChange(t);
  closeDownTo(t, state, slot);
  endChange(t);
  t->busy = 0;
}

// ---- Life cycle ---------------------------------------------------------------------------

namespace causal::rt {

namespace {

void startRun() {
  g_run_start_ns = fastMonotonicNs();
  g_run_realtime_ns = realtimeNs();
  g_run = (uint64_t(getpid()) << 32) ^ (g_run_start_ns & 0xffffffffull);
  g_part_written = false; // in a fork child: the parent's
  g_finished = false;
  g_ended = {0, 0, 0};
  clearTable(&g_process);
}

// Returns false for a device.
bool sidecarPathOf(const char *profile_path, char *out, size_t size) {
  struct stat st; // a profile sent to a device (/dev/null) sends its paths there too
  bool device = rawSyscall(SYS_stat, long(profile_path), long(&st)) == 0 && S_ISCHR(st.st_mode);
  formatTo(out, size, "%s%s", profile_path, device ? "" : pf::kSuffix);
  return !device;
}

bool mapWriterBuffers(); // the writer's (below)

bool startCollecting() {
  if (g_ready)
    return true;
  size_t bytes = tableBytes(CAUSAL_PATHS_PROCESS_PATHS, CAUSAL_PATHS_PROCESS_PATHS * 16);
  char *process = static_cast<char *>(mapZeroed(bytes));
  char *merged = static_cast<char *>(mapZeroed(bytes));
  // The writer's buffers too, now: a fatal signal's write maps nothing.
  if (!process || !merged || !mapWriterBuffers()) {
    message("out of memory for --paths; no paths are collected");
    if (process)
      munmap(process, bytes);
    if (merged)
      munmap(merged, bytes);
    return false;
  }
  placeTable(&g_process, process, CAUSAL_PATHS_PROCESS_PATHS, CAUSAL_PATHS_PROCESS_PATHS * 16);
  placeTable(&g_merged, merged, CAUSAL_PATHS_PROCESS_PATHS, CAUSAL_PATHS_PROCESS_PATHS * 16);
  initFastClock(); // calibrated now (about 1 ms), not in the first entry
  startRun();
  g_ready = true;
  g_collecting.store(true, std::memory_order_release);
  return true;
}

} // namespace

bool pathsRequested() { return g_selection.all || g_selection.count > 0; }

void setupPathContexts(PathContextMode mode, const char *fixed_glob) {
  if (mode == PathContextMode::Fixed) {
    formatTo(g_contexts[0].name, sizeof(g_contexts[0].name), "%s", fixed_glob ? fixed_glob : "");
    g_contexts[0].ready.store(1, std::memory_order_release);
  }
  g_context_mode = mode;
}

namespace {

struct ContextSampleSlot {
  std::atomic<uint64_t> key; // line in context + 1; 0: free
  std::atomic<uint64_t> count;
  uint64_t written; // the writer's
  // The line's name, set by the thread that claimed the slot (then ready):
  // the line table's texts, or copies once its image is unloaded (null: none).
  std::atomic<const char *> file, function;
  uint32_t line;
  std::atomic<uint32_t> ready;
};
static_assert(!(CAUSAL_PATHS_CONTEXT_SAMPLES & (CAUSAL_PATHS_CONTEXT_SAMPLES - 1)),
              "a power of two");
ContextSampleSlot g_context_samples[CAUSAL_PATHS_CONTEXT_SAMPLES];
std::atomic<uint32_t> g_context_sample_pairs{0};

} // namespace

void countContextSample(uint64_t line_in_context, uint64_t weight, const char *file, uint32_t line,
                        const char *function) {
  constexpr uint32_t mask = CAUSAL_PATHS_CONTEXT_SAMPLES - 1;
  uint64_t key = line_in_context + 1;
  uint64_t h = key * 0x9e3779b97f4a7c15ull;
  for (uint32_t probe = 0, i = uint32_t(h >> 40) & mask; probe <= mask;
       ++probe, i = (i + 1) & mask) {
    ContextSampleSlot &slot = g_context_samples[i];
    uint64_t seen = slot.key.load(std::memory_order_acquire);
    if (seen == 0) {
      if (g_context_sample_pairs.load(std::memory_order_relaxed) >=
          CAUSAL_PATHS_CONTEXT_SAMPLES / 2)
        return;
      if (slot.key.compare_exchange_strong(seen, key, std::memory_order_acq_rel)) {
        g_context_sample_pairs.fetch_add(1, std::memory_order_relaxed);
        slot.file.store(file, std::memory_order_relaxed);
        slot.function.store(function, std::memory_order_relaxed);
        slot.line = line;
        slot.ready.store(1, std::memory_order_release);
      }
    }
    if (seen == 0 || seen == key) {
      slot.count.fetch_add(weight, std::memory_order_relaxed);
      return;
    }
  }
}

bool takeContextSamples(uint32_t *cursor, ContextSamples *out) {
  for (; *cursor < CAUSAL_PATHS_CONTEXT_SAMPLES; ++*cursor) {
    ContextSampleSlot &slot = g_context_samples[*cursor];
    if (!slot.ready.load(std::memory_order_acquire))
      continue;
    uint64_t now = slot.count.load(std::memory_order_relaxed);
    const char *file = slot.file.load(std::memory_order_acquire);
    if (now <= slot.written || !file)
      continue;
    out->file = file;
    out->line = slot.line;
    out->function = slot.function.load(std::memory_order_acquire);
    out->caller = pathContextName(contextOf(slot.key.load(std::memory_order_relaxed) - 1));
    out->count = now; // cumulative, as the lines' counts: the last one written counts
    slot.written = now;
    ++*cursor;
    return true;
  }
  return false;
}

void forgetContextSamplesWritten() {
  for (ContextSampleSlot &slot : g_context_samples)
    slot.written = 0;
}

const char *pathContextName(uint32_t id) {
  if (id == 0 || id > CAUSAL_PATHS_CONTEXTS)
    return "";
  const ContextSlot &slot = g_contexts[id - 1];
  return slot.ready.load(std::memory_order_acquire) ? slot.name : "";
}

void setupPaths(const char *profile_path, bool cpu_clock, uint32_t time_one_in,
                uint32_t walk_one_in) {
  g_register_lock.lock();
  parseSelection();
  g_register_lock.unlock();
  g_parts_apart = sidecarPathOf(profile_path, g_path, sizeof(g_path));
#ifndef CAUSAL_RT_STATIC
  g_runtime_code = executableRangeOf(reinterpret_cast<const void *>(&setupPaths));
#endif
  g_cpu_clock = cpu_clock;
  g_time_one_in = time_one_in ? time_one_in : 1;
  g_walk_one_in = walk_one_in;
  // Experiments per calling context read the context of every entry.
  if (g_walk_one_in > 1 && g_context_mode != PathContextMode::None && pathsRequested())
    message("--paths-walk-one-in %u is not used with experiments per calling context "
            "(--path, --path-experiments): every entry is walked",
            g_walk_one_in);
  if (g_context_mode != PathContextMode::None)
    g_walk_one_in = 1;
  if (pathsRequested())
    startCollecting();
}

void pathsThreadEnds(ThreadState *state) {
  PathThread *t = state ? state->paths : nullptr;
  if (!t || t->tid != threadId(state) || !g_ready)
    return;
  t->busy = 1;
  beginChange(t);
  closeDownTo(t, state, 0);
  endChange(t); // no entry left: a writer copies none and need not wait
  lockPaths();
  if (!g_finished) {
    mergeThreadTable(&g_process, t, &g_ended);
  }
  resetThread(t, 0);
  unlockPaths();
  if (state == tls_thread) // later entries (TLS destructors) call, and find no thread
    __causal_path_countdowns = nullptr;
  t->busy = 0;
}

void pathsForkChild(ThreadState *self) {
  g_paths_lock.reset(); // a holder was another thread of the parent
  g_register_lock.reset();
  for (ContextSampleSlot &slot : g_context_samples) { // the parent's: zeroed, as ModuleRegistry's
    slot.count.store(0, std::memory_order_relaxed);
    slot.written = 0;
  }
  pathsControlForkChild(); // a control file of its own
  if (!g_ready)
    return;
  for (uint32_t i = 0, used = g_threads.slotsUsed(); i < used; ++i) {
    ThreadState *state = g_threads.slot(i);
    if (state && state != self && state->paths) { // the parent's threads
      resetThread(state->paths, 0);
      state->paths->busy = 0; // for the next thread that takes the state
    }
  }
  startRun();
  PathThread *t = self ? self->paths : nullptr;
  if (!t)
    return;
  // The entries under way go on in the child, as entered at the fork; what
  // the parent's run measured is the parent's.
  Table &table = t->table;
  for (uint32_t i = 0; i < table.count; ++i) {
    Record &r = table.records[i];
    r.calls = r.recursive_calls = r.blocked_ns = r.samples = 0;
    r.cpu_ns = r.running_ns = 0;
    r.sampled_cpu_ns = r.sampled_running_ns = r.sampled_calls = r.untimed_calls = 0;
    r.exact_entries = 0;
  }
  t->dropped = t->truncated = t->walks = 0;
  for (uint32_t id = 0, ids = functionIdsUsed(); id < ids; ++id) // the parent's entries
    t->armed[id] = t->countdown[id];
  t->busy = 0;
  t->tid = pid_t(rawSyscall(SYS_gettid));
  for (uint32_t i = 0; i < t->depth; ++i)
    startEntry(&t->active[i], self, t->active[i].timing);
}

// ---- The writer -----------------------------------------------------------------------

namespace {

constexpr size_t kStagingBytes = 256 * 1024;
SidecarWriter g_sidecar(g_path, pf::kMagic, pf::kVersion, "paths", kStagingBytes);

struct StringSlot {
  uint64_t key;
  uint32_t id;
};
constexpr uint32_t kStringSlots = CAUSAL_PATHS_STRING_SLOTS;
StringSlot *g_strings = nullptr;
uint32_t g_next_string = 1;

// The staging buffer and the string table, mapped when collection starts
// (touched as used).
bool mapWriterBuffers() {
  if (!g_sidecar.hasBuffer())
    g_sidecar.setBuffer(static_cast<char *>(mapZeroed(kStagingBytes)));
  if (!g_strings)
    g_strings = static_cast<StringSlot *>(mapZeroed(sizeof(StringSlot) * kStringSlots));
  return g_sidecar.hasBuffer() && g_strings;
}

// Text built without the C library's formatting (a fatal signal's write
// comes here): |size| bytes at most, NUL-terminated, cut where it is full.
class TextOut {
public:
  TextOut(char *buffer, size_t size) : buffer_(buffer), size_(size) { buffer_[0] = '\0'; }
  TextOut &text(const char *text) { return bytes(text, strlen(text)); }
  TextOut &bytes(const char *text, size_t length) {
    for (size_t i = 0; i < length && used_ + 1 < size_; ++i)
      buffer_[used_++] = text[i];
    buffer_[used_] = '\0';
    return *this;
  }
  TextOut &number(uint64_t value, unsigned base = 10) {
    char digits[24];
    size_t n = 0;
    do {
      digits[sizeof(digits) - 1 - n++] = "0123456789abcdef"[value % base];
      value /= base;
    } while (value);
    return bytes(digits + sizeof(digits) - n, n);
  }
  size_t size() const { return used_; }

private:
  char *buffer_;
  size_t size_;
  size_t used_ = 0;
};

// "FILE:LINE" of a line table's line into |text|; its length.
size_t formatLocation(char *text, size_t size, const char *file, uint32_t line) {
  return TextOut(text, size).text(file ? file : "?").text(":").number(line).size();
}

// Room for a chunk of |payload| bytes (whole chunks are written); null if
// it can never fit.
char *stageChunk(pf::ChunkType type, size_t payload) {
  return g_sidecar.stageChunk(uint32_t(type), g_run, payload);
}

uint32_t defineString(const char *text, size_t length) {
  if (length == 0 || !g_strings)
    return 0;
  uint64_t key = hashText(text, length) | 1;
  uint32_t mask = kStringSlots - 1;
  uint32_t index = uint32_t((key * 0x9e3779b97f4a7c15ull) >> 40) & mask;
  for (uint32_t probe = 0; probe <= mask; ++probe, index = (index + 1) & mask) {
    StringSlot &slot = g_strings[index];
    if (slot.key == key)
      return slot.id;
    if (slot.key != 0)
      continue;
    if (g_next_string >= kStringSlots / 2) // keep the table from filling up
      return 0;
    char *at = stageChunk(pf::ChunkType::String, sizeof(pf::StringHead) + length);
    if (!at)
      return 0;
    pf::StringHead head;
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

uint32_t textString(const char *text) { return text ? defineString(text, strlen(text)) : 0; }

// ---- Frames of images unregistered before the write ------------------------
//
// An image's line table goes with its unregistration: at dlclose, and at exit,
// where the executable's destructor (causal.module_dtor, run by the loader's
// _dl_fini) comes before the runtime's, which writes the sidecar. So the
// frames in an image are rendered to text when it unregisters
// (pathsBeforeUnload) and kept here, under g_paths_lock.

struct RetainedFrame {
  uintptr_t address; // the call (a return address - 1); 0: a free slot
  uint32_t function; // offset + 1 of its function's name in g_retained_text (0: none)
  uint32_t location; // offset + 1 of its "FILE:LINE" (0: none)
};
constexpr uint32_t kRetainedSlots = CAUSAL_PATHS_RETAINED_FRAMES;
static_assert((kRetainedSlots & (kRetainedSlots - 1)) == 0, "a power of two");
constexpr size_t kRetainedTextBytes = size_t(CAUSAL_PATHS_RETAINED_FRAMES) * 96;
RetainedFrame *g_retained = nullptr;
char *g_retained_text = nullptr;
size_t g_retained_text_used = 0;
uint32_t g_retained_count = 0;
bool g_retained_full_said = false;

uint32_t retainedSlot(uintptr_t address) {
  return uint32_t((uint64_t(address) * 0x9e3779b97f4a7c15ull) >> 40) & (kRetainedSlots - 1);
}

const RetainedFrame *findRetained(uintptr_t address) {
  if (!g_retained)
    return nullptr;
  for (uint32_t i = retainedSlot(address);; i = (i + 1) & (kRetainedSlots - 1)) {
    const RetainedFrame &slot = g_retained[i];
    if (slot.address == address)
      return &slot;
    if (slot.address == 0)
      return nullptr;
  }
}

// Offset + 1 of a copy of |text| in g_retained_text (0: none, or no room).
uint32_t retainText(const char *text, size_t length) {
  if (!text || length == 0 || g_retained_text_used + length + 1 > kRetainedTextBytes)
    return 0;
  char *at = g_retained_text + g_retained_text_used;
  memcpy(at, text, length);
  at[length] = '\0';
  g_retained_text_used += length + 1;
  return uint32_t(at - g_retained_text) + 1;
}

void insertRetained(const RetainedFrame &frame) {
  uint32_t i = retainedSlot(frame.address);
  while (g_retained[i].address != 0)
    i = (i + 1) & (kRetainedSlots - 1);
  g_retained[i] = frame;
  ++g_retained_count;
}

// Calls |use|(file, line, function) with the instrumented line at |address|
// while its image's table is read (the names live in it), if it has one;
// returns whether a registered image holds |address|.
template <typename Use> bool withLineAt(uintptr_t address, Use use) {
  ModuleTablesRead reading(g_modules);
  ResolvedAddress where;
  if (!g_modules.resolve(address, &where))
    return false;
  const causal_linetab_header *table = g_modules.table(where.module);
  if (table && where.line < table->num_lines) {
    const causal_linetab_line &line = causal_linetab_lines(table)[where.line];
    use(causal_linetab_file(table, line.file_index), line.line,
        causal_linetab_function(table, where.line));
  }
  return true;
}

// Renders the frame of the call at |address| while its image is registered.
void retainFrame(uintptr_t address) {
  if (findRetained(address))
    return;
  if (g_retained_count >= kRetainedSlots / 2) { // keeps the probes short
    if (!g_retained_full_said)
      message("--paths: more than %u frames of unloaded images; the others are written "
              "without their lines",
              kRetainedSlots / 2);
    g_retained_full_said = true;
    return;
  }
  RetainedFrame frame = {address, 0, 0};
  char text[PATH_MAX + 32];
  withLineAt(address, [&](const char *file, uint32_t line, const char *function) {
    frame.location = retainText(text, formatLocation(text, sizeof(text), file, line));
    frame.function = function ? retainText(function, strlen(function)) : 0;
  });
  if (!frame.location && !frame.function)
    return; // not an instrumented line: the writer names its image, if still mapped
  insertRetained(frame);
}

// The copy of an inlined_at string of the image (one per string, so that the
// paths of several threads still merge: their key holds its address).
const char *retainInlinedAt(const char *inlined) {
  if (const RetainedFrame *known = findRetained(uintptr_t(inlined)))
    return known->function ? g_retained_text + known->function - 1 : nullptr;
  if (g_retained_count >= kRetainedSlots / 2)
    return nullptr;
  RetainedFrame copy = {uintptr_t(inlined), retainText(inlined, strlen(inlined)), 0};
  insertRetained(copy);
  return copy.function ? g_retained_text + copy.function - 1 : nullptr;
}

void retainFramesOf(Table *table, AddressRange image) {
  uint32_t count = __atomic_load_n(&table->count, __ATOMIC_ACQUIRE);
  for (uint32_t i = 0; i < count; ++i) {
    Record &r = table->records[i];
    for (uint32_t j = 0; j < r.depth; ++j) {
      uintptr_t ret = uintptr_t(table->frames[r.frames + j]);
      if (ret > image.begin && ret <= image.end)
        retainFrame(ret - 1);
    }
    // The pass's inlined_at strings are the image's read-only data.
    const char *inlined = __atomic_load_n(&r.inlined_at, __ATOMIC_RELAXED);
    if (inlined && uintptr_t(inlined) >= image.begin && uintptr_t(inlined) < image.end)
      __atomic_store_n(&r.inlined_at, retainInlinedAt(inlined), __ATOMIC_RELAXED);
  }
}

// The writer's scratch, under g_paths_lock: off the stack, which may be a
// fatal signal's alternate stack.
char g_text[PATH_MAX + 32];
char g_exe[PATH_MAX];                                  // the executable's path
uint32_t g_function_names[CAUSAL_PATHS_MAX_FUNCTIONS]; // String ids, by function id - 1

// The frame of code at |address| (a call: a return address - 1).
pf::Frame frameAt(uintptr_t address) {
  pf::Frame frame = {0, 0};
  char *text = g_text;
  if (withLineAt(address, [&](const char *file, uint32_t line, const char *function) {
        frame.location = defineString(text, formatLocation(text, sizeof(g_text), file, line));
        frame.function = textString(function);
      }))
    return frame;
  if (const RetainedFrame *kept = findRetained(address)) {
    if (kept->location)
      frame.location = textString(g_retained_text + kept->location - 1);
    if (kept->function)
      frame.function = textString(g_retained_text + kept->function - 1);
    return frame;
  }
  // The image and the offset: _dl_find_object takes no lock (dladdr takes
  // the loader's, which the thread a fatal signal interrupted may hold).
  dl_find_object image;
  if (_dl_find_object(reinterpret_cast<void *>(address), &image) == 0 && image.dlfo_map_start) {
    const link_map *map = image.dlfo_link_map;
    // The main program's link map has an empty name: the executable's.
    const char *name = map && map->l_name && map->l_name[0] ? map->l_name : g_exe;
    const char *slash = strrchr(name, '/');
    const char *base = slash ? slash + 1 : name;
    size_t length = TextOut(text, sizeof(g_text))
                        .text(*base ? base : "?")
                        .text("+0x")
                        .number(address + 1 - uintptr_t(image.dlfo_map_start), 16)
                        .size();
    frame.location = defineString(text, length);
  }
  return frame;
}

// Frames of an inlined_at string ("FUNCTION\tFILE:LINE\n", innermost first),
// outermost first into |out|; how many.
uint32_t inlinedFrames(const char *text, pf::Frame *out, uint32_t max) {
  pf::Frame frames[kMaxDepth];
  uint32_t n = 0;
  for (const char *line = text; line && *line && n < kMaxDepth && n < max;) {
    const char *end = strchr(line, '\n');
    size_t length = end ? size_t(end - line) : strlen(line);
    const char *tab = static_cast<const char *>(memchr(line, '\t', length));
    pf::Frame f = {0, 0};
    if (tab) {
      f.function = defineString(line, size_t(tab - line));
      f.location = defineString(tab + 1, length - size_t(tab - line) - 1);
    } else {
      f.function = defineString(line, length);
    }
    frames[n++] = f;
    line = end ? end + 1 : nullptr;
  }
  for (uint32_t i = 0; i < n; ++i)
    out[i] = frames[n - 1 - i];
  return n;
}

void stagePath(const Record &r, const uint64_t *frames, uint32_t id, uint32_t fn_name) {
  pf::Frame out[2 * kMaxDepth + 1];
  uint32_t depth = 0;
  for (uint32_t i = r.depth; i-- > 1;) // the callers, outermost first
    out[depth++] = frameAt(uintptr_t(frames[i]) - 1);
  if (r.inlined_at)
    depth += inlinedFrames(r.inlined_at, out + depth, kMaxDepth);
  pf::Frame self = frameAt(uintptr_t(frames[0]) - 1);
  self.function = fn_name;
  out[depth++] = self;
  size_t payload = sizeof(pf::PathHead) + depth * sizeof(pf::Frame);
  char *at = stageChunk(pf::ChunkType::Path, payload);
  if (!at)
    return;
  pf::PathHead head;
  memset(&head, 0, sizeof(head));
  head.id = id;
  head.function = r.fn;
  head.depth = depth;
  head.flags = r.flags;
  head.calls = r.calls;
  head.recursive_calls = r.recursive_calls;
  head.cpu_ns = r.cpu_ns;
  head.wall_ns = r.blocked_ns + r.running_ns;
  head.blocked_ns = r.blocked_ns;
  head.samples = r.samples;
  head.threads = r.threads;
  memcpy(at, &head, sizeof(head));
  memcpy(at + sizeof(head), out, depth * sizeof(pf::Frame));
}

void sayUnmatchedNames() {
  const Selection &s = g_selection;
  for (uint32_t i = 0; i < s.count; ++i)
    if (!s.matched[i])
      message("--paths: no function named '%s' was chosen at build time (build with "
              "-fcausal-paths=%s)",
              s.patterns[i], s.patterns[i]);
  // --path CALLER that no path of the run went through: its experiments
  // inserted no delay, their curve says nothing.
  if (g_context_mode == PathContextMode::Fixed &&
      !g_fixed_context_matched.load(std::memory_order_relaxed))
    message("--path %s: no call of a chosen function had a caller named so (`causal paths "
            "report` lists the callers); its experiments counted no sample",
            g_contexts[0].name);
}

// ---- Entries under way at a write ------------------------------------------------
//
// A write counts every live thread's entries under way as if they ended
// then: the writing thread's own and the others', which go on running (at
// the process's end: exit() while a thread is inside a chosen function). It
// reads their entries, never writes them: a copy is taken between two of
// the owner's changes (PathThread::changes, a seqlock), before and after its
// table is merged; an entry in both copies (its token in the same slot) was
// under way all along, so its record's counts hold nothing of it. An entry
// that began or ended while the table was merged is not added (never counted
// twice: one that ended may be missing).

using OpenEntry = Entry; // a copy
struct OpenEntries {
  uint32_t depth;
  OpenEntry entries[kActiveDepth];
};
OpenEntries g_open_before, g_open_after; // the writer's, under g_paths_lock

// Copies |t|'s active entries between two of its owner's changes. False if
// the owner is in one all along: |own|, the calling thread that a signal
// interrupted in it, never finishes it; another thread is given a few ms
// (an entry's walk takes microseconds).
bool copyOpenEntries(const PathThread *t, bool own, OpenEntries *out) {
  constexpr uint32_t kSpins = 100, kAttempts = 200;
  for (uint32_t attempt = 0;; ++attempt) {
    uint32_t before = __atomic_load_n(&t->changes, __ATOMIC_ACQUIRE);
    if (!(before & 1)) {
      uint32_t depth = read(&t->depth);
      if (depth > kActiveDepth)
        depth = kActiveDepth;
      for (uint32_t i = 0; i < depth; ++i) {
        const Entry &e = t->active[i];
        OpenEntry &copy = out->entries[i];
        copy.token = read(&e.token);
        copy.record = read(&e.record);
        copy.timing = read(&e.timing);
        copy.weight = read(&e.weight);
        copy.wall_start = read(&e.wall_start);
        copy.cpu_start = read(&e.cpu_start);
        copy.blocked_start = read(&e.blocked_start);
        copy.paused_start = read(&e.paused_start);
        copy.paused_cpu_start = read(&e.paused_cpu_start);
        copy.samples_start = read(&e.samples_start);
        copy.block_at_start = read(&e.block_at_start);
      }
      __atomic_thread_fence(__ATOMIC_ACQUIRE);
      if (__atomic_load_n(&t->changes, __ATOMIC_RELAXED) == before) {
        out->depth = depth;
        return true;
      }
    }
    if (own || attempt == kAttempts)
      return false;
    if (attempt < kSpins)
      __builtin_ia32_pause();
    else
      rawSleepNs(10000);
  }
}

// The entries of |state|'s thread (|t|) in both g_open_before and
// g_open_after, as if they ended now, into the merged table (|lost|: those
// that do not fit): a call, the samples so far, the time blocked so far,
// with the blocking call the thread is in, and, if it is timed, its running
// and CPU time so far (the thread's CPU clock read now), else its record's
// mean call's.
void addOpenEntries(const ThreadState *state, const PathThread *t, bool own, uint64_t *lost) {
  const OpenEntries &before = g_open_before, &after = g_open_after;
  uint64_t cpu = !g_cpu_clock ? 0 : own ? threadCpuNs() : threadCpuNs(read(&t->tid));
  uint64_t now = fastMonotonicNs(); // after the CPU clock, as an exit reads them
  uint64_t samples = __atomic_load_n(&state->samples, __ATOMIC_RELAXED);
  uint64_t blocked = read(&state->path_blocked_ns);
  uint64_t paused = read(&state->path_paused_ns), paused_cpu = read(&state->path_paused_cpu_ns);
  uint64_t block_since = read(&state->path_block_since);
  for (uint32_t i = 0; i < before.depth; ++i) {
    const OpenEntry &e = before.entries[i];
    if (i >= after.depth || after.entries[i].token != e.token)
      continue; // ended, or began, meanwhile
    const Record &r = t->table.records[e.record];
    // Merged already if it has calls: its thread is counted then.
    bool had = read(&r.calls) != 0 || read(&r.recursive_calls) != 0;
    uint32_t at =
        intern(&g_merged, r.hash, r.fn, r.inlined_at, r.flags, t->table.frames + r.frames, r.depth);
    if (at == UINT32_MAX) {
      ++*lost;
      continue;
    }
    Record &m = g_merged.records[at];
    const uint64_t w = e.weight ? e.weight : 1;
    m.threads += had ? 0 : 1;
    m.calls += w;
    m.samples += since(samples, e.samples_start) * w;
    NotOwn not_own = {since(blocked, e.blocked_start), since(paused, e.paused_start),
                      since(paused_cpu, e.paused_cpu_start)};
    // The blocking call under way, if it began inside the entry (not the
    // one a signal handler's entry was made in).
    if (block_since != 0 && block_since != e.block_at_start && now > block_since)
      not_own.blocked_ns += now - block_since;
    m.blocked_ns += not_own.blocked_ns * w;
    // Its own times if timed, else its record's mean call (estimatedTimes).
    Times times = {0, 0};
    if (e.timing != kUntimed) {
      times = timesOf(e, not_own, cpu, now);
    } else if (uint64_t calls = read(&r.calls)) {
      times = estimatedTimes(r);
      times = {times.cpu_ns / calls, times.running_ns / calls};
    }
    m.cpu_ns += times.cpu_ns * w;
    m.running_ns += times.running_ns * w;
  }
}

// Merges every live thread's table into g_merged, with the entries under way
// (above); |self|: the writing thread's state. Adds to |totals|.
void mergeThreads(const ThreadState *self, MergeTotals *totals) {
  for (uint32_t i = 0, used = g_threads.slotsUsed(); i < used; ++i) {
    ThreadState *state = g_threads.slot(i);
    PathThread *t = state ? __atomic_load_n(&state->paths, __ATOMIC_ACQUIRE) : nullptr;
    if (!t)
      continue;
    pid_t tid = read(&t->tid);
    bool own = state == self;
    bool copied = tid != 0 && tid == threadId(state) && copyOpenEntries(t, own, &g_open_before);
    mergeThreadTable(&g_merged, t, totals);
    if (copied && g_open_before.depth != 0 && copyOpenEntries(t, own, &g_open_after))
      addOpenEntries(state, t, own, &totals->dropped);
  }
}

} // namespace

// An image goes (pathsBeforeUnload): the names of its lines' pairs are kept
// as copies (under g_paths_lock, with the retained frames' text).
static void retainContextSamplesIn(AddressRange image) {
  for (ContextSampleSlot &slot : g_context_samples) {
    if (!slot.ready.load(std::memory_order_acquire))
      continue;
    const char *file = slot.file.load(std::memory_order_relaxed);
    const char *function = slot.function.load(std::memory_order_relaxed);
    if (file && image.contains(uintptr_t(file))) {
      uint32_t kept = retainText(file, strlen(file));
      slot.file.store(kept ? g_retained_text + kept - 1 : nullptr, std::memory_order_release);
    }
    if (function && image.contains(uintptr_t(function))) {
      uint32_t kept = retainText(function, strlen(function));
      slot.function.store(kept ? g_retained_text + kept - 1 : nullptr, std::memory_order_release);
    }
  }
}

void pathsBeforeUnload(AddressRange image) {
  forgetDescriptorsIn(image);
  if (!g_ready || image.end <= image.begin)
    return;
  ThreadState *self = tls_thread;
  sig_atomic_t was_in_runtime = self ? self->in_handler.load(std::memory_order_relaxed) : 0;
  if (self)
    self->in_handler.store(1, std::memory_order_relaxed);
  lockPaths();
  if (!g_finished && !g_retained) {
    g_retained = static_cast<RetainedFrame *>(mapZeroed(sizeof(RetainedFrame) * kRetainedSlots));
    g_retained_text = static_cast<char *>(mapZeroed(kRetainedTextBytes));
    if (!g_retained || !g_retained_text) {
      message("out of memory for the frames of an unloaded image; they are written without "
              "their lines");
      g_retained = nullptr;
    }
  }
  if (!g_finished && g_retained) {
    retainFramesOf(&g_process, image);
    retainContextSamplesIn(image);
    for (uint32_t i = 0, used = g_threads.slotsUsed(); i < used; ++i) {
      ThreadState *state = g_threads.slot(i);
      PathThread *t = state ? __atomic_load_n(&state->paths, __ATOMIC_ACQUIRE) : nullptr;
      if (t)
        retainFramesOf(&t->table, image);
    }
  }
  unlockPaths();
  if (self)
    self->in_handler.store(was_in_runtime, std::memory_order_relaxed);
}

namespace {

// Who writes: a part (the periodic flush, live control), the process's end,
// or a fatal signal's handler (the end too, with signal-safe calls only).
enum class PathsWrite { Part, End, Signal };

void writeSidecar(PathsWrite when) {
  bool last = when != PathsWrite::Part;
  if (last)
    pathsControlEnds(); // nothing more to serve: its file goes
  if (!g_ready) {
    if (when == PathsWrite::End && pathsRequested())
      sayUnmatchedNames();
    return;
  }
  ThreadState *self = tls_thread;
  // The writer's own I/O is the runtime's.
  sig_atomic_t was_in_runtime = self ? self->in_handler.load(std::memory_order_relaxed) : 0;
  if (self)
    self->in_handler.store(1, std::memory_order_relaxed);
  // A signal's write waits for another thread's part or end (as the
  // profile's does), never for the thread it interrupted.
  if (when == PathsWrite::Signal) {
    if (!lockPathsWithin(CAUSAL_PART_WAIT_NS)) {
      if (self)
        self->in_handler.store(was_in_runtime, std::memory_order_relaxed);
      return;
    }
    g_sidecar.keepQuiet(); // no message from a signal handler
  } else {
    lockPaths();
  }
  // The buffers were mapped with the tables (startCollecting).
  bool write = !g_finished && g_sidecar.hasBuffer() && g_strings &&
               (g_any_enabled.load(std::memory_order_relaxed) || g_write_unenabled) &&
               g_function_count.load(std::memory_order_acquire) > 0;
  if (last) {
    g_collecting.store(false, std::memory_order_relaxed);
    g_finished = true;
  }
  bool part = when == PathsWrite::Part && g_parts_apart;
  if (write && part) {
    formatTo(g_part_path, sizeof(g_part_path), "%s%s%llx", g_path, pf::kPartInfix,
             (unsigned long long)g_run);
    formatTo(g_part_temp, sizeof(g_part_temp), "%s.tmp", g_part_path);
    g_sidecar.replaceInto(g_part_temp, g_part_path);
  }
  if (write) {
    // Everything so far, merged: the ended threads' and the live ones'.
    clearTable(&g_merged);
    MergeTotals totals = g_ended;
    totals.dropped += mergeTable(&g_merged, &g_process, false);
    mergeThreads(self, &totals);

    memset(g_strings, 0, sizeof(StringSlot) * kStringSlots);
    g_next_string = 1;
    g_sidecar.clearStaged();
    pf::RunBegin begin;
    memset(&begin, 0, sizeof(begin));
    begin.start_ns = g_run_start_ns;
    begin.realtime_ns = g_run_realtime_ns;
    begin.pid = uint32_t(getpid());
    begin.flags = g_cpu_clock ? uint32_t(pf::kCpuClock) : 0u;
    begin.time_one_in = g_time_one_in;
    begin.walk_one_in = g_walk_one_in;
    begin.walk_gap_max =
        g_walk_one_in > 1 ? g_walk_one_in : g_walk_gap_max.load(std::memory_order_relaxed);
    begin.sample_period_ns = g_config.period_ns;
    char *at = stageChunk(pf::ChunkType::RunBegin, sizeof(begin));
    // The executable's path follows as the run's first String (id 1).
    long n = rawSyscall(SYS_readlink, long("/proc/self/exe"), long(g_exe), sizeof(g_exe) - 1);
    g_exe[n > 0 ? n : 0] = '\0';
    begin.program_name = textString(g_exe);
    memcpy(at, &begin, sizeof(begin));

    uint32_t functions = g_function_count.load(std::memory_order_acquire);
    for (uint32_t i = 0; i < functions; ++i) {
      const FunctionInfo &f = g_functions[i];
      pf::Function record;
      record.id = i + 1;
      record.symbol = textString(f.symbol);
      record.name = g_function_names[i] = textString(f.name);
      record.enabled = f.enabled ? 1 : 0;
      if (char *where = stageChunk(pf::ChunkType::Function, sizeof(record)))
        memcpy(where, &record, sizeof(record));
    }
    uint64_t written = 0, entries = 0;
    for (uint32_t i = 0; i < g_merged.count; ++i) {
      const Record &r = g_merged.records[i];
      if (r.fn == 0 || r.fn > functions)
        continue;
      entries += r.calls + r.recursive_calls;
      stagePath(r, g_merged.frames + r.frames, uint32_t(written + 1), g_function_names[r.fn - 1]);
      ++written;
    }
    pf::RunEnd end;
    end.end_ns = fastMonotonicNs();
    end.paths = written;
    end.dropped_entries = totals.dropped;
    end.truncated_walks = totals.truncated;
    if (char *where = stageChunk(pf::ChunkType::RunEnd, sizeof(end)))
      memcpy(where, &end, sizeof(end));
    if (when == PathsWrite::End && g_config.verbose)
      message("paths: the stack was walked at %llu of %llu entries (--paths-walk-one-in %s%u)",
              (unsigned long long)totals.walks, (unsigned long long)entries,
              g_walk_one_in ? "" : "auto: at most 1 in ",
              g_walk_one_in ? g_walk_one_in : g_walk_gap_max.load(std::memory_order_relaxed));
    bool whole = g_sidecar.close();
    if (part)
      g_part_written = g_part_written || whole;
    else if (whole && g_part_written) // the run is whole in g_path now
      g_part_written = !unlinkRaw(g_part_path);
  }
  unlockPaths();
  if (self)
    self->in_handler.store(was_in_runtime, std::memory_order_relaxed);
  if (when == PathsWrite::End)
    sayUnmatchedNames();
}

} // namespace

void writePaths(bool last) { writeSidecar(last ? PathsWrite::End : PathsWrite::Part); }

void writePathsOnSignal() { writeSidecar(PathsWrite::Signal); }

// ---- Live control (PathsControl.cpp) ----------------------------------------------

uint32_t pathsFunctionCount() { return g_function_count.load(std::memory_order_acquire); }

const char *pathsSidecarPath() { return g_path; }

bool changePaths(const char *patterns, bool enable, PathsChange *out, char *unmatched,
                 size_t unmatched_size, const char **error) {
  static Selection selection; // the profiler thread's, one command at a time
  memset(&selection, 0, sizeof(selection));
  parseNames(selection, patterns, enable ? "causal paths enable" : "causal paths disable");
  *out = PathsChange();
  if (unmatched_size)
    unmatched[0] = '\0';
  if (!selection.all && selection.count == 0) {
    *error = "no function named";
    return false;
  }
  if (enable) { // the tables, if --paths did not set them up at start-up
    lockPaths();
    bool ready = !g_finished && startCollecting();
    unlockPaths();
    if (!ready) {
      *error = g_finished ? "profiling has ended" : "out of memory for the paths' tables";
      return false;
    }
  }
  g_register_lock.lock();
  uint32_t count = g_function_count.load(std::memory_order_relaxed);
  bool changed[CAUSAL_PATHS_MAX_FUNCTIONS];
  for (uint32_t i = 0; i < count; ++i) {
    FunctionInfo &f = g_functions[i];
    changed[i] = false;
    if (!chosenBy(selection, f.symbol, f.name))
      continue;
    ++out->matched;
    if (f.now != enable) {
      changed[i] = true;
      ++out->changed;
    }
    f.now = enable;
    if (enable)
      f.enabled = true;
  }
  if (enable && out->matched)
    g_any_enabled.store(true, std::memory_order_relaxed);
  // Every image's descriptors of the functions that changed.
  for (uint32_t r = 0; r < g_range_count; ++r)
    for (causal_path_fn *d = g_ranges[r].start; d < g_ranges[r].stop; ++d) {
      uint32_t id = __atomic_load_n(&d->id, __ATOMIC_RELAXED);
      if (id != 0 && id <= count && changed[id - 1])
        __atomic_store_n(&d->enabled, uint8_t(enable ? CAUSAL_PATH_FN_COUNTED : 0),
                         __ATOMIC_RELEASE);
    }
  for (uint32_t i = 0; i < count; ++i)
    out->enabled += g_functions[i].now ? 1 : 0;
  out->functions = count;
  g_register_lock.unlock();
  size_t used = 0;
  for (uint32_t i = 0; i < selection.count; ++i)
    if (!selection.matched[i] && used + strlen(selection.patterns[i]) + 2 <= unmatched_size)
      used += formatTo(unmatched + used, unmatched_size - used, "%s\n", selection.patterns[i]);
  return true;
}

bool flushPathsNow(const char **error) {
  lockPaths();
  bool finished = g_finished;
  bool ready = !finished && startCollecting();
  unlockPaths();
  if (!ready) {
    *error = finished ? "profiling has ended" : "out of memory for the paths' tables";
    return false;
  }
  g_write_unenabled = true; // the Function chunks at least: what there is to enable
  writePaths(false);
  g_write_unenabled = false;
  return true;
}

void pathsEnabledCounts(uint32_t *functions, uint32_t *enabled) {
  g_register_lock.lock();
  uint32_t count = g_function_count.load(std::memory_order_relaxed), on = 0;
  for (uint32_t i = 0; i < count; ++i)
    on += g_functions[i].now ? 1 : 0;
  g_register_lock.unlock();
  *functions = count;
  *enabled = on;
}

} // namespace causal::rt
