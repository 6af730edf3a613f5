//===- runtime/hooks/HookTable.cpp - The hooks of causal/hooks.def --------===//
//
// Expands the table: the pointer to each real function and their resolution,
// and both entry points of each hook (the interposed NAME and
// __causal_hook_NAME, or NAME alone for a CAUSAL_INTERPOSER line). A hook of
// a generic kind (Blocking, WakingThenBlocking, Waking, Trying, Exec) is
// entirely made here from its line; a Custom one calls NAME##Hook of its
// family file; a Variadic one has its entry points written there.
//
//===----------------------------------------------------------------------===//

#include "HookCore.h"

#include <dlfcn.h>

namespace causal::rt::hooks {

#define CAUSAL_DEFINE_REAL(name, version) decltype(&::name) real_##name = nullptr;
#define CAUSAL_HOOK(kind, outcome, ret, name, params, args, version)                               \
  CAUSAL_IF_REAL_##kind(CAUSAL_DEFINE_REAL, name, version)
#define CAUSAL_INTERPOSER CAUSAL_HOOK
#include "causal/hooks.def"
#undef CAUSAL_DEFINE_REAL

namespace {

// The next definition of |name| after the runtime. A versioned one (the
// C library's pthread_cond_* have two; dlsym alone gives the oldest) is
// asked with dlvsym, but where an interposer sits between the runtime and
// the C library (a sanitizer's interceptors, another preloaded tool), its
// unversioned definition comes first, and dlvsym would pass over it to the
// C library's: under TSan the condition waits went unseen (a "double lock"
// report for a mutex a wait had released). The interposer picks the
// version itself.
template <typename F> F resolveReal(const char *name, const char *version) {
  void *next = dlsym(RTLD_NEXT, name);
  void *versioned = version ? dlvsym(RTLD_NEXT, name, version) : nullptr;
  if (!versioned)
    return reinterpret_cast<F>(next);
  Dl_info next_object, versioned_object;
  if (next && dladdr(next, &next_object) && dladdr(versioned, &versioned_object) &&
      next_object.dli_fbase != versioned_object.dli_fbase)
    return reinterpret_cast<F>(next); // an interposer's
  return reinterpret_cast<F>(versioned);
}

__attribute__((constructor(101))) void resolveAtStartup() { resolveRealFunctions(); }

} // namespace

void resolveRealFunctions() {
#define CAUSAL_RESOLVE_REAL(name, version)                                                         \
  if (!real_##name)                                                                                \
    real_##name = resolveReal<decltype(&::name)>(#name, version);
#define CAUSAL_HOOK(kind, outcome, ret, name, params, args, version)                               \
  CAUSAL_IF_REAL_##kind(CAUSAL_RESOLVE_REAL, name, version)
#define CAUSAL_INTERPOSER CAUSAL_HOOK
#include "causal/hooks.def"
#undef CAUSAL_RESOLVE_REAL
}

} // namespace causal::rt::hooks

// ---- The entry points ---------------------------------------------------------

// The body of an entry point, by kind.
// The kind of wait (--waits) comes from the name (hooks::waitKindOfHook).
#define CAUSAL_BODY_Blocking(outcome, name, args)                                                  \
  return hooks::Blocking<hooks::outcome, hooks::waitKindOfHook(#name)>::call<hooks::real_##name>   \
      args;
#define CAUSAL_BODY_WakingThenBlocking(outcome, name, args)                                        \
  return hooks::WakingThenBlocking<hooks::outcome, hooks::waitKindOfHook(#name),                   \
                                   hooks::wakesSecondArgument(#name)>::call<hooks::real_##name>    \
      args;
#define CAUSAL_BODY_Waking(outcome, name, args)                                                    \
  return hooks::Waking<hooks::waitKindOfHook(#name)>::call<hooks::real_##name> args;
#define CAUSAL_BODY_Trying(outcome, name, args) return hooks::Trying::call<hooks::real_##name> args;
#define CAUSAL_BODY_Io(outcome, name, args)                                                        \
  return hooks::Io<hooks::writesData(#name)>::call<hooks::real_##name> args;
#define CAUSAL_BODY_Exec(outcome, name, args) return hooks::Exec::call<hooks::real_##name> args;
#define CAUSAL_BODY_Custom(outcome, name, args)                                                    \
  return hooks::name##Hook(uint64_t(__builtin_return_address(0)), CAUSAL_UNPAREN args);
#define CAUSAL_BODY_CustomNoReturn(outcome, name, args)                                            \
  hooks::name##Hook(uint64_t(__builtin_return_address(0)), CAUSAL_UNPAREN args);

#define CAUSAL_ENTRY_POINT(kind, outcome, ret, entry, name, params, args)                          \
  extern "C" CAUSAL_RT_EXPORT CAUSAL_FORWARD ret entry params {                                    \
    CAUSAL_BODY_##kind(outcome, name, args)                                                        \
  }

// Which entry points a line has: none for a Variadic one (its family file).
#define CAUSAL_ENTRIES_Variadic(...)
#define CAUSAL_INTERPOSER_ENTRIES_Variadic(...)
#define CAUSAL_INTERPOSER_ENTRIES(kind, outcome, ret, name, params, args)                          \
  CAUSAL_ENTRY_POINT(kind, outcome, ret, name, name, params, args)
#define CAUSAL_ENTRIES(kind, outcome, ret, name, params, args)                                     \
  CAUSAL_ENTRY_POINT(kind, outcome, ret, name, name, params, args)                                 \
  CAUSAL_ENTRY_POINT(kind, outcome, ret, __causal_hook_##name, name, params, args)
#define CAUSAL_ENTRIES_Blocking CAUSAL_ENTRIES
#define CAUSAL_ENTRIES_WakingThenBlocking CAUSAL_ENTRIES
#define CAUSAL_ENTRIES_Waking CAUSAL_ENTRIES
#define CAUSAL_ENTRIES_Trying CAUSAL_ENTRIES
#define CAUSAL_ENTRIES_Io CAUSAL_ENTRIES
#define CAUSAL_ENTRIES_Exec CAUSAL_ENTRIES
#define CAUSAL_ENTRIES_Custom CAUSAL_ENTRIES
#define CAUSAL_ENTRIES_CustomNoReturn CAUSAL_ENTRIES
#define CAUSAL_INTERPOSER_ENTRIES_Blocking CAUSAL_INTERPOSER_ENTRIES
#define CAUSAL_INTERPOSER_ENTRIES_WakingThenBlocking CAUSAL_INTERPOSER_ENTRIES
#define CAUSAL_INTERPOSER_ENTRIES_Waking CAUSAL_INTERPOSER_ENTRIES
#define CAUSAL_INTERPOSER_ENTRIES_Trying CAUSAL_INTERPOSER_ENTRIES
#define CAUSAL_INTERPOSER_ENTRIES_Io CAUSAL_INTERPOSER_ENTRIES
#define CAUSAL_INTERPOSER_ENTRIES_Exec CAUSAL_INTERPOSER_ENTRIES
#define CAUSAL_INTERPOSER_ENTRIES_Custom CAUSAL_INTERPOSER_ENTRIES
#define CAUSAL_INTERPOSER_ENTRIES_CustomNoReturn CAUSAL_INTERPOSER_ENTRIES

using namespace causal::rt;

#define CAUSAL_HOOK(kind, outcome, ret, name, params, args, version)                               \
  CAUSAL_ENTRIES_##kind(kind, outcome, ret, name, params, args)
#define CAUSAL_INTERPOSER(kind, outcome, ret, name, params, args, version)                         \
  CAUSAL_INTERPOSER_ENTRIES_##kind(kind, outcome, ret, name, params, args)
#include "causal/hooks.def"

// ---- The rest of the hook layer's interface -------------------------------------

// For the runtime's tests: synchronization calls the calling thread made
// through either entry point (each call counts once), or UINT64_MAX if the
// thread is not profiled.
extern "C" CAUSAL_RT_EXPORT uint64_t __causal_test_sync_calls() {
  ThreadState *state = tls_thread;
  return state ? state->sync_calls : UINT64_MAX;
}

// For the runtime's tests: suspends and resumes the calling thread's
// sampler, as a pause that spins does (Experiment.cpp, pause).
extern "C" CAUSAL_RT_EXPORT void __causal_test_suspend_and_resume_sampling() {
  if (ThreadState *state = tls_thread) {
    suspendThreadSampling(state);
    resumeThreadSampling(state);
  }
}

// For the runtime's tests: the global delay count, the calling thread's
// local count, the time it paused so far and the overshoot of its last
// pause (carried to the next one); false if it is not profiled.
extern "C" CAUSAL_RT_EXPORT bool __causal_test_delays(uint64_t *global, uint64_t *local,
                                                      uint64_t *paused, uint64_t *overshoot) {
  ThreadState *state = tls_thread;
  if (!state)
    return false;
  *global = g_experiment.global_delay_ns.load(std::memory_order_relaxed);
  *local = state->local_delay_ns.load(std::memory_order_relaxed);
  *paused = state->paused_ns;
  *overshoot = state->excess_delay_ns;
  return true;
}
