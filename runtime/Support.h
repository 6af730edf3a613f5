//===- runtime/Support.h - Small helpers shared by the runtime parts ------===//
//
// Environment parsing, clocks, messages on stderr and a memory read that
// cannot fault. Everything marked "signal-safe" may be called from the
// sampling signal handler (no malloc, no locks, no stdio).
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_RUNTIME_SUPPORT_H
#define CAUSAL_RUNTIME_SUPPORT_H

#include <atomic>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/types.h>

#define CAUSAL_RT_HIDDEN __attribute__((visibility("hidden")))
#define CAUSAL_RT_EXPORT __attribute__((visibility("default")))
#define CAUSAL_RT_TLS __attribute__((tls_model("initial-exec")))

namespace causal::rt {

/// A system call made directly, without a libc wrapper: the runtime
/// interposes some of those wrappers (nanosleep, syscall: runtime/hooks/) and
/// must never run its own hooks. Returns the kernel's result (-errno on
/// failure) and leaves errno alone. Signal-safe.
inline long rawSyscall(long number, long a1 = 0, long a2 = 0, long a3 = 0, long a4 = 0, long a5 = 0,
                       long a6 = 0) {
  long result;
  register long r10 __asm__("r10") = a4;
  register long r8 __asm__("r8") = a5;
  register long r9 __asm__("r9") = a6;
  __asm__ volatile("syscall"
                   : "=a"(result)
                   : "a"(number), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9)
                   : "rcx", "r11", "memory");
  return result;
}

/// The kernel's signal sets (rt_sigprocmask, rt_sigpending: 64 bits on
/// x86-64): signal n is bit n - 1.
constexpr uint64_t kernelSignalBit(int signal) { return uint64_t(1) << (signal - 1); }

/// rt_sigprocmask made directly: changes the calling thread's mask as |how|
/// says with |*set| (null: only reads it) and stores the mask it had in
/// |*previous| (may be null). 0 or -errno. Signal-safe.
inline long rawSigprocmask(int how, const uint64_t *set, uint64_t *previous) {
  return rawSyscall(SYS_rt_sigprocmask, how, reinterpret_cast<long>(set),
                    reinterpret_cast<long>(previous), sizeof(uint64_t));
}

/// open(2), read(2), write(2) and close(2) made directly: the runtime hooks
/// them (runtime/hooks/, for --waits) and its own I/O never enters its hooks.
/// -1 and errno on failure, as the C library's. Signal-safe.
int ownOpen(const char *path, int flags, unsigned mode = 0);
ssize_t ownRead(int fd, void *buffer, size_t size);
ssize_t ownWrite(int fd, const void *data, size_t size);
int ownClose(int fd);

/// Sleeps about |ns| on CLOCK_MONOTONIC with a direct system call; returns
/// early if a signal handler runs (then false). Signal-safe, leaves errno
/// alone.
bool rawSleepNs(uint64_t ns);

/// Reads at most |size| - 1 bytes of the file at |path| into |buffer|,
/// NUL-terminated. False if it cannot be read or is empty. Signal-safe
/// (open, read, close).
bool readSmallFile(const char *path, char *buffer, size_t size);

/// Current CLOCK_MONOTONIC / CLOCK_REALTIME time in ns. Signal-safe.
uint64_t monotonicNs();
uint64_t realtimeNs();
/// CPU time of the calling thread in ns (a system call). Signal-safe.
uint64_t threadCpuNs();
/// CPU time of the whole process (all threads) in ns. Signal-safe.
uint64_t processCpuNs();
/// CPU time of thread |tid| of this process in ns (the kernel's per-thread
/// CPU clock, as pthread_getcpuclockid makes it); 0 if it cannot be read.
uint64_t threadCpuNs(pid_t tid);

/// The scheduler's account of a thread (/proc/.../schedstat): time on a
/// CPU and time spent runnable but waiting for one, both in ns.
struct SchedStat {
  uint64_t cpu_ns = 0;
  uint64_t wait_ns = 0;
};
/// Reads thread |tid|'s schedstat (0: the calling thread). False if the
/// kernel does not provide it. Signal-safe (open, read, close).
bool readSchedStat(pid_t tid, SchedStat *out);
/// Parses the text of a schedstat file ("cpu_ns wait_ns slices\n").
bool parseSchedStat(const char *text, SchedStat *out);

/// CPUs this process may use, in CPUs (fractional under a CPU quota): the
/// CPUs in |threads_mask| (the union of its threads' affinity masks; null or
/// empty: the calling thread's mask), lowered by a cgroup CPU quota (v2
/// cpu.max or v1 cpu.cfs_quota_us / cpu.cfs_period_us) of this process's
/// cgroup or any ancestor. Not signal-safe.
double availableCpus(const cpu_set_t *threads_mask = nullptr);
/// Parses a cgroup v2 cpu.max ("max 100000" or "QUOTA PERIOD"): the quota
/// in CPUs, or 0 when there is none.
double parseCgroupCpuMax(const char *text);

/// The time the CPUs in |mask| (null or empty: all) stood idle since boot,
/// in ns: /proc/stat's idle and iowait, counted in clock ticks (10 ms at
/// USER_HZ 100); -1 when unreadable. Not signal-safe (the profiler thread's).
double idleCpuNs(const cpu_set_t *mask);
/// Parses /proc/stat's text: the idle and iowait time (ns) of the CPUs in
/// |mask| (null or empty: all), at |tick_ns| a clock tick; -1 when a CPU of
/// |mask| has no whole line ("cpuN" and at least five numbers, ending in a
/// newline), or |mask| is null or empty and no CPU has one.
double parseIdleCpuNs(const char *text, const cpu_set_t *mask, double tick_ns);

/// Returns the value of an environment variable, or null when unset/empty.
const char *envString(const char *name);
/// Parses an unsigned decimal environment variable; returns |fallback| when
/// unset. Sets |*malformed| (if given) when the value is set but not a number.
uint64_t envUnsigned(const char *name, uint64_t fallback, bool *malformed = nullptr);
/// True when the variable is set to "1" (or "yes"/"true"/"on").
bool envFlag(const char *name);

/// A grace period: waits until |readers| (signal handlers, or program
/// threads inside the runtime, that may still read what is going away) is
/// at most |*abandoned| and returns true. After CAUSAL_GRACE_PERIOD_WAIT_NS it
/// stops waiting, sets |*abandoned| to the readers still counted and returns
/// false: a reader that a program's signal handler left with siglongjmp
/// never finishes, and a wait for it would hang the program (its exit, its
/// dlclose, its fork). The next grace period on the same count then waits
/// only for readers beyond those. Not signal-safe (it may wait that long).
bool waitForReaders(const std::atomic<uint32_t> &readers, std::atomic<uint32_t> *abandoned);

/// Prints CAUSAL_MESSAGE_PREFIX + formatted text + '\n' on stderr with one
/// write(). Not signal-safe (uses vsnprintf); never call from the handler.
void message(const char *format, ...) __attribute__((format(printf, 1, 2)));

/// Formats into a fixed buffer; returns the number of bytes written (always
/// NUL-terminated, truncated if needed). Not signal-safe.
size_t formatTo(char *buffer, size_t size, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

// Reads of the program's memory that a sanitizer must not check: the
// runtime reads the program's stacks (a stale frame pointer may point into a
// redzone of a local, a sanitizer's fake stack frame) and images, which is no
// bug of the program. In a sanitized build such a read is out of line and
// uninstrumented.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define CAUSAL_UNCHECKED_READ noinline, no_sanitize("address", "thread")
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define CAUSAL_UNCHECKED_READ noinline, no_sanitize("address", "thread")
#endif
#endif
#ifndef CAUSAL_UNCHECKED_READ
#define CAUSAL_UNCHECKED_READ always_inline
#endif

/// The 8 bytes at |address| (any alignment), read without a sanitizer's
/// checks. The caller knows they are mapped.
inline __attribute__((CAUSAL_UNCHECKED_READ)) uint64_t readUnchecked64(uintptr_t address) {
  uint64_t value;
  __builtin_memcpy(&value, reinterpret_cast<const void *>(address), sizeof value);
  return value;
}

/// Reads 8 bytes at |address| of this process without risk of a fault:
/// returns false if the memory is not readable. Signal-safe: one system call
/// per page not in |cache|, the pages it has validated. A cache must not
/// outlive one sample's attribution: a page can be unmapped between two
/// samples (dlclose, munmap), and a cached page is read directly.
struct ReadablePageCache {
  static constexpr unsigned kEntries = 16;
  uintptr_t pages[kEntries] = {};
  unsigned next = 0;
};
bool safeRead64(uintptr_t address, uint64_t *value, ReadablePageCache *cache);

/// Address range [begin, end).
struct AddressRange {
  uintptr_t begin = 0;
  uintptr_t end = 0;
  bool contains(uintptr_t a) const { return a >= begin && a < end; }
};

/// The executable (PF_X) load segment of the image that contains |address|,
/// via dl_iterate_phdr. Empty range if not found. Not signal-safe.
AddressRange executableRangeOf(const void *address);

/// Path of the image containing |address| ("/proc/self/exe" target for the
/// main program), copied into |buffer|. Not signal-safe.
void imagePathOf(const void *address, char *buffer, size_t size);

} // namespace causal::rt

#endif // CAUSAL_RUNTIME_SUPPORT_H
