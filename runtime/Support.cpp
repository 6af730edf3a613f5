//===- runtime/Support.cpp - Small helpers shared by the runtime parts ----===//

#include "Support.h"

#include "causal/tunables.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
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

uint64_t monotonicNs() { return clockNs(CLOCK_MONOTONIC); }
uint64_t realtimeNs() { return clockNs(CLOCK_REALTIME); }
uint64_t threadCpuNs() { return clockNs(CLOCK_THREAD_CPUTIME_ID); }
uint64_t threadCpuNs(pid_t tid) {
  return clockNs(clockid_t((~unsigned(tid) << 3) | 4 /* per thread */ | 2 /* sched */));
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
    ssize_t n = write(fd, data, size);
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
  ssize_t n = syscall(SYS_process_vm_readv, getpid(), &local, 1ul, &remote, 1ul, 0ul);
  if (n == ssize_t(size))
    return 0;
  return n < 0 ? errno : EFAULT;
}

bool safeRead64(uintptr_t address, uint64_t *value, ReadablePageCache *cache) {
  if (address < kPageSize || address > UINTPTR_MAX - 8)
    return false;
  uintptr_t first = address & ~(kPageSize - 1);
  uintptr_t last = (address + 7) & ~(kPageSize - 1);
  if (pageCached(cache, first) && pageCached(cache, last)) {
    memcpy(value, reinterpret_cast<const void *>(address), 8);
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
      memcpy(value, reinterpret_cast<const void *>(address), 8);
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
