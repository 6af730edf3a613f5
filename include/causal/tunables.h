//===- causal/tunables.h - Every run-time tunable, its default and its name -===//
//
// One place for the profiler's knobs. The environment variables the runtime
// reads (so a program run directly can be configured, and `causal run` turns
// its options into them) are the rows of causal/settings.def, each named
// here by a constant CAUSAL_ENV_<ID>; the numbers below are their defaults
// and limits, and the compile-time tunables of the runtime. Plain C so the
// runtime can include it.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_TUNABLES_H
#define CAUSAL_TUNABLES_H

/* ---- Sampling ------------------------------------------------------------ */

/* CPU time between two samples of a thread (CAUSAL_SAMPLE_PERIOD_NS). */
#define CAUSAL_DEFAULT_SAMPLE_PERIOD_NS 1000000ull /* 1 ms, as in the paper */
#define CAUSAL_MIN_SAMPLE_PERIOD_NS 10000ull       /* 10 us */

/* Samples per batch (CAUSAL_SAMPLE_BATCH). Every sample is a signal, so
 * batches are counted in the handler; a batch sizes the end-of-experiment
 * drain (CAUSAL_DRAIN_BATCHES). */
#define CAUSAL_DEFAULT_SAMPLE_BATCH 10u
#define CAUSAL_MAX_SAMPLE_BATCH 1000u

/* Room the sample handler wants below its frame on the thread's own stack.
 * A sample taken with less (a program about to overflow its stack) is
 * dropped: the handler with the signal frame took under 4 KB on the
 * development host, so a quarter of the reserve. A stack smaller than twice
 * the reserve keeps half of itself instead. */
#define CAUSAL_SAMPLE_STACK_RESERVE_BYTES 16384u

/* The signal that delivers perf samples and timer ticks to a thread is not
 * SIGPROF (the program's own profiling timer must work as natively): at
 * start the runtime takes the highest-numbered real-time signal, from
 * SIGRTMAX down, whose disposition is the default (no handler, not ignored)
 * and owns it (runtime/Sampler.h, docs/runtime.md "Sampling"). A perf event
 * queues one real-time signal per sample; so that a thread that blocks the
 * signal cannot fill the user's queue of pending signals (RLIMIT_SIGPENDING;
 * past it the kernel sends SIGIO instead, which would end the program), each
 * event stops itself after this many samples without a handler run
 * (PERF_EVENT_IOC_REFRESH) and the handler re-arms it. */
#define CAUSAL_PERF_SIGNALS_QUEUED 8u

/* Bytes of the interrupted stack, above its stack pointer, that libunwind
 * may read to find the instrumented caller of a sample that landed outside
 * instrumented code (a leaf function without frame pointers, a library with
 * large frames); CAUSAL_STACK_COPY_BYTES (the name is from when the kernel
 * copied that much with each perf sample). 0: no libunwind for samples, the
 * frame-pointer chain only. Multiple of 8. */
#define CAUSAL_DEFAULT_STACK_COPY_BYTES 2048u
#define CAUSAL_MAX_STACK_COPY_BYTES 32768u

/* Frames of a callchain searched for an instrumented caller. */
#define CAUSAL_MAX_CALLCHAIN 128u

/* Expirations of the CPU-time timer merged into one signal (si_overrun)
 * count as samples of the same place, at most this many. */
#define CAUSAL_MAX_TIMER_OVERRUN 1000u

/* Descriptor reserve (docs/runtime.md, "Descriptors"). The program keeps
 * every descriptor number below a floor: CAUSAL_FD_PROGRAM_PERCENT % of the
 * soft RLIMIT_NOFILE, at least CAUSAL_FD_PROGRAM_MIN, at most
 * CAUSAL_FD_FLOOR_MAX (the kernel sizes the descriptor table by the highest
 * descriptor). The runtime's perf descriptors live from the floor up, at
 * most (100 - CAUSAL_FD_PROGRAM_PERCENT) % of the limit of them (and at most
 * RLIMIT_SIGPENDING / (2 x CAUSAL_PERF_SIGNALS_QUEUED)); the limit is read
 * again at every thread start. A thread beyond that samples with the
 * CPU-time timer (no descriptor), said once. */
#define CAUSAL_FD_PROGRAM_PERCENT 75u
#define CAUSAL_FD_PROGRAM_MIN 64u
#define CAUSAL_FD_FLOOR_MAX 4096u

/* Sample loss (docs/runtime.md, "Samples expected and arrived"): at exit the
 * runtime compares the samples that arrived with those the sampled threads'
 * CPU time should have given (CPU time / period; user time for perf, which
 * samples user mode only). The kernel tells user from system time by its
 * ticks, so the user time of a thread that spends much of its time in
 * system calls is an estimate; the runtime also gives its spread, one
 * standard error in samples, taking ticks CAUSAL_KERNEL_TICK_MAX_NS apart
 * (HZ = 100, the longest: the widest spread). When fewer than
 * CAUSAL_THIN_PROFILE_PERCENT % of the expected samples, less
 * CAUSAL_THIN_PROFILE_SPREADS spreads, arrived, and at least
 * CAUSAL_THIN_PROFILE_MIN_EXPECTED were expected (fewer is too little CPU
 * time to judge: one period more or less is a large share), it says so once
 * and `causal report` marks the profile as thin (causal_thin_profile). */
#define CAUSAL_THIN_PROFILE_PERCENT 50u
#define CAUSAL_THIN_PROFILE_MIN_EXPECTED 50u
#define CAUSAL_THIN_PROFILE_SPREADS 2u
/* The longest tick also bounds the threads whose split is unknown: an ended
 * perf thread with no system time and less CPU time than this may have been
 * found by no tick, and the kernel then calls all of its time user time; its
 * CPU time counts at the process's user share (that of all its threads'
 * ticks). Otherwise a program of 10,000 short threads, mostly system calls,
 * expected samples that could never arrive. */
#define CAUSAL_KERNEL_TICK_MAX_NS 10000000ull
/* The verdict, the runtime's at exit and `causal report`'s from the profile
 * alike: |expected| samples with a spread of |spread|, |arrived| of them. */
static inline int causal_thin_profile(double expected, double spread, double arrived) {
  double judged = expected - CAUSAL_THIN_PROFILE_SPREADS * spread;
  return expected >= CAUSAL_THIN_PROFILE_MIN_EXPECTED &&
         arrived * 100 < judged * CAUSAL_THIN_PROFILE_PERCENT;
}
/* The runtime says at exit that no sample landed in instrumented code only
 * when at least this many landed outside it (fewer: a run too short to tell:
 * the start-up alone, the loader and the runtime's dlopen of libunwind, took
 * 5 ms of CPU time on a loaded CI machine, and the first period is random). */
#define CAUSAL_MIN_OUTSIDE_SAMPLES_TO_WARN 20u
/* Samples lost while experiments run (docs/runtime.md, "Delays for samples
 * the kernel did not deliver"): every CAUSAL_LOSS_WINDOW_SAMPLES samples, a
 * perf-sampled thread compares the samples that arrived with its user CPU
 * time in that window / period. When the expected count is at least
 * CAUSAL_LOSS_SCALE_FROM_PERCENT % of the arrived one, the delays its samples
 * of the selected line insert are scaled by expected / arrived, at most
 * CAUSAL_LOSS_SCALE_MAX_PERCENT %: a virtual speedup must delay the others by
 * the share of the line's CPU time, not by the share that was sampled. Not
 * when more than CAUSAL_LOSS_MAX_SYSTEM_PERCENT % of the window's CPU time was
 * system time: the user/system split comes from tick counts, too coarse to
 * tell lost samples from time in the kernel then. */
#define CAUSAL_LOSS_WINDOW_SAMPLES 32u
#define CAUSAL_LOSS_SCALE_FROM_PERCENT 110u
#define CAUSAL_LOSS_SCALE_MAX_PERCENT 200u
#define CAUSAL_LOSS_MAX_SYSTEM_PERCENT 20u

/* Threads that switch often (docs/runtime.md, "Threads that switch often"):
 * a perf event that samples the task clock stops and restarts a timer at
 * every context switch of its thread, which costs several microseconds where
 * programming a timer leaves a VM. With --sampler auto, the runtime measures
 * that cost at start-up (CAUSAL_PERF_SWITCH_PROBE_PAIRS disable/enable pairs
 * of a sampling event made for the probe, less as many of a counting event's,
 * both on the main thread), and at the
 * end of each window of CAUSAL_PERF_SWITCH_WINDOW_SAMPLES samples a
 * perf-sampled thread whose switches in the window, at that cost, come to
 * more than CAUSAL_PERF_SWITCH_COST_MAX_PERCENT % of its CPU time moves to
 * the CPU-time timer, which costs nothing at a switch. The window is short:
 * such a thread pays the cost until it moves. */
#define CAUSAL_PERF_SWITCH_PROBE_PAIRS 16u
#define CAUSAL_PERF_SWITCH_WINDOW_SAMPLES 4u
#define CAUSAL_PERF_SWITCH_COST_MAX_PERCENT 5u
/* A thread that moved goes back to perf when, over a window of
 * CAUSAL_PERF_SWITCH_BACK_WINDOW_SAMPLES of its timer samples, its switches
 * would cost perf less than CAUSAL_PERF_SWITCH_BACK_PERCENT % of its CPU time
 * (two fifths of the limit, so that a thread near the limit does not go back and
 * forth); a thread moves at most CAUSAL_PERF_SWITCH_MOVES_MAX times (either
 * way), then stays where it is. */
#define CAUSAL_PERF_SWITCH_BACK_WINDOW_SAMPLES 32u
#define CAUSAL_PERF_SWITCH_BACK_PERCENT 2u
#define CAUSAL_PERF_SWITCH_MOVES_MAX 8u
#define CAUSAL_MAX_PERF_SWITCH_COST_NS 1000000ull

/* What a sample costs, and the experiment's line at a finer period
 * (docs/runtime.md, "What the samples cost, and the experiment's line at a
 * finer period"). A perf sample takes CPU time from its thread: the
 * interrupt, the signal's delivery and return, the handler. The runtime
 * measures it once, on the profiler thread after the run's first experiment
 * (CAUSAL_SAMPLE_COST_PROBE_ROUNDS rounds of a fixed computation of about
 * CAUSAL_SAMPLE_COST_PROBE_ROUND_NS of CPU time, unsampled and then sampled
 * every CAUSAL_SAMPLE_COST_PROBE_PERIOD_NS, pinned to its CPU; the median
 * extra CPU time per signal). During an experiment a thread whose sample
 * falls in the selected line samples every period / k until the experiment
 * ends: k = CAUSAL_LINE_PERIOD_DIVISOR, lowered while period / k is under
 * CAUSAL_LINE_PERIOD_COST_MULTIPLE times a sample's cost. */
#define CAUSAL_SAMPLE_COST_PROBE_ROUNDS 7u
#define CAUSAL_SAMPLE_COST_PROBE_ROUND_NS 3000000ull
#define CAUSAL_SAMPLE_COST_PROBE_PERIOD_NS 200000ull
#define CAUSAL_MAX_SAMPLE_COST_NS 1000000ull
#define CAUSAL_LINE_PERIOD_DIVISOR 4u
#define CAUSAL_LINE_PERIOD_COST_MULTIPLE 6u
#define CAUSAL_LINE_PERIOD_DIVISOR_MAX 64u
#define CAUSAL_MAX_LINE_SAMPLE_PERIOD_NS 1000000000ull

/* Most images (executable + DSOs) the runtime keeps tables for. */
#define CAUSAL_MAX_MODULES 1024u

/* Distinct (module, address) pairs the CAUSAL_SAMPLE_LOG table holds; samples
 * beyond that are counted as overflow (reported at exit). */
#define CAUSAL_SAMPLE_LOG_SLOTS 65536u

/* Thread states the runtime keeps (reused after threads exit). Threads
 * beyond this many live at once are still sampled but not enumerable by the
 * experiment logic (the end-of-experiment drain and the scheduler watch do
 * not see them; nothing is said). */
#define CAUSAL_MAX_THREADS 4096u

/* ---- Causal experiments (docs/runtime.md) -------------------------------- */

/* Source files that are not the program's: lines of these are never selected
 * unless CAUSAL_SCOPE says otherwise (fnmatch(3) globs, ':'-separated, over
 * the file path as the line table stores it). */
#define CAUSAL_SYSTEM_SOURCE_GLOBS "/usr/include/*:/usr/lib/*:/usr/local/include/*"
/* Name of the progress point of CAUSAL_END_TO_END runs. */
#define CAUSAL_END_TO_END_POINT "end-to-end"
/* First (and minimum) experiment length (CAUSAL_EXPERIMENT_NS); the tech
 * report's 100 ms. An experiment whose least-visited progress point saw
 * fewer than CAUSAL_MIN_VISITS visits doubles the next one's length (Coz's
 * rule; halved again, not below the minimum, when every point saw more than
 * twice that), up to CAUSAL_MAX_EXPERIMENT_NS. */
#define CAUSAL_DEFAULT_EXPERIMENT_NS 100000000ull
#define CAUSAL_MIN_EXPERIMENT_NS 1000000ull
#define CAUSAL_MAX_EXPERIMENT_NS 60000000000ull
#define CAUSAL_MIN_VISITS 5u
/* A throughput point's visits are timed during an experiment (a clock read
 * each: docs/report.md, "Throughput from visit times") when the last
 * experiment saw at most this many per second (and in each experiment, at
 * most this many per second of its length): about 50 ns each, so at most
 * ~0.1 % of a CPU; above that rate the count alone is fine-grained. */
#define CAUSAL_MAX_TIMED_VISITS_PER_SECOND 20000.0
/* Pause between experiments (CAUSAL_COOLOFF_NS; the tech report's 10 ms), at
 * most CAUSAL_MAX_EXPERIMENT_NS. */
#define CAUSAL_DEFAULT_COOLOFF_NS 10000000ull
/* At the end of an experiment, the longest wait for running threads to pay
 * the delays they owe, in sample batches (batch x period of CPU time; see
 * Experiment.h), and how often the profiler thread looks meanwhile. A thread
 * whose CPU time stands still has its scheduler state (/proc) read again at
 * most every CAUSAL_DRAIN_STATE_CHECK_NS. */
#define CAUSAL_DRAIN_BATCHES 3u
#define CAUSAL_DRAIN_POLL_NS 200000ull
#define CAUSAL_DRAIN_STATE_CHECK_NS 1000000ull
/* A thread with a CPU of its own pays a delay by sleeping, and spins (its
 * sampler stopped) the last CAUSAL_PAUSE_SPIN_NS of it: a sleep ends late by
 * its timer slack and the wake-up (median 0.13 ms, 90th percentile 0.2-0.3 ms
 * on the 2-vCPU VMs of docs/benchmarks.md), time no delay accounts for. */
#define CAUSAL_PAUSE_SPIN_NS 300000ull
/* A pause that spins because no other thread of the program could use the
 * CPU checks that again this often (a pass over the threads' states). */
#define CAUSAL_PAUSE_IDLE_CHECK_NS 20000ull
/* ... but only while the process's other threads leave this share of a CPU
 * free (on a CPU or waiting for one, over the last experiment, against the
 * CPUs available): else the spin takes a CPU from a thread that would have
 * run on it. On bench/accuracy's heartbeat case (two workers on two CPUs
 * beside a thread that sleeps 1 ms and pays on waking) the heartbeat's spins
 * took a tenth of the workers' CPU time at a speedup of 25 %, and the
 * prediction was +1 % for a true +10 %. A thread with a CPU of its own keeps
 * its spin: sleeping instead cost two threads on two CPUs (bench/oversub's
 * pool N=C) most of their effect at 50 % (+7 to +22 % for +49 %). */
#define CAUSAL_SPIN_FREE_CPU_PERCENT 75u
/* A thread that pays before a blocking call holds the program's signals back
 * meanwhile, to tell whether one came (the call then returns EINTR, as it
 * would have inside the call; docs/runtime.md, "Sleeps and timeouts"), when
 * it owes at least this much: the three system calls cost about 1 us on the
 * VMs we measured, and a signal landing in a shorter pause is that unlikely. */
#define CAUSAL_HOLD_SIGNALS_MIN_OWED_NS 20000ull

/* Experiments on waits (docs/runtime.md, "Experiments on waits"): while one
 * runs, a thread about to block pays what it owes again and again, as long as
 * it owes at least CAUSAL_WAIT_TARGET_PAY_MIN_NS and at most this many times:
 * the selected wait goes on raising the global count while the thread pays,
 * and a thread that blocks in debt (at a barrier, waiting for the waiting
 * thread) would carry the debt past the point where the others catch up with
 * it. At speedup s < 1 the debt shrinks by s per round; at 1 it lasts as
 * long as the selected wait, and the experiment's end ends it too. */
#define CAUSAL_WAIT_TARGET_PAY_ROUNDS 10000
/* At most this share of a run's free experiments selects wait targets: a
 * thread that sleeps nearly all the time (a background maintainer) has as
 * much blocked time as the whole run, and drawn by time alone its sleep took
 * 728 of memcached's 813 experiments, leaving two lines of code with a curve.
 * Over the share, a wait target drawn is put back and the draw repeated. */
#define CAUSAL_WAIT_TARGET_MAX_SHARE_PERCENT 50
/* ... unless this many wait targets in a row were put back for one choice
 * (a program that hardly runs on a CPU has little else to draw). */
#define CAUSAL_WAIT_TARGET_MAX_PUT_BACK 20
#define CAUSAL_WAIT_TARGET_PAY_MIN_NS 10000ull

/* Threads outnumbering CPUs (docs/runtime.md, "When threads outnumber CPUs"):
 * a thread competes for a CPU when it waited for one more than
 * 1/CAUSAL_COMPETING_WAIT_DIVISOR of the time it ran (decayed sums of its
 * schedstat). Its selected samples count as CPU time removed from the shared
 * CPUs, and it pauses by staying runnable (spinning) instead of sleeping. */
#define CAUSAL_COMPETING_WAIT_DIVISOR 20u
/* ... and only while the process's own threads outnumber its CPUs: in the
 * last experiment, threads on a CPU plus threads waiting for one exceeded
 * CAUSAL_OVERSUBSCRIBED_PERCENT % of the CPUs available (before the first
 * experiment: over CAUSAL_SATURATION_PROBE_NS). Threads that wait
 * because other processes hold the CPUs keep Coz's model (and so does every
 * thread with CAUSAL_SHARED_CPUS=0). */
#define CAUSAL_OVERSUBSCRIBED_PERCENT 110u
/* Threads that wait because other processes hold the CPUs (the process does
 * not outnumber its CPUs, but its threads waited for one more than
 * 1/CAUSAL_COMPETING_WAIT_DIVISOR of the time they ran, in the last
 * experiment): a selected sample is CPU time, and at a CPU share f the line
 * takes 1/f of it in wall time, which is what its speedup saves. Its delay
 * is scaled by (CPU + run-queue time) / CPU time of the sampling thread over
 * the last experiment, at most CAUSAL_CPU_SHARE_SCALE_MAX_PERCENT %
 * (docs/runtime.md, "Threads that share their CPUs with other processes"). */
#define CAUSAL_CPU_SHARE_SCALE_MAX_PERCENT 800u
/* Before a run's first experiment the profiler thread watches the process
 * this long to tell whether its threads outnumber its CPUs (the first
 * experiment has no last experiment to go by). */
#define CAUSAL_SATURATION_PROBE_NS 20000000ull
/* ... which finds that other processes hold the CPUs only when the process's
 * threads waited for a CPU at least this long in all: one preemption (1-2.5
 * ms on the test VMs) is a twentieth of the probe, and alone it made the
 * first experiment's pauses sleep where they should have spun (1 probe in
 * 80; 1 in 15 under ASan). Real sharing waits far longer: a thread beside a
 * busy process waits about half the probe. */
#define CAUSAL_SATURATION_PROBE_MIN_WAIT_NS 4000000ull
/* A thread reads its schedstat (about 15 us) at most once per this many of
 * its samples, and only when it has a delay to add or to pay while the
 * process's threads outnumber its CPUs. */
#define CAUSAL_SCHEDSTAT_SAMPLES 4u

/* Speedups are k * 100/CAUSAL_SPEEDUP_DIVISIONS % (5 % steps); a draw r in
 * [0, CAUSAL_ZERO_SPEEDUP_WEIGHT + CAUSAL_SPEEDUP_DIVISIONS] gives 0 % when
 * r <= CAUSAL_ZERO_SPEEDUP_WEIGHT, else (r - weight) steps: Coz's rule,
 * 8/28 of experiments are 0 % baselines. */
#define CAUSAL_SPEEDUP_DIVISIONS 20u
#define CAUSAL_ZERO_SPEEDUP_WEIGHT 7u
/* How often the profiler thread looks at the experiment (and integrates the
 * in-flight count of latency points). */
#define CAUSAL_PROFILER_POLL_NS 1000000ull
/* The profiler thread's wait while it has nothing to measure (no progress
 * point yet, or only bounded profiling to watch). */
#define CAUSAL_PROFILER_IDLE_NS 10000000ull
/* Stack of the profiler thread. */
#define CAUSAL_PROFILER_STACK_BYTES (256u * 1024u)
/* At exit, the longest wait for the profiler thread to record the running
 * experiment and stop. */
#define CAUSAL_PROFILER_STOP_WAIT_NS 2000000000ull
/* The longest grace period (runtime/Support.h, waitForReaders): before an
 * image's line table or progress counters go (dlclose, exit) and before a
 * fork, the runtime waits for the signal handlers and path entries still
 * reading them; one that a program's siglongjmp left never ends, and after
 * this long the runtime goes ahead without it and says so. A handler takes
 * microseconds. */
#define CAUSAL_GRACE_PERIOD_WAIT_NS 1000000000ull
/* The periodic flush (CAUSAL_FLUSH_SECONDS): by default the part of the
 * profile gained since the last one is appended every 5 s, so that a process
 * killed without a chance to write (SIGKILL) loses at most the last ~5 s; 0
 * turns it off; at most a day. The last block, and a fatal signal, wait up
 * to CAUSAL_PART_WAIT_NS for a part another thread is writing; a fatal
 * signal's write of PROFILE.paths as long for another thread's write of it
 * (runtime/Paths.cpp, lockPathsWithin). */
#define CAUSAL_DEFAULT_FLUSH_SECONDS 5u
#define CAUSAL_MAX_FLUSH_SECONDS 86400u
#define CAUSAL_PART_WAIT_NS 2000000000ull
/* Bounded profiling (CAUSAL_DURATION_SECONDS, CAUSAL_STOP_FILE): the
 * longest duration accepted, and how often the profiler thread looks for
 * the stop file (one access() call). */
#define CAUSAL_MAX_DURATION_SECONDS 31536000u
#define CAUSAL_STOP_FILE_POLL_NS 100000000ull
/* With CAUSAL_VERBOSE, a fixed line (CAUSAL_FIXED_LINE) not found in any
 * image after this long is said once. */
#define CAUSAL_FIXED_LINE_MISSING_NS 1000000000ull

/* Distinct progress points (kind, name) and counters merged into one. */
#define CAUSAL_MAX_PROGRESS_POINTS 256u
#define CAUSAL_MAX_COUNTERS_PER_POINT 64u
/* Size of a progress point's name, with its NUL. A longer name is shortened
 * visibly and kept distinct (runtime/Progress.cpp, storedPointName): its
 * first bytes, then "...#" and 16 hex digits of a hash of the whole name. */
#define CAUSAL_MAX_POINT_NAME 1024u

/* The runtime's spin lock (runtime/SpinLock.h) yields its CPU after this
 * many failed attempts in a row, each followed by a pause instruction. */
#define CAUSAL_SPIN_PAUSES 64u

/* ---- Waits (`causal run --waits`, runtime/Waits.cpp, docs/waits.md) ------
 * Episodes each thread buffers (48 bytes each, allocated when the thread
 * starts); a full buffer is written out by the thread itself. */
#define CAUSAL_WAITS_BUFFER_EPISODES 4096u
/* Blocking calls that return sooner than this are not recorded: an
 * uncontended lock, a read served from the page cache. */
#define CAUSAL_WAITS_MIN_EPISODE_NS 1000ull

/* The waits clock (runtime/FastClock.cpp, docs/runtime.md "The waits
 * clock"): CLOCK_MONOTONIC computed from the TSC. Its anchor (a TSC value,
 * its time, the nanoseconds per tick) is re-taken against clock_gettime
 * every CAUSAL_FAST_CLOCK_ANCHOR_NS (by the reader that finds it older, or
 * the profiler thread's poll step); the rate is steered toward
 * clock_gettime by at most CAUSAL_FAST_CLOCK_MAX_STEER_PPM (0.1 %: 50 us
 * made up per period, twice the largest slew NTP gives the kernel's clock,
 * 500 ppm) for one period, so the clock stays continuous; a drift beyond
 * CAUSAL_FAST_CLOCK_STEP_NS (the TSC or the clock jumped: a VM paused or
 * migrated) steps it to clock_gettime. The first calibration measures the
 * rate over CAUSAL_FAST_CLOCK_CALIBRATION_NS (at start-up with --waits;
 * then over the whole run). */
#define CAUSAL_FAST_CLOCK_ANCHOR_NS 50000000ull     /* 50 ms */
#define CAUSAL_FAST_CLOCK_MAX_STEER_PPM 1000u       /* 0.1 % */
#define CAUSAL_FAST_CLOCK_STEP_NS 100000ull         /* 100 us */
#define CAUSAL_FAST_CLOCK_CALIBRATION_NS 1000000ull /* 1 ms */

/* Slots of the table of recent waking calls, keyed by object (a power of
 * two; two objects that share a slot overwrite each other's wakers; each
 * slot keeps an object's last runtime/WakerTable.h kWakeHistory wakes). */
#define CAUSAL_WAITS_WAKER_SLOTS 4096u
/* Descriptor numbers below this have a generation (4 bytes each), counted up
 * when the number is closed, so that a reused number gets new waker keys
 * (runtime/hooks/Descriptors.cpp). */
#define CAUSAL_WAITS_TRACKED_FDS 16384u
/* Distinct texts (lines, thread names) one run can define (a power of two);
 * beyond, records name no text (id 0). */
#define CAUSAL_WAITS_STRING_SLOTS 16384u

/* ---- Call paths (`causal run --paths`, runtime/Paths.cpp, docs/paths.md) --
 * Return addresses a path keeps at most (the chosen function's own entry
 * included); a deeper stack keeps its innermost ones and is marked
 * truncated (paths_format.h kPathTruncated). */
#define CAUSAL_PATHS_MAX_DEPTH 64u
/* Entries of chosen functions active at once in one thread (nested chosen
 * functions; recursion takes none); a deeper entry is not recorded and is
 * counted as dropped. At most 255 (the token holds the slot in a byte). */
#define CAUSAL_PATHS_ACTIVE_DEPTH 128u
/* Distinct paths one thread records (its table, mmap'd at the thread's first
 * entry, 96 bytes a path) and the return addresses they hold together (8
 * bytes each); an entry on a new path beyond either is counted as dropped. */
#define CAUSAL_PATHS_THREAD_PATHS 4096u
#define CAUSAL_PATHS_THREAD_FRAMES 65536u
/* Distinct paths of the whole process: the table that ended threads' paths
 * are merged into, and the writer's (each of this many paths, and 16 times
 * as many return addresses); beyond, a path is left out of the file. */
#define CAUSAL_PATHS_PROCESS_PATHS 65536u
/* Chosen functions the process may register (distinct symbols), and the
 * names or globs CAUSAL_PATHS may list. */
#define CAUSAL_PATHS_MAX_FUNCTIONS 4096u
#define CAUSAL_PATHS_MAX_PATTERNS 64u
/* Return addresses at a stack's base (the code that calls main, a thread's
 * start) found to have no instrumented frame above them: the walk stops there
 * without asking libunwind again. */
#define CAUSAL_PATHS_BASE_ADDRESSES 256u
/* Return addresses a thread remembers the kind of (in instrumented code, a
 * stack's base, elsewhere) so that a walk through them again does not look
 * the modules and bases up (a power of two; 16 bytes each, in the thread's
 * path memory). Forgotten when the modules or the bases change. */
#define CAUSAL_PATHS_RETURN_KINDS 512u
/* Call sites a thread remembers the last path of, which the next entry from
 * the site checks against the stack instead of walking it anew (a power of
 * two; 24 bytes each, in the thread's path memory). */
#define CAUSAL_PATHS_SITE_MEMOS 64u
/* --paths times a path's calls (wall and CPU time: a clock read at the entry
 * and one at the exit, 30-60 ns each on VMs) in each thread exactly for its
 * first
 * CAUSAL_PATHS_EXACT_TIMED_CALLS calls, then one call in
 * CAUSAL_PATHS_TIME_ONE_IN (--paths-time-one-in), chosen at random, whose
 * mean stands for the calls after the first that were not timed: an
 * unbiased estimate (docs/paths.md, "Sampled times").
 * Calls and samples stay exact. */
#define CAUSAL_PATHS_EXACT_TIMED_CALLS 64u
#define CAUSAL_DEFAULT_PATHS_TIME_ONE_IN 16u
#define CAUSAL_MAX_PATHS_TIME_ONE_IN 65536u
/* --paths-walk-one-in K (docs/paths.md, "Sampled walks"): each thread walks
 * the stack at every entry of a function up to its
 * CAUSAL_PATHS_EXACT_WALKS-th, then after gaps drawn from 1..2K-1. */
#define CAUSAL_PATHS_EXACT_WALKS 64u
#define CAUSAL_MAX_PATHS_WALK_ONE_IN 65536u
/* --paths-walk-one-in 0 (auto, the default): every CAUSAL_PATHS_EXACT_WALKS
 * walks of a function in a thread, the mean gap becomes the one that keeps
 * its walks, costed at CAUSAL_PATHS_WALK_COST_NS each, under
 * CAUSAL_PATHS_WALK_BUDGET_PERMILLE of that thread's wall time: a function
 * entered less than 10,000 times a second in a thread has every entry
 * walked. The cost is what a walked entry cost SQLite's inserting threads
 * in wall time (docs/benchmarks.md, "Sampled walks": 0.7-2 us, where an
 * entry and exit at depth 10 alone take 60-216 ns of CPU): the locks a
 * walked entry holds longer hold up the other threads. */
#define CAUSAL_PATHS_WALK_COST_NS 1000u
#define CAUSAL_PATHS_WALK_BUDGET_PERMILLE 10u
/* ... and only after the function's first CAUSAL_PATHS_AUTO_EXACT_WALKS
 * entries in the thread, all walked (about 1 ms of walks): a function with
 * fewer entries than that in each thread has exact paths however often it
 * is entered. */
#define CAUSAL_PATHS_AUTO_EXACT_WALKS 1024u
/* Frames of call paths in images unregistered before the sidecar is written
 * (dlclose; the executable at exit) that are kept as text (a power of two;
 * half of it is used; about 96 bytes of text each). */
#define CAUSAL_PATHS_RETAINED_FRAMES 16384u
/* Distinct texts (function names, FILE:LINE) one write of PROFILE.paths can
 * define (a power of two; half of it is used); beyond, frames name no text. */
#define CAUSAL_PATHS_STRING_SLOTS 65536u
/* Images whose chosen functions' descriptors live control (`causal paths
 * enable|disable --pid`, runtime/PathsControl.cpp) can reach; the descriptors
 * of later images keep the state their registration gave them. */
#define CAUSAL_PATHS_DESCRIPTOR_RANGES 256u
/* Calling contexts experiments can tell apart (--path-experiments: distinct
 * callers of chosen functions; a power of two, half of it used, at most
 * 32768: a context id has 16 bits), and the bytes of a caller's name kept
 * for the profile (longer names are cut there). */
#define CAUSAL_PATHS_CONTEXTS 2048u
#define CAUSAL_PATHS_CONTEXT_NAME_BYTES 256u
/* Distinct (line, calling context) pairs whose samples the profile counts
 * apart (a power of two, half of it used; 24 bytes each, static). */
#define CAUSAL_PATHS_CONTEXT_SAMPLES 4096u

/* Prefix of every message the runtime prints. */
#define CAUSAL_MESSAGE_PREFIX "causal: "

/* ---- Waits analysis (tools/profile/WaitGraph.h, docs/waits.md) ------------ */

/* A sidecar run belongs to a profile run when its CLOCK_REALTIME start lies
 * within this of the profile run's `startup time=`: both are read at the
 * runtime's start-up, microseconds apart; 2 s leaves room for a slow start. */
#define CAUSAL_WAITS_RUN_MATCH_SLACK_NS 2000000000ull

/* A false wake-up in a format 1 sidecar (whose recorder did not mark
 * re-waits, waits_format.h's kEpisodeRewait): a thread woken from a condition
 * variable or futex that waits again on the same object within this gap (it
 * found its condition false and made no progress). Re-checking a predicate
 * and re-entering the wait takes a few microseconds when the thread is not
 * preempted; real work between two waits takes longer. */
#define CAUSAL_WAITS_FALSE_WAKEUP_GAP_NS 20000ull /* 20 us */

/* A background thread (wPerf section 3.3): sleeps (timer waits) take at least
 * this share of its life and its CPU time at most the next one. */
#define CAUSAL_WAITS_BACKGROUND_SLEEP_SHARE 0.5
#define CAUSAL_WAITS_BACKGROUND_CPU_SHARE 0.1

/* Cascaded re-distribution: nesting depth and total steps at most (a bound
 * on adversarial input; real chains are a few threads deep). */
#define CAUSAL_WAITS_CASCADE_MAX_DEPTH 32u
#define CAUSAL_WAITS_CASCADE_MAX_STEPS 50000000ull

/* Lines kept per edge (where the waiter blocked, where the waker woke it). */
#define CAUSAL_WAITS_TOP_LINES 5u

/* ---- The environment variables: CAUSAL_ENV_OUTPUT = "CAUSAL_OUTPUT", ... --
 * one per row of causal/settings.def, which gives each its kind, default,
 * `causal run` option and help. */
#define CAUSAL_SETTING(ID, VARIABLE, ...) static const char CAUSAL_ENV_##ID[] = VARIABLE;
#include "causal/settings.def"
#undef CAUSAL_SETTING

#endif /* CAUSAL_TUNABLES_H */
