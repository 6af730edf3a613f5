//===- runtime/Fork.cpp - fork: the child profiles itself ------------------===//
//
// pthread_atfork handlers. fork waits while a thread is inside libunwind
// (holding its internal mutexes; Attribution.h). In the child only the forking thread
// exists: it drops what it inherited (the parent's perf descriptors, thread
// states, counts, pending experiment records), samples itself again and
// writes a profile block of its own at its end.
//
//===----------------------------------------------------------------------===//

#include "Attribution.h"
#include "Experiment.h"
#include "FastClock.h"
#include "Lifecycle.h"
#include "Paths.h"
#include "Runtime.h"
#include "Sampler.h"
#include "Waits.h"

namespace causal::rt {

namespace {

void forkPrepare() {
  if (g_status.load(std::memory_order_acquire) == kActive && !beginFork())
    sayGracePeriodGivenUp("fork goes ahead");
}

void forkParent() { endFork(); }

void forkChild() {
  endFork();
  // The waits clock's writer, if one was re-anchoring, was another thread:
  // the child's readers would never re-anchor again. Whatever the status
  // (the hooks may still read the clock once profiling has ended).
  fastClockForkChild();
  if (g_status.load(std::memory_order_acquire) != kActive)
    return;
  ThreadState *self = tls_thread;
  // Every thread's perf descriptor was inherited; only this thread exists.
  for (uint32_t i = 0, used = g_threads.slotsUsed(); i < used; ++i)
    if (ThreadState *state = g_threads.slot(i))
      if (state->in_use.load(std::memory_order_acquire))
        forgetInheritedSampler(state);
  g_threads.releaseAllBut(self);
  if (profilingEndedEarly()) {
    // Profiling ended before the fork (--duration, the stop file): the
    // child is not profiled either (its profile counts as written).
    threadsForkChild(self);
    return;
  }
  // The child's profile describes the child only.
  g_modules.resetCounts();
  g_sample_log.reset();
  resetSampleCounters();
  profileForkChild();
  threadsForkChild(self);
  waitsForkChild(self); // a run of its own in PROFILE.waits
  pathsForkChild(self); // and in PROFILE.paths; its entries under way go on
  if (self)
    self->local_delay_ns.store(g_experiment.global_delay_ns.load());
  experimentsForkChild();
  if (self)
    startThreadSampling(self, false);
}

} // namespace

void installForkHandlers() { pthread_atfork(forkPrepare, forkParent, forkChild); }

} // namespace causal::rt
