//===- causal/tunables.h - Every run-time tunable, its default and its name -===//
//
// One place for the profiler's knobs: the runtime reads them from the
// environment (so a program run directly can be configured), and `causal run`
// turns its command-line options into the same environment variables.
// Plain C so the runtime can include it.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_TUNABLES_H
#define CAUSAL_TUNABLES_H

/* "1" turns profiling off entirely in a binary built with -fcausal-profile:
 * no sampling thread, no signals, no output. */
#define CAUSAL_ENV_DISABLE "CAUSAL_DISABLE"

/* Profile path. Records are appended. */
#define CAUSAL_ENV_OUTPUT "CAUSAL_OUTPUT"
#define CAUSAL_DEFAULT_OUTPUT "profile.coz"

/* Sampling period of the per-thread CPU-time sampler, in nanoseconds. */
#define CAUSAL_ENV_SAMPLE_PERIOD "CAUSAL_SAMPLE_PERIOD_NS"
#define CAUSAL_DEFAULT_SAMPLE_PERIOD_NS 1000000ull /* 1 ms, as in the paper */
#define CAUSAL_MIN_SAMPLE_PERIOD_NS 10000ull       /* 10 us */

/* Samples the kernel buffers before it signals the thread to process them
 * (the paper processes samples in batches). */
#define CAUSAL_ENV_SAMPLE_BATCH "CAUSAL_SAMPLE_BATCH"
#define CAUSAL_DEFAULT_SAMPLE_BATCH 10u

/* Which sampler: "auto" (perf_event, else the timer fallback), "perf", or
 * "timer" (per-thread CLOCK_THREAD_CPUTIME_ID timer; also what auto falls
 * back to when perf_event_open is denied). */
#define CAUSAL_ENV_SAMPLER "CAUSAL_SAMPLER"
#define CAUSAL_DEFAULT_SAMPLER "auto"

/* Signal used to deliver sample batches / timer ticks to a thread. */
#define CAUSAL_SAMPLE_SIGNAL SIGPROF

/* Bytes of user stack the kernel copies with each perf sample, for unwinding
 * samples that land outside instrumented code (leaf functions without frame
 * pointers). 0 disables the copy. Multiple of 8. */
#define CAUSAL_ENV_STACK_COPY "CAUSAL_STACK_COPY_BYTES"
#define CAUSAL_DEFAULT_STACK_COPY_BYTES 2048u

/* Frames of a callchain searched for an instrumented caller. */
#define CAUSAL_MAX_CALLCHAIN 128u

/* Data pages of each thread's perf ring buffer (power of two). */
#define CAUSAL_PERF_RING_PAGES 16u

/* If set, the runtime also writes every sample's resolved address as
 * "<module path> <link-time address hex> <count>" lines to this file at exit
 * (used by `causal lines --check --samples`). */
#define CAUSAL_ENV_SAMPLE_LOG "CAUSAL_SAMPLE_LOG"

/* "1": the runtime explains what it does on stderr (modules, sampler). */
#define CAUSAL_ENV_VERBOSE "CAUSAL_VERBOSE"

/* Most images (executable + DSOs) the runtime keeps tables for. */
#define CAUSAL_MAX_MODULES 1024u

/* Distinct (module, address) pairs the CAUSAL_SAMPLE_LOG table holds; samples
 * beyond that are counted as overflow (reported at exit). */
#define CAUSAL_SAMPLE_LOG_SLOTS 65536u

/* Thread states the runtime keeps (reused after threads exit). Threads
 * beyond this many live at once are still sampled but not enumerable by the
 * experiment logic (said once on stderr). */
#define CAUSAL_MAX_THREADS 4096u

/* Prefix of every message the runtime prints. */
#define CAUSAL_MESSAGE_PREFIX "causal: "

#endif /* CAUSAL_TUNABLES_H */
