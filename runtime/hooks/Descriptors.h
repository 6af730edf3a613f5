//===- runtime/hooks/Descriptors.h - Whose data a descriptor waits for ----===//
//
// For --waits: the waker table's keys of the data that flows into and out of
// a descriptor, so that a thread whose read, recv or wait for readiness ends
// finds the program thread that last wrote what it waited for:
//   * a pipe: its inode, the same at both ends;
//   * an AF_INET or AF_INET6 socket: the direction of the flow, (source
//     address, destination address), so that a write on the socket (L, P)
//     is what the reader of the socket (P, L) waits for: the two ends of a
//     loopback connection between two threads of the program;
//   * an AF_UNIX socket made by socketpair() (its hook records the pair): the
//     receiving socket's inode (named AF_UNIX connections are not paired);
//   * an eventfd, timerfd or signalfd (anonymous inodes, which share one inode
//     number): the descriptor's number in the process.
// A socket's addresses are read once per descriptor and cached, checked
// against the inode. Closing a descriptor (close, dup2, dup3) forgets what
// was known of its number: the keys of a number include how many times it
// was closed. Readiness waits by epoll learn which descriptor an event
// is for from epoll_ctl's hook (the event's data to the descriptor).
// Async-signal-safe: raw system calls and fixed, lock-free tables.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_RUNTIME_HOOKS_DESCRIPTORS_H
#define CAUSAL_RUNTIME_HOOKS_DESCRIPTORS_H

#include <stdint.h>
#include <sys/stat.h>

namespace causal::rt::hooks {

/// What flows through a descriptor: the keys a writer records its wake on
/// (outgoing) and a reader looks its waker up by (incoming); 0 where no
/// program thread can be known.
struct DescriptorFlow {
  uint64_t incoming = 0;
  uint64_t outgoing = 0;
  bool socket = false; // data with no program writer came from the network
};

/// |fd|'s flow, from its fstat result |st|.
DescriptorFlow describeFlow(int fd, const struct stat &st);
/// The same, calling fstat; false when |fd| is not open.
bool describeFlow(int fd, DescriptorFlow *flow);

/// socketpair()'s two ends, so that a write on one wakes the reader of the
/// other.
void rememberSocketPair(int first, int second);
/// epoll_ctl(ADD or MOD): events of |epfd| carrying |data| are about |fd|.
void rememberEpollTarget(int epfd, uint64_t data, int fd);
/// The descriptor of an event of |epfd| carrying |data|, or -1.
int epollTarget(int epfd, uint64_t data);
/// |fd| is being closed (or replaced by dup2/dup3): the descriptor that
/// reuses its number gets new keys (below CAUSAL_WAITS_TRACKED_FDS).
void forgetDescriptor(int fd);

/// The last program thread that delivered data to one of the ready
/// descriptors of a wait that ran from |start_ns| to |end_ns|: the latest
/// wake within it. |waker| is a tid, or wf::kPseudoNetwork when a ready
/// socket has no program writer, or wf::kPseudoUnknown.
struct ReadyWaker {
  uint32_t waker;
  uint64_t waker_pc = 0;
  uint64_t object = 0; // the descriptor that woke it
};
class ReadyDescriptors {
public:
  ReadyDescriptors(uint64_t start_ns, uint64_t end_ns) : start_ns_(start_ns), end_ns_(end_ns) {}
  /// One ready descriptor; at most kMaxLooked are looked at.
  void add(int fd);
  ReadyWaker waker() const;
  bool full() const { return looked_ >= kMaxLooked; }

private:
  static constexpr int kMaxLooked = 16;
  uint64_t start_ns_, end_ns_;
  int looked_ = 0;
  bool saw_socket_ = false;
  bool found_ = false;
  uint64_t best_time_ = 0;
  ReadyWaker best_{};
};

} // namespace causal::rt::hooks

#endif // CAUSAL_RUNTIME_HOOKS_DESCRIPTORS_H
