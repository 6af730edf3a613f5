//===- runtime/SpinLock.h - The runtime's one lock -------------------------===//
//
// A test-and-set lock for the runtime's rare writers (module and progress
// point registration, the pending experiment records). The runtime takes no
// pthread mutex: its locks are reached from image constructors before libc
// is fully up, from the profiler thread, and (tryLock only) from a fatal
// signal handler. A waiter spins with a pause, and yields its CPU after
// CAUSAL_SPIN_PAUSES failed attempts in a row, so a holder preempted on a
// machine with few CPUs gets to run. Constant-initialized.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_RUNTIME_SPINLOCK_H
#define CAUSAL_RUNTIME_SPINLOCK_H

#include "causal/tunables.h"

#include <atomic>
#include <sched.h>

namespace causal::rt {

class SpinLock {
public:
  constexpr SpinLock() = default;

  void lock() {
    for (unsigned failed = 0; held_.exchange(true, std::memory_order_acquire);) {
      if (++failed < CAUSAL_SPIN_PAUSES) {
        __builtin_ia32_pause();
      } else {
        failed = 0;
        sched_yield();
      }
    }
  }
  /// Takes the lock if it is free; never waits. Signal-safe.
  bool tryLock() { return !held_.exchange(true, std::memory_order_acquire); }
  void unlock() { held_.store(false, std::memory_order_release); }
  /// Fork child: a holder that was another thread of the parent does not
  /// exist here.
  void reset() { held_.store(false, std::memory_order_relaxed); }

private:
  std::atomic<bool> held_{false};
};

} // namespace causal::rt

#endif // CAUSAL_RUNTIME_SPINLOCK_H
