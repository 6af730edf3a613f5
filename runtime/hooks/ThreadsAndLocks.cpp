//===- runtime/hooks/ThreadsAndLocks.cpp - Thread creation and exit -------===//
//
// The custom hooks of the threads-and-locks family of causal/hooks.def. Its
// locks, condition variables, semaphores, barriers and joins are all of a
// generic kind: their lines in the table are their whole implementation.
//
//===----------------------------------------------------------------------===//

#include "HookCore.h"

namespace causal::rt::hooks {

// The new thread is sampled from its first instruction of user code and
// inherits its creator's delay count (Runtime.cpp).
CAUSAL_FORWARD int pthread_createHook(uint64_t /*caller*/, pthread_t *t, const pthread_attr_t *a,
                                      void *(*start)(void *), void *arg) {
  return createProgramThread(REAL(pthread_create), t, a, start, arg);
}

CAUSAL_FORWARD void pthread_exitHook(uint64_t /*caller*/, void *v) {
  beforeWaking(); // joiners wake up
  REAL(pthread_exit)(v);
  __builtin_unreachable();
}

} // namespace causal::rt::hooks
