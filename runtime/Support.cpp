//===- runtime/Support.cpp - Small helpers shared by the runtime parts ----===//

#include "Support.h"

#include "causal/tunables.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

namespace causal::rt {

static uint64_t clockNs(clockid_t clock) {
  struct timespec ts;
  if (clock_gettime(clock, &ts) != 0)
    return 0;
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

bool rawSleepNs(uint64_t ns) {
  struct timespec ts = {time_t(ns / 1000000000ull), long(ns % 1000000000ull)};
  return rawSyscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, reinterpret_cast<long>(&ts), 0) !=
         -EINTR;
}

uint64_t monotonicNs() { return clockNs(CLOCK_MONOTONIC); }
uint64_t realtimeNs() { return clockNs(CLOCK_REALTIME); }
uint64_t threadCpuNs() { return clockNs(CLOCK_THREAD_CPUTIME_ID); }
uint64_t processCpuNs() { return clockNs(CLOCK_PROCESS_CPUTIME_ID); }
uint64_t threadCpuNs(pid_t tid) {
  return clockNs(clockid_t((~unsigned(tid) << 3) | 4 /* per thread */ | 2 /* sched */));
}

bool waitForReaders(const std::atomic<uint32_t> &readers, std::atomic<uint32_t> *abandoned) {
  uint64_t deadline = 0;
  for (;;) {
    uint32_t reading = readers.load(std::memory_order_seq_cst);
    uint32_t left = abandoned->load(std::memory_order_relaxed);
    if (reading < left) // some of those given up on did end after all
      abandoned->store(left = reading, std::memory_order_relaxed);
    if (reading <= left)
      return true;
    uint64_t now = monotonicNs();
    if (deadline == 0) {
      deadline = now + CAUSAL_GRACE_PERIOD_WAIT_NS;
    } else if (now >= deadline) {
      abandoned->store(reading, std::memory_order_relaxed);
      return false;
    }
    sched_yield();
  }
}

static ssize_t withErrno(long result) {
  if (result < 0 && result > -4096) {
    errno = int(-result);
    return -1;
  }
  return ssize_t(result);
}
int ownOpen(const char *path, int flags, unsigned mode) {
  return int(withErrno(rawSyscall(SYS_openat, AT_FDCWD, long(path), flags, long(mode))));
}
ssize_t ownRead(int fd, void *buffer, size_t size) {
  return withErrno(rawSyscall(SYS_read, fd, long(buffer), long(size)));
}
ssize_t ownWrite(int fd, const void *data, size_t size) {
  return withErrno(rawSyscall(SYS_write, fd, long(data), long(size)));
}
int ownClose(int fd) { return int(withErrno(rawSyscall(SYS_close, fd))); }

bool readSmallFile(const char *path, char *buffer, size_t size) {
  int fd = ownOpen(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  ssize_t n = ownRead(fd, buffer, size - 1);
  ownClose(fd);
  if (n <= 0)
    return false;
  buffer[n] = 0;
  return true;
}

namespace {
// Reads up to |count| decimal numbers separated by spaces from |p| into
// |values|; returns how many (it stops at anything else). Signal-safe.
int readNumbers(const char *p, uint64_t *values, int count) {
  int n = 0;
  for (; n < count; ++n) {
    while (*p == ' ')
      ++p;
    if (*p < '0' || *p > '9')
      break;
    uint64_t value = 0;
    for (; *p >= '0' && *p <= '9'; ++p)
      value = value * 10 + uint64_t(*p - '0');
    values[n] = value;
  }
  return n;
}
} // namespace

bool parseSchedStat(const char *text, SchedStat *out) {
  uint64_t values[2];
  if (readNumbers(text, values, 2) != 2)
    return false;
  out->cpu_ns = values[0];
  out->wait_ns = values[1];
  return true;
}

bool readSchedStat(pid_t tid, SchedStat *out) {
  char path[64] = "/proc/thread-self/schedstat";
  if (tid) {
    // Signal-safe formatting of "/proc/self/task/<tid>/schedstat".
    char digits[16];
    int n = 0;
    for (unsigned v = unsigned(tid); v || !n; v /= 10)
      digits[n++] = char('0' + v % 10);
    char *p = path;
    for (const char *q = "/proc/self/task/"; *q;)
      *p++ = *q++;
    while (n)
      *p++ = digits[--n];
    for (const char *q = "/schedstat"; *q;)
      *p++ = *q++;
    *p = 0;
  }
  char text[96];
  return readSmallFile(path, text, sizeof text) && parseSchedStat(text, out);
}

double parseCgroupCpuMax(const char *text) {
  if (!text || !strncmp(text, "max", 3))
    return 0;
  char *end = nullptr;
  double quota = strtod(text, &end);
  if (end == text || quota <= 0)
    return 0;
  double period = strtod(end, nullptr);
  return period > 0 ? quota / period : 0;
}

namespace {

// The lowest quota (in CPUs) on the path from |dir| up to |root|; 0 if none.
double lowestQuota(const char *root, const char *relative, bool v2) {
  char dir[PATH_MAX];
  formatTo(dir, sizeof dir, "%s%s", root, relative);
  double lowest = 0;
  for (;;) {
    char path[PATH_MAX + 32], text[64], period[64];
    double quota = 0;
    if (v2) {
      formatTo(path, sizeof path, "%s/cpu.max", dir);
      if (readSmallFile(path, text, sizeof text))
        quota = parseCgroupCpuMax(text);
    } else {
      formatTo(path, sizeof path, "%s/cpu.cfs_quota_us", dir);
      char periodPath[PATH_MAX + 32];
      formatTo(periodPath, sizeof periodPath, "%s/cpu.cfs_period_us", dir);
      if (readSmallFile(path, text, sizeof text) &&
          readSmallFile(periodPath, period, sizeof period) && text[0] != '-') {
        char combined[140];
        text[strcspn(text, "\n")] = 0;
        formatTo(combined, sizeof combined, "%s %s", text, period);
        quota = parseCgroupCpuMax(combined);
      }
    }
    if (quota > 0 && (lowest == 0 || quota < lowest))
      lowest = quota;
    size_t length = strlen(dir), root_length = strlen(root);
    if (length <= root_length)
      return lowest;
    char *slash = strrchr(dir + root_length, '/');
    if (!slash)
      return lowest;
    *slash = 0;
  }
}

// True if the comma-separated |list| names |controller|.
bool hasController(const char *list, const char *controller) {
  size_t length = strlen(controller);
  for (const char *p = list; p;) {
    const char *comma = strchr(p, ',');
    size_t item = comma ? size_t(comma - p) : strlen(p);
    if (item == length && !strncmp(p, controller, length))
      return true;
    p = comma ? comma + 1 : nullptr;
  }
  return false;
}

} // namespace

double availableCpus(const cpu_set_t *threads_mask) {
  cpu_set_t set;
  double cpus = 0;
  // Each thread has its own mask: taskset sets them all, a program that pins
  // one thread per CPU (main included) uses the union.
  if (threads_mask && CPU_COUNT(threads_mask) > 0)
    cpus = CPU_COUNT(threads_mask);
  else if (sched_getaffinity(0, sizeof set, &set) == 0)
    cpus = CPU_COUNT(&set);
  if (cpus <= 0)
    cpus = double(sysconf(_SC_NPROCESSORS_ONLN));
  // /proc/self/cgroup: "0::/path" (v2) and "N:cpu,cpuacct:/path" (v1).
  char text[4096];
  if (!readSmallFile("/proc/self/cgroup", text, sizeof text))
    return cpus;
  double quota = 0;
  for (char *line = text; line && *line;) {
    char *next = strchr(line, '\n');
    if (next)
      *next++ = 0;
    char *first = strchr(line, ':');
    char *second = first ? strchr(first + 1, ':') : nullptr;
    if (second) {
      *second = 0;
      const char *controllers = first + 1, *relative = second + 1;
      double q = 0;
      if (!*controllers)
        q = lowestQuota("/sys/fs/cgroup", relative, true);
      else if (hasController(controllers, "cpu"))
        q = lowestQuota("/sys/fs/cgroup/cpu", relative, false); // "cpu,cpuacct" links here
      if (q > 0 && (quota == 0 || q < quota))
        quota = q;
    }
    line = next;
  }
  return quota > 0 && quota < cpus ? quota : cpus;
}

double parseIdleCpuNs(const char *text, const cpu_set_t *mask, double tick_ns) {
  bool all = !mask || CPU_COUNT(mask) == 0;
  int wanted = all ? 0 : CPU_COUNT(mask), found = 0;
  double idle = 0;
  for (const char *line = text; line && *line;) {
    const char *end = strchr(line, '\n');
    if (!end) // cut by the buffer: not a whole line
      break;
    // "cpuN user nice system idle iowait ...": N, then five numbers; "cpu "
    // (their sum) is skipped.
    uint64_t v[6];
    if (!strncmp(line, "cpu", 3) && line[3] >= '0' && line[3] <= '9' &&
        readNumbers(line + 3, v, 6) == 6 &&
        (all || (v[0] < CPU_SETSIZE && CPU_ISSET(v[0], mask)))) {
      idle += double(v[4] + v[5]) * tick_ns;
      ++found;
    }
    line = end + 1;
  }
  return found > 0 && found >= wanted ? idle : -1;
}

double idleCpuNs(const cpu_set_t *mask) {
  // The CPUs' lines come first; on a machine of many CPUs the interrupt
  // counts after them may not fit.
  static char text[32768];
  static const double tick_ns = 1e9 / double(sysconf(_SC_CLK_TCK));
  if (!readSmallFile("/proc/stat", text, sizeof text))
    return -1;
  return parseIdleCpuNs(text, mask, tick_ns);
}

const char *envString(const char *name) {
  const char *value = getenv(name);
  return value && *value ? value : nullptr;
}

uint64_t envUnsigned(const char *name, uint64_t fallback, bool *malformed) {
  const char *value = envString(name);
  if (!value)
    return fallback;
  uint64_t result = 0;
  const char *p = value;
  for (; *p >= '0' && *p <= '9'; ++p) {
    uint64_t digit = uint64_t(*p - '0');
    if (result > (UINT64_MAX - digit) / 10) {
      p = value; // overflow: treat as malformed
      break;
    }
    result = result * 10 + digit;
  }
  if (p == value || *p != 0) {
    if (malformed)
      *malformed = true;
    return fallback;
  }
  return result;
}

bool envFlag(const char *name) {
  const char *value = envString(name);
  if (!value)
    return false;
  return !strcmp(value, "1") || !strcasecmp(value, "yes") || !strcasecmp(value, "true") ||
         !strcasecmp(value, "on");
}

static void writeAll(int fd, const char *data, size_t size) {
  while (size) {
    ssize_t n = ownWrite(fd, data, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return;
    data += n;
    size -= size_t(n);
  }
}

void message(const char *format, ...) {
  int saved_errno = errno;
  char buffer[1024];
  size_t prefix = sizeof(CAUSAL_MESSAGE_PREFIX) - 1;
  memcpy(buffer, CAUSAL_MESSAGE_PREFIX, prefix);
  va_list args;
  va_start(args, format);
  int n = vsnprintf(buffer + prefix, sizeof(buffer) - prefix - 1, format, args);
  va_end(args);
  size_t length = prefix + (n < 0 ? 0 : size_t(n));
  if (length > sizeof(buffer) - 2)
    length = sizeof(buffer) - 2;
  buffer[length++] = '\n';
  writeAll(STDERR_FILENO, buffer, length);
  errno = saved_errno;
}

size_t formatTo(char *buffer, size_t size, const char *format, ...) {
  if (!size)
    return 0;
  va_list args;
  va_start(args, format);
  int n = vsnprintf(buffer, size, format, args);
  va_end(args);
  if (n < 0) {
    buffer[0] = 0;
    return 0;
  }
  return size_t(n) < size ? size_t(n) : size - 1;
}

// ---- Fault-free reads ------------------------------------------------------

static constexpr uintptr_t kPageSize = 4096;

static bool pageCached(const ReadablePageCache *cache, uintptr_t page) {
  for (unsigned i = 0; i < ReadablePageCache::kEntries; ++i)
    if (cache->pages[i] == page)
      return true;
  return false;
}

// Asks the kernel to copy from our own address space: fails with EFAULT
// instead of raising SIGSEGV when the memory is not readable.
static int kernelCopy(void *to, uintptr_t from, size_t size) {
  struct iovec local = {to, size};
  struct iovec remote = {reinterpret_cast<void *>(from), size};
  long n = rawSyscall(SYS_process_vm_readv, getpid(), reinterpret_cast<long>(&local), 1,
                      reinterpret_cast<long>(&remote), 1, 0);
  if (n == long(size))
    return 0;
  return n < 0 ? int(-n) : EFAULT;
}

bool safeRead64(uintptr_t address, uint64_t *value, ReadablePageCache *cache) {
  if (address < kPageSize || address > UINTPTR_MAX - 8)
    return false;
  uintptr_t first = address & ~(kPageSize - 1);
  uintptr_t last = (address + 7) & ~(kPageSize - 1);
  if (pageCached(cache, first) && pageCached(cache, last)) {
    *value = readUnchecked64(address);
    return true;
  }
  int saved_errno = errno;
  int error = kernelCopy(value, address, 8);
  if (error == ENOSYS || error == EPERM) {
    // process_vm_readv filtered (seccomp): fall back to "is it mapped?".
    // A mapped PROT_NONE page would still fault; such pages are rare next
    // to unwind tables, and the unwinder only reads where CFI points.
    unsigned char vec;
    error = 0;
    for (uintptr_t page = first; page <= last; page += kPageSize)
      if (mincore(reinterpret_cast<void *>(page), kPageSize, &vec) != 0)
        error = EFAULT;
    if (!error)
      *value = readUnchecked64(address);
  }
  errno = saved_errno;
  if (error)
    return false;
  cache->pages[cache->next++ % ReadablePageCache::kEntries] = first;
  if (last != first)
    cache->pages[cache->next++ % ReadablePageCache::kEntries] = last;
  return true;
}

// ---- Images ----------------------------------------------------------------

namespace {
struct RangeQuery {
  uintptr_t address;
  AddressRange result;
};
} // namespace

static int findExecutableSegment(struct dl_phdr_info *info, size_t, void *data) {
  auto *query = static_cast<RangeQuery *>(data);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr) &ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
      continue;
    uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
    uintptr_t end = begin + ph.p_memsz;
    if (query->address >= begin && query->address < end) {
      query->result.begin = begin;
      query->result.end = end;
      return 1;
    }
  }
  return 0;
}

AddressRange executableRangeOf(const void *address) {
  RangeQuery query{reinterpret_cast<uintptr_t>(address), {}};
  dl_iterate_phdr(findExecutableSegment, &query);
  return query.result;
}

void imagePathOf(const void *address, char *buffer, size_t size) {
  if (!size)
    return;
  buffer[0] = 0;
  Dl_info info;
  struct link_map *map = nullptr;
  // The link map's name, not dli_fname: for the main program dladdr
  // reports argv[0], which may be relative or not a path at all.
  if (address && dladdr1(address, &info, reinterpret_cast<void **>(&map), RTLD_DL_LINKMAP) && map &&
      map->l_name && map->l_name[0]) {
    formatTo(buffer, size, "%s", map->l_name);
    return;
  }
  // The main program's link map has an empty name.
  ssize_t n = readlink("/proc/self/exe", buffer, size - 1);
  if (n < 0)
    n = 0;
  buffer[n] = 0;
}

} // namespace causal::rt
