//===- runtime/CozApi.cpp - Coz's entry points, for programs built with coz.h ===//
//
// Coz's coz.h finds these with dlsym(RTLD_DEFAULT, ...): a counter per
// progress point (incremented by the program itself, summed with the
// points of the same name), and the blocking-call brackets of Coz's
// COZ_PRE_BLOCK / COZ_POST_BLOCK and the explicit delay payment.
//
//===----------------------------------------------------------------------===//

#include "Experiment.h"
#include "Runtime.h"
#include "Sampler.h"

using namespace causal::rt;

extern "C" CAUSAL_RT_EXPORT CozCounter *_coz_get_counter(int type, const char *name) {
  if (g_status.load(std::memory_order_acquire) == kInert)
    return nullptr;
  CozCounter *counter = g_progress.cozCounter(type, name);
  if (counter)
    startExperiments();
  return counter;
}

extern "C" CAUSAL_RT_EXPORT void _coz_pre_block() {
  if (ThreadState *state = tls_thread) {
    enterBlockingCall(state);
    state->coz_pre_block_global_ns = g_experiment.global_delay_ns.load(std::memory_order_relaxed);
  }
}

extern "C" CAUSAL_RT_EXPORT void _coz_post_block(bool skip_delays) {
  if (ThreadState *state = tls_thread) {
    leaveBlockingCall(state);
    if (skip_delays)
      creditWakeUp(state, state->coz_pre_block_global_ns);
  }
}

extern "C" CAUSAL_RT_EXPORT void _coz_add_delays() {
  if (ThreadState *state = tls_thread)
    if (owesDelays(state))
      payOwedDelays(state);
}
