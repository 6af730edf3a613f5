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

/* ---- Causal experiments (docs/runtime.md) -------------------------------- */

/* Source files whose lines may be selected for experiments: one or more
 * fnmatch(3) globs over the file path as the line table stores it, separated
 * by ':'. Default: every file except system ones (CAUSAL_SYSTEM_SOURCE_GLOBS). */
#define CAUSAL_ENV_SCOPE "CAUSAL_SCOPE"
#define CAUSAL_SYSTEM_SOURCE_GLOBS "/usr/include/*:/usr/lib/*:/usr/local/include/*"
/* Images (executable/DSO paths) whose lines may be selected; ':'-separated
 * globs. Default: every instrumented image. */
#define CAUSAL_ENV_BINARY_SCOPE "CAUSAL_BINARY_SCOPE"
/* "FILE:LINE": every experiment selects this line (FILE matches a table path
 * that equals it or ends with "/FILE"). */
#define CAUSAL_ENV_FIXED_LINE "CAUSAL_FIXED_LINE"
/* Percent 0..100: every experiment uses this speedup. */
#define CAUSAL_ENV_FIXED_SPEEDUP "CAUSAL_FIXED_SPEEDUP"
/* "1": one experiment per run that lasts until the program ends; the end of
 * the run is the progress point ("end-to-end", for programs without points). */
#define CAUSAL_ENV_END_TO_END "CAUSAL_END_TO_END"
#define CAUSAL_END_TO_END_POINT "end-to-end"
/* Seed of the experiment RNG (line choice is by samples; this drives the
 * speedup choice). Default: taken from the clock. */
#define CAUSAL_ENV_SEED "CAUSAL_SEED"
/* "0": sample only, run no experiments (no profiler thread, no delays). */
#define CAUSAL_ENV_EXPERIMENTS "CAUSAL_EXPERIMENTS"
/* First (and minimum) experiment length; the tech report's 100 ms. An
 * experiment whose least-visited progress point saw fewer than
 * CAUSAL_MIN_VISITS visits doubles the next one's length (Coz's rule; halved
 * again, not below the minimum, when every point saw more than twice that). */
#define CAUSAL_ENV_EXPERIMENT_NS "CAUSAL_EXPERIMENT_NS"
#define CAUSAL_DEFAULT_EXPERIMENT_NS 100000000ull
#define CAUSAL_MAX_EXPERIMENT_NS 60000000000ull
#define CAUSAL_MIN_VISITS 5u
/* Pause between experiments (the tech report's 10 ms). */
/* At the end of an experiment, the longest wait for running threads to pay
 * the delays they owe, in sample batches (batch x period of CPU time; see
 * Experiment.h). */
#define CAUSAL_DRAIN_BATCHES 3u
#define CAUSAL_DRAIN_POLL_NS 200000ull
/* A thread with a CPU of its own pays a delay by sleeping, and spins (its
 * sampler stopped) the last CAUSAL_PAUSE_SPIN_NS of it: a sleep ends late by
 * its timer slack and the wake-up (median 0.13 ms, 90th percentile 0.2-0.3 ms
 * on the 2-vCPU VMs of docs/benchmarks.md), time no delay accounts for. */
#define CAUSAL_PAUSE_SPIN_NS 300000ull

/* Threads outnumbering CPUs (docs/runtime.md, "When threads outnumber CPUs"):
 * a thread competes for a CPU when it waited for one more than
 * 1/CAUSAL_COMPETING_WAIT_DIVISOR of the time it ran (decayed sums of its
 * schedstat). Its selected samples count as CPU time removed from the shared
 * CPUs, and it pauses by staying runnable (spinning) instead of sleeping. */
#define CAUSAL_COMPETING_WAIT_DIVISOR 20u
/* ... and only while the process's own threads outnumber its CPUs: in the
 * last experiment, threads on a CPU plus threads waiting for one exceeded
 * CAUSAL_OVERSUBSCRIBED_PERCENT % of the CPUs available. Threads that wait
 * because other processes hold the CPUs keep Coz's model. */
#define CAUSAL_OVERSUBSCRIBED_PERCENT 110u
/* "0": Coz's model, as if every thread had a CPU of its own: no shared-CPU
 * accounting, pauses always sleep (for comparisons, and for programs whose
 * threads compete with other processes rather than with each other). */
#define CAUSAL_ENV_SHARED_CPUS "CAUSAL_SHARED_CPUS"
/* A thread reads its schedstat (about 15 us) at most once per this many of
 * its samples, and only when it has a delay to add or to pay. */
#define CAUSAL_SCHEDSTAT_SAMPLES 4u

#define CAUSAL_ENV_COOLOFF_NS "CAUSAL_COOLOFF_NS"
#define CAUSAL_DEFAULT_COOLOFF_NS 10000000ull
/* Speedups are k * 100/CAUSAL_SPEEDUP_DIVISIONS % (5 % steps); a draw r in
 * [0, CAUSAL_ZERO_SPEEDUP_WEIGHT + CAUSAL_SPEEDUP_DIVISIONS] gives 0 % when
 * r <= CAUSAL_ZERO_SPEEDUP_WEIGHT, else (r - weight) steps: Coz's rule,
 * 8/28 of experiments are 0 % baselines. */
#define CAUSAL_SPEEDUP_DIVISIONS 20u
#define CAUSAL_ZERO_SPEEDUP_WEIGHT 7u
/* How often the profiler thread looks at the experiment (and integrates the
 * in-flight count of latency points). */
#define CAUSAL_PROFILER_POLL_NS 1000000ull

/* Distinct progress points (kind, name) and counters merged into one. */
#define CAUSAL_MAX_PROGRESS_POINTS 256u
#define CAUSAL_MAX_COUNTERS_PER_POINT 64u
/* Longest progress point name kept (longer names are truncated). */
#define CAUSAL_MAX_POINT_NAME 256u

/* Prefix of every message the runtime prints. */
#define CAUSAL_MESSAGE_PREFIX "causal: "

#endif /* CAUSAL_TUNABLES_H */
