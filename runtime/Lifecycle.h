//===- runtime/Lifecycle.h - What the rooms of the runtime offer each other ===//
//
// The functions of the thread lifecycle (Threads.cpp), fork (Fork.cpp) and
// process end (ProcessEnd.cpp) that start-up (Runtime.cpp) and the
// hooks of pthread_create, _exit, _Exit, quick_exit and exec* (runtime/hooks/)
// call.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_RUNTIME_LIFECYCLE_H
#define CAUSAL_RUNTIME_LIFECYCLE_H

#include "ThreadState.h"

#include <pthread.h>
#include <stdint.h>

namespace causal::rt {

// ---- Threads (Threads.cpp) ----------------------------------------------------

/// What a new thread inherits from its creator (createProgramThread
/// allocates it, threadTrampoline frees it).
struct ThreadLaunch {
  void *(*start)(void *);
  void *arg;
  uint64_t inherited_delay_ns;
  uint64_t inherited_excess_ns;
  uint32_t parent_tid; // the creating thread (--waits)
};

using PthreadCreateFn = int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
/// pthread_create for the program (its hook, runtime/hooks/): the new thread
/// is sampled from its first instruction of user code and inherits its
/// creator's delay count; |real| (the C library's) creates it.
int createProgramThread(PthreadCreateFn real, pthread_t *thread, const pthread_attr_t *attr,
                        void *(*start)(void *), void *arg);
/// Creates one of the runtime's own threads (the profiler thread): never
/// sampled, never counted as a program thread. It goes through the process's
/// default pthread_create, so a sanitizer linked into the program (ASan,
/// TSan: their interceptor comes first) registers it and knows it when it is
/// detached or ends; the runtime's own interposer, reached next, passes it
/// straight to the C library. prepareRuntimeThreads resolves it (before any fork:
/// a fork child starts its thread without dlsym).
bool prepareRuntimeThreads();
int createRuntimeThread(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *),
                        void *arg);
/// Start routine of every thread the program creates: samples the thread,
/// then calls the program's start routine. |raw|: a malloc'd ThreadLaunch.
void *threadTrampoline(void *raw);

/// Creates the key whose destructor ends a thread's sampling. False if it
/// cannot (profiling is off then).
bool setupThreads();
/// Makes the calling thread a sampled thread. |inherited_delay_ns|: the
/// creator's delay count (a thread inherits the delays its creator took).
void beginThread(bool is_main_thread, uint64_t inherited_delay_ns, uint64_t inherited_excess_ns);
/// Fork child: |self| (null if unsampled) is the one program thread left.
void threadsForkChild(ThreadState *self);

// ---- Fork (Fork.cpp) -------------------------------------------------------------

/// pthread_atfork handlers: a child samples its one thread, and its profile
/// block describes the child only.
void installForkHandlers();

// ---- Process end and signals (ProcessEnd.cpp) -------------------------------

/// Start of the profile's clock (the block's start time and run time) and
/// the process the profile is this process's (a vfork child is not).
void startProfileClock();
/// Fork child: a profile of its own, from now, not yet written.
void profileForkChild();
/// The profile is written at exit (atexit, and the runtime's destructor).
void registerExitWriter();
/// Terminating and fatal signals left at their default write the profile
/// first (a one-shot handler), then end the process as they would have.
void installFatalSignalHandlers();
/// The periodic flush from now on (CAUSAL_FLUSH_SECONDS; needs the settings).
void startProfileParts();
/// Appends the part of the profile gained since the last part (the
/// experiments finished since, the counts changed since); the first part
/// opens the run. Async-signal-safe; does nothing while another thread writes
/// a part, or once the last block is written. False if nothing was written.
/// The periodic flush calls it; a caller that wants the profile on disk now
/// while the program continues can too.
bool writeProfileSoFar();
/// writeProfileSoFar() when the flush period is up (signal-safe): called
/// by the profiler thread between experiments, or, while there is none, by
/// the sample handler.
void writeProfileIfDue();
/// Bounded profiling (CAUSAL_DURATION_SECONDS, CAUSAL_STOP_FILE): whether it
/// is asked for; whether its end has come (the profiler thread asks at every
/// poll step: the deadline, the stop file at most every
/// CAUSAL_STOP_FILE_POLL_NS); the end itself, on the profiler thread after
/// its last experiment: sampling ends in every thread, the profile's last
/// block is written (writeProfileOnce) and the program continues unprofiled.
bool profilingBounded();
bool profilingShouldEnd();
void endProfilingEarly();
/// True once endProfilingEarly() wrote the profile (a fork child after it is
/// not profiled).
bool profilingEndedEarly();
/// Writes the profile's last block (and the sample log) once per process.
void writeProfileOnce();
/// Called by the exec hooks and by _exit, _Exit and quick_exit (runtime/hooks/):
/// writes the profile now, except in a vfork child.
void flushProfileBeforeExec();
/// _exit and _Exit: the profile is written first, as exit writes it, then
/// the process ends with |status|. Never returns.
[[noreturn]] void exitProcessNow(int status);

} // namespace causal::rt

#endif // CAUSAL_RUNTIME_LIFECYCLE_H
