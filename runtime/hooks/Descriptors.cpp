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
#include "SeqlockTable.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <string.h>
#include <sys/un.h>

namespace causal::rt::hooks {
namespace {

// The descriptors' tables (SeqlockTable.h: keys that share a slot
// overwrite each other, a writer that finds its slot being written gives up).
// Socket inode -> its socketpair() peer's inode.
SeqlockTable<uint64_t, 1024> g_socket_pairs;
// hash(epfd, its generation, event data) -> the descriptor.
SeqlockTable<uint64_t, 4096> g_epoll_targets;
// hash(fd, its generation, dev, inode) of a socket -> its flow.
struct CachedFlow {
  uint64_t incoming, outgoing;
};
SeqlockTable<CachedFlow, 4096> g_socket_flows;

// How many times each descriptor number below CAUSAL_WAITS_TRACKED_FDS was
// closed (close, or dup2/dup3 onto it): a number the program reuses gets new
// keys, so that nothing cached or recorded for what it was before (an
// eventfd's writers, a socket's flow, an epoll instance's registrations)
// applies to what it is now. Higher numbers have no generation.
std::atomic<uint32_t> g_fd_generation[CAUSAL_WAITS_TRACKED_FDS];
uint64_t generationOf(int fd) {
  return fd >= 0 && fd < int(CAUSAL_WAITS_TRACKED_FDS)
             ? g_fd_generation[fd].load(std::memory_order_relaxed)
             : 0;
}

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
  uint64_t cache_key = mix(mix(mix(uint64_t(fd), generationOf(fd)), st.st_dev), st.st_ino);
  CachedFlow cached;
  if (g_socket_flows.lookup(cache_key, &cached)) {
    flow.incoming = cached.incoming;
    flow.outgoing = cached.outgoing;
    return flow;
  }
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
    if (g_socket_pairs.lookup(st.st_ino, &peer_ino))
      flow.outgoing = flowKey(mix(kSeedUnix, peer_ino));
  }
  if (flow.incoming) // not before connect() or accept() gave it a peer
    g_socket_flows.put(cache_key, CachedFlow{flow.incoming, flow.outgoing});
  return flow;
}

uint64_t epollKey(int epfd, uint64_t data) {
  return mix(mix(mix(0xe9011ull, uint64_t(epfd)), generationOf(epfd)), data);
}

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
    flow.incoming = flow.outgoing = flowKey(mix(mix(kSeedAnon, uint64_t(fd)), generationOf(fd)));
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
  g_socket_pairs.put(a.st_ino, b.st_ino);
  g_socket_pairs.put(b.st_ino, a.st_ino);
}

void rememberEpollTarget(int epfd, uint64_t data, int fd) {
  g_epoll_targets.put(epollKey(epfd, data), uint64_t(fd));
}

int epollTarget(int epfd, uint64_t data) {
  uint64_t fd;
  return g_epoll_targets.lookup(epollKey(epfd, data), &fd) ? int(fd) : -1;
}

void forgetDescriptor(int fd) {
  if (fd >= 0 && fd < int(CAUSAL_WAITS_TRACKED_FDS))
    g_fd_generation[fd].fetch_add(1, std::memory_order_relaxed);
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

// A descriptor's number is forgotten before it is freed: whatever reuses it
// next is a new descriptor (forgetDescriptor). Not a wait.
CAUSAL_FORWARD int closeHook(uint64_t, int fd) {
  plainCall();
  if (waitsRecorded(wf::WaitKind::FileIo))
    forgetDescriptor(fd);
  return REAL(close)(fd);
}
CAUSAL_FORWARD int dup2Hook(uint64_t, int fd, int target) {
  plainCall();
  if (waitsRecorded(wf::WaitKind::FileIo) && fd != target)
    forgetDescriptor(target);
  return REAL(dup2)(fd, target);
}
CAUSAL_FORWARD int dup3Hook(uint64_t, int fd, int target, int flags) {
  plainCall();
  if (waitsRecorded(wf::WaitKind::FileIo) && fd != target)
    forgetDescriptor(target);
  return REAL(dup3)(fd, target, flags);
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

// An open of any entry point (|open| calls the real one), recorded as I/O on
// the descriptor it returns.
template <typename Open> CAUSAL_FORWARD int recordedOpen(uint64_t caller, Open open) {
  if (__builtin_expect(!waitsRecorded(wf::WaitKind::FileIo), 1))
    return open();
  WaitBuffer *buffer = recordingBuffer(tls_thread, caller);
  if (!buffer)
    return open();
  uint64_t start = fastMonotonicNs();
  TargetWaitMark mark;
  mark.begin(tls_thread, caller, start);
  int fd = open();
  uint64_t end = fastMonotonicNs();
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

CAUSAL_FORWARD int openHook(uint64_t caller, int dir, const char *path, int flags, mode_t mode) {
  OpenAt real = realOpenAt();
  return recordedOpen(caller, [&] { return real(dir, path, flags, mode); });
}

// _FORTIFY_SOURCE's checked opens (an open without a mode, whose flags the
// compiler could not see): the real ones check the flags and open.
CAUSAL_FORWARD int __open_2Hook(uint64_t caller, const char *path, int flags) {
  return recordedOpen(caller, [&] { return REAL(__open_2)(path, flags); });
}
CAUSAL_FORWARD int __open64_2Hook(uint64_t caller, const char *path, int flags) {
  return recordedOpen(caller, [&] { return REAL(__open64_2)(path, flags); });
}
CAUSAL_FORWARD int __openat_2Hook(uint64_t caller, int dir, const char *path, int flags) {
  return recordedOpen(caller, [&] { return REAL(__openat_2)(dir, path, flags); });
}
CAUSAL_FORWARD int __openat64_2Hook(uint64_t caller, int dir, const char *path, int flags) {
  return recordedOpen(caller, [&] { return REAL(__openat64_2)(dir, path, flags); });
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
