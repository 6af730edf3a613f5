//===- runtime/hooks/Descriptors.cpp - Whose data a descriptor waits for --===//
//
// The flows of descriptors (Descriptors.h) and the custom hooks that teach
// them: socketpair() (which two sockets are each other's peer) and
// epoll_ctl() (which descriptor an event's data stands for); and open(),
// whose wait for the disk is recorded as I/O on the descriptor it returns.
//
//===----------------------------------------------------------------------===//

#include "Descriptors.h"

#include "HookCore.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <string.h>
#include <sys/un.h>

namespace causal::rt::hooks {
namespace {

// A direct-mapped table from a 64-bit key to two values, written under a
// sequence count as the waker table is (WakerTable.h): a writer that finds
// the slot being written gives up, a reader that sees the count move finds
// nothing, keys that share a slot overwrite each other.
template <uint32_t Slots> class KeyTable {
  static_assert(Slots && (Slots & (Slots - 1)) == 0, "a power of two");

public:
  void put(uint64_t key, uint64_t first, uint64_t second) {
    Slot &slot = slots_[indexOf(key)];
    uint32_t seq = slot.seq.load(std::memory_order_relaxed);
    if ((seq & 1) || !slot.seq.compare_exchange_strong(seq, seq + 1, std::memory_order_acquire,
                                                       std::memory_order_relaxed))
      return;
    std::atomic_thread_fence(std::memory_order_release);
    slot.key.store(key, std::memory_order_relaxed);
    slot.first.store(first, std::memory_order_relaxed);
    slot.second.store(second, std::memory_order_relaxed);
    slot.seq.store(seq + 2, std::memory_order_release);
  }
  bool get(uint64_t key, uint64_t *first, uint64_t *second) const {
    const Slot &slot = slots_[indexOf(key)];
    uint32_t before = slot.seq.load(std::memory_order_acquire);
    if ((before & 1) || before == 0)
      return false;
    uint64_t found = slot.key.load(std::memory_order_relaxed);
    uint64_t a = slot.first.load(std::memory_order_relaxed);
    uint64_t b = slot.second.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (slot.seq.load(std::memory_order_relaxed) != before || found != key)
      return false;
    *first = a;
    if (second)
      *second = b;
    return true;
  }

private:
  static uint32_t indexOf(uint64_t key) {
    return uint32_t((key * 0x9e3779b97f4a7c15ull) >> 40) & (Slots - 1);
  }
  struct Slot {
    std::atomic<uint32_t> seq{0};
    std::atomic<uint64_t> key{0};
    std::atomic<uint64_t> first{0};
    std::atomic<uint64_t> second{0};
  };
  Slot slots_[Slots];
};

// Socket inode -> its socketpair() peer's inode.
KeyTable<1024> g_socket_pairs;
// hash(epfd, event data) -> the descriptor.
KeyTable<4096> g_epoll_targets;
// hash(fd, dev, inode) of a socket -> its flow (incoming, outgoing).
KeyTable<4096> g_socket_flows;

uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}
uint64_t mixBytes(uint64_t h, const void *data, size_t size) {
  const unsigned char *p = static_cast<const unsigned char *>(data);
  for (size_t i = 0; i < size; ++i)
    h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}
uint64_t flowKey(uint64_t hash) { return kFlowKeyTag | (hash & ~kFlowKeyTag); }

enum : uint64_t { kSeedNet = 1, kSeedUnix = 2, kSeedAnon = 3 };

// The bytes of an internet address and port that identify one end.
uint64_t endOf(uint64_t h, const struct sockaddr_storage &a) {
  if (a.ss_family == AF_INET) {
    auto &in = reinterpret_cast<const struct sockaddr_in &>(a);
    h = mixBytes(h, &in.sin_addr, sizeof in.sin_addr);
    return mixBytes(h, &in.sin_port, sizeof in.sin_port);
  }
  auto &in6 = reinterpret_cast<const struct sockaddr_in6 &>(a);
  h = mixBytes(h, &in6.sin6_addr, sizeof in6.sin6_addr);
  return mixBytes(h, &in6.sin6_port, sizeof in6.sin6_port);
}

bool socketAddress(long call, int fd, struct sockaddr_storage *a) {
  socklen_t size = sizeof *a;
  memset(a, 0, sizeof *a);
  return rawSyscall(call, fd, reinterpret_cast<long>(a), reinterpret_cast<long>(&size)) == 0;
}

DescriptorFlow socketFlow(int fd, const struct stat &st) {
  DescriptorFlow flow;
  flow.socket = true;
  uint64_t cache_key = mix(mix(uint64_t(fd), st.st_dev), st.st_ino);
  if (g_socket_flows.get(cache_key, &flow.incoming, &flow.outgoing))
    return flow;
  struct sockaddr_storage local, peer;
  if (!socketAddress(SYS_getsockname, fd, &local))
    return flow;
  if (local.ss_family == AF_INET || local.ss_family == AF_INET6) {
    if (socketAddress(SYS_getpeername, fd, &peer) && peer.ss_family == local.ss_family) {
      flow.outgoing = flowKey(endOf(endOf(kSeedNet, local), peer));
      flow.incoming = flowKey(endOf(endOf(kSeedNet, peer), local));
    }
  } else if (local.ss_family == AF_UNIX) {
    flow.incoming = flowKey(mix(kSeedUnix, st.st_ino));
    uint64_t peer_ino = 0;
    if (g_socket_pairs.get(st.st_ino, &peer_ino, nullptr))
      flow.outgoing = flowKey(mix(kSeedUnix, peer_ino));
  }
  if (flow.incoming) // not before connect() or accept() gave it a peer
    g_socket_flows.put(cache_key, flow.incoming, flow.outgoing);
  return flow;
}

uint64_t epollKey(int epfd, uint64_t data) { return mix(mix(0xe9011ull, uint64_t(epfd)), data); }

} // namespace

DescriptorFlow describeFlow(int fd, const struct stat &st) {
  DescriptorFlow flow;
  switch (st.st_mode & S_IFMT) {
  case S_IFIFO:
    flow.incoming = flow.outgoing = inodeKey(st.st_dev, st.st_ino);
    break;
  case S_IFSOCK:
    flow = socketFlow(fd, st);
    break;
  case 0: // an anonymous inode: eventfd, timerfd, signalfd
    flow.incoming = flow.outgoing = flowKey(mix(kSeedAnon, uint64_t(fd)));
    break;
  default: // files and devices: their waits end by the device, not a thread
    break;
  }
  return flow;
}

bool describeFlow(int fd, DescriptorFlow *flow) {
  struct stat st;
  if (rawSyscall(SYS_fstat, fd, reinterpret_cast<long>(&st)) != 0)
    return false;
  *flow = describeFlow(fd, st);
  return true;
}

void rememberSocketPair(int first, int second) {
  struct stat a, b;
  if (rawSyscall(SYS_fstat, first, reinterpret_cast<long>(&a)) != 0 ||
      rawSyscall(SYS_fstat, second, reinterpret_cast<long>(&b)) != 0)
    return;
  g_socket_pairs.put(a.st_ino, b.st_ino, 0);
  g_socket_pairs.put(b.st_ino, a.st_ino, 0);
}

void rememberEpollTarget(int epfd, uint64_t data, int fd) {
  g_epoll_targets.put(epollKey(epfd, data), uint64_t(fd), 0);
}

int epollTarget(int epfd, uint64_t data) {
  uint64_t fd;
  return g_epoll_targets.get(epollKey(epfd, data), &fd, nullptr) ? int(fd) : -1;
}

void ReadyDescriptors::add(int fd) {
  if (fd < 0 || full())
    return;
  ++looked_;
  DescriptorFlow flow;
  if (!describeFlow(fd, &flow))
    return;
  saw_socket_ |= flow.socket;
  WakeRecord record;
  // A wake before the wait began did not end it (the data would have been
  // ready at once); a writer records its wake before it writes.
  if (!flow.incoming || !lookupWake(flow.incoming, &record) || record.time_ns < start_ns_ ||
      record.time_ns > end_ns_)
    return;
  if (!found_ || record.time_ns > best_time_) {
    found_ = true;
    best_time_ = record.time_ns;
    best_.waker = record.tid;
    best_.waker_pc = record.pc;
    best_.object = uint64_t(fd);
  }
}

ReadyWaker ReadyDescriptors::waker() const {
  if (found_)
    return best_;
  ReadyWaker none;
  none.waker = saw_socket_ ? wf::kPseudoNetwork : wf::kPseudoUnknown;
  return none;
}

// ---- The hooks ---------------------------------------------------------------------

CAUSAL_FORWARD int socketpairHook(uint64_t, int domain, int type, int protocol, int fds[2]) {
  plainCall();
  int r = REAL(socketpair)(domain, type, protocol, fds);
  if (r == 0 && waitsRecorded(wf::WaitKind::SocketIo)) {
    int saved = errno;
    rememberSocketPair(fds[0], fds[1]);
    errno = saved;
  }
  return r;
}

CAUSAL_FORWARD int epoll_ctlHook(uint64_t, int epfd, int op, int fd, struct epoll_event *event) {
  plainCall();
  int r = REAL(epoll_ctl)(epfd, op, fd, event);
  if (r == 0 && event && (op == EPOLL_CTL_ADD || op == EPOLL_CTL_MOD) &&
      waitsRecorded(wf::WaitKind::Poll))
    rememberEpollTarget(epfd, event->data.u64, fd);
  return r;
}

// ---- open ------------------------------------------------------------------------

namespace {
using OpenAt = int (*)(int, const char *, int, ...);
std::atomic<OpenAt> g_real_openat{nullptr};

// The C library's openat (open(p, f) is openat(AT_FDCWD, p, f)), resolved at
// start-up or on first use.
OpenAt realOpenAt() {
  OpenAt real = g_real_openat.load(std::memory_order_relaxed);
  if (__builtin_expect(real == nullptr, 0)) {
    real = reinterpret_cast<OpenAt>(dlsym(RTLD_NEXT, "openat"));
    g_real_openat.store(real, std::memory_order_relaxed);
  }
  return real;
}
__attribute__((constructor(101))) void resolveOpenAtStartup() { realOpenAt(); }

} // namespace

// O_CREAT and O_TMPFILE take a mode.
inline bool takesModeArgument(int flags) {
  return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
}

CAUSAL_FORWARD int openHook(uint64_t caller, int dir, const char *path, int flags, mode_t mode) {
  OpenAt real = realOpenAt();
  if (__builtin_expect(!waitsRecorded(wf::WaitKind::FileIo), 1))
    return real(dir, path, flags, mode);
  WaitBuffer *buffer = recordingBuffer(tls_thread, caller);
  if (!buffer)
    return real(dir, path, flags, mode);
  uint64_t start = monotonicNs();
  int fd = real(dir, path, flags, mode);
  uint64_t end = monotonicNs();
  if (end - start < CAUSAL_WAITS_MIN_EPISODE_NS)
    return fd;
  int saved = errno;
  struct stat st;
  RawEpisode episode = {};
  episode.start_ns = start;
  episode.end_ns = end;
  episode.pc = caller;
  episode.kind = uint8_t(wf::WaitKind::FileIo);
  episode.end = uint8_t(wf::WaitEnd::Failed);
  episode.waker = wf::kPseudoUnknown;
  if (fd >= 0) {
    episode.object = uint64_t(fd);
    episode.end = uint8_t(wf::WaitEnd::Woken);
    if (rawSyscall(SYS_fstat, fd, reinterpret_cast<long>(&st)) == 0 && isOnADisk(st))
      episode.waker = diskOf(st);
    else // a FIFO opened for reading waits for a writer, a device for itself
      episode.kind = uint8_t(wf::WaitKind::Other);
  }
  appendEpisode(buffer, episode);
  errno = saved;
  return fd;
}

} // namespace causal::rt::hooks

using namespace causal::rt;

#define CAUSAL_OPEN_MODE(flags)                                                                    \
  mode_t mode = 0;                                                                                 \
  if (hooks::takesModeArgument(flags)) {                                                           \
    va_list list;                                                                                  \
    va_start(list, flags);                                                                         \
    mode = mode_t(va_arg(list, int));                                                              \
    va_end(list);                                                                                  \
  }
#define CAUSAL_DEFINE_OPEN(entry)                                                                  \
  extern "C" CAUSAL_RT_EXPORT CAUSAL_FORWARD int entry(const char *path, int flags, ...) {         \
    CAUSAL_OPEN_MODE(flags)                                                                        \
    return hooks::openHook(uint64_t(__builtin_return_address(0)), AT_FDCWD, path, flags, mode);    \
  }
#define CAUSAL_DEFINE_OPENAT(entry)                                                                \
  extern "C" CAUSAL_RT_EXPORT CAUSAL_FORWARD int entry(int dir, const char *path, int flags,       \
                                                       ...) {                                      \
    CAUSAL_OPEN_MODE(flags)                                                                        \
    return hooks::openHook(uint64_t(__builtin_return_address(0)), dir, path, flags, mode);         \
  }
CAUSAL_DEFINE_OPEN(open)
CAUSAL_DEFINE_OPEN(open64)
CAUSAL_DEFINE_OPEN(__causal_hook_open)
CAUSAL_DEFINE_OPEN(__causal_hook_open64)
CAUSAL_DEFINE_OPENAT(openat)
CAUSAL_DEFINE_OPENAT(openat64)
CAUSAL_DEFINE_OPENAT(__causal_hook_openat)
CAUSAL_DEFINE_OPENAT(__causal_hook_openat64)
