//===- causal/abi.h - Contract between compiler, linker step and runtime --===//
//
// The ONE place that defines what the compiler side (pass + front-end plugin),
// the link step (causal-ld) and the runtime (libcausal_rt) agree on: section
// names, record layouts, hook symbols and format versions, with its table of
// the hooked functions beside it (causal/hooks.def, "Hooks" below). Nothing
// else hard-codes any of these. Plain C, usable from C and C++, no libc calls, so
// the runtime can use the inline lookup below inside a signal handler.
//
// How a module (executable or DSO) is described at run time:
//
//   * causal-ld links the program, reads the DWARF line table of the linked
//     image (the compiler emitted line-tables-only DWARF), and stores an exact
//     address -> file:line table in the allocated section CAUSAL_LINETAB_SECTION
//     of the same image (a placeholder of the right size is linked in, then
//     patched in place, so the table describes the final layout).
//   * The pass emits into every module a constructor (one per linked image,
//     COMDAT) that calls CAUSAL_REGISTER_MODULE_FN with the bounds of that
//     section (the linker-defined __start_/__stop_ symbols, hidden and weak so
//     an image linked without causal-ld registers an empty table).
//
// Versioning: the table starts with a magic and a version; a change of layout
// bumps CAUSAL_LINETAB_VERSION. Readers accept the current version and
// version 1 (the same layout without the function names: a shorter header,
// no functions[] array), so binaries linked by an older causal-ld still
// profile; any other version is rejected.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_ABI_H
#define CAUSAL_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- The line table ---------------------------------------------------- */

/* ELF section holding the table. A C identifier, so the linker defines
 * __start_causal_lines / __stop_causal_lines. */
#define CAUSAL_LINETAB_SECTION "causal_lines"
#define CAUSAL_LINETAB_START_SYMBOL "__start_causal_lines"
#define CAUSAL_LINETAB_STOP_SYMBOL "__stop_causal_lines"
/* Section flags of the placeholder causal-ld links in: allocated, read-only
 * data, retained ("aR": --gc-sections keeps it). */
#define CAUSAL_LINETAB_ALIGN 8

#define CAUSAL_LINETAB_MAGIC "CAUSALLT" /* 8 bytes, no terminator stored */
#define CAUSAL_LINETAB_MAGIC_SIZE 8
#define CAUSAL_LINETAB_VERSION 2u
/* Version 1: no function names; its header ends before functions_offset. */
#define CAUSAL_LINETAB_VERSION_1 1u
#define CAUSAL_LINETAB_V1_HEADER_SIZE 72u

/* Row.line_index value for addresses that have no source line (gaps between
 * sequences, padding, line 0). */
#define CAUSAL_NO_LINE 0xffffffffu
/* functions[] value of a line whose function is unknown. */
#define CAUSAL_NO_FUNCTION 0xffffffffu
/* Function names longer than this (demangled C++ templates) are cut there
 * and end with "..." (bytes, without the terminator). */
#define CAUSAL_LINETAB_MAX_FUNCTION_NAME 240u

/* Layout (all offsets from the start of the header, all little endian, all
 * arrays 4-byte aligned):
 *
 *   header
 *   rows[num_rows]     sorted by offset; row i covers [rows[i].offset,
 *                      rows[i+1].offset); the last row is a terminator with
 *                      line_index == CAUSAL_NO_LINE
 *   lines[num_lines]   distinct (file, line) pairs; the unit samples are
 *                      counted in and experiments select
 *   files[num_files]   offset of each file's NUL-terminated path in strings
 *   functions[num_lines]  (version 2) offset in strings of the name of
 *                      line i's function (the innermost, inlined or not,
 *                      whose code the line's first address is in: an
 *                      inlined function's DWARF name, else the symbol's,
 *                      demangled), or CAUSAL_NO_FUNCTION; names hold no
 *                      control characters
 *   strings[strings_size]
 *   zero padding up to total_size
 */
struct causal_linetab_header {
  char magic[CAUSAL_LINETAB_MAGIC_SIZE];
  uint32_t version;
  uint32_t header_size; /* sizeof(struct causal_linetab_header) */
  uint64_t table_vaddr; /* link-time address of this header; the load bias
                           of the image is (runtime address - table_vaddr) */
  uint64_t code_vaddr;  /* link-time address that row offsets count from */
  uint32_t num_rows;
  uint32_t num_lines;
  uint32_t num_files;
  uint32_t strings_size;
  uint32_t rows_offset;
  uint32_t lines_offset;
  uint32_t files_offset;
  uint32_t strings_offset;
  uint32_t total_size; /* bytes used, <= section size */
  uint32_t flags;      /* reserved, 0 */
  /* Version 2 (absent from version 1's CAUSAL_LINETAB_V1_HEADER_SIZE-byte
   * header): */
  uint32_t functions_offset; /* functions[num_lines] */
  uint32_t reserved;         /* 0 */
};

struct causal_linetab_row {
  uint32_t offset;     /* address - code_vaddr */
  uint32_t line_index; /* index into lines[], or CAUSAL_NO_LINE */
};

struct causal_linetab_line {
  uint32_t file_index; /* index into files[] */
  uint32_t line;       /* 1-based source line */
};

/* ---- Module registration (emitted by the pass, served by the runtime) --- */

/* void CAUSAL_REGISTER_MODULE_FN(const void *start, const void *stop);
 * Called by every instrumented image's constructor with the bounds of its
 * CAUSAL_LINETAB_SECTION (both null if the image has none). Idempotent. */
#define CAUSAL_REGISTER_MODULE_FN "__causal_register_module"
/* void CAUSAL_UNREGISTER_MODULE_FN(const void *start);
 * Called by the image's destructor (dlclose). */
#define CAUSAL_UNREGISTER_MODULE_FN "__causal_unregister_module"
/* Names of what the pass creates in each module. */
#define CAUSAL_MODULE_CTOR_NAME "causal.module_ctor"
#define CAUSAL_MODULE_DTOR_NAME "causal.module_dtor"
/* Constructor priority: after the C++ runtime's (0-100 reserved), before
 * ordinary user constructors (65535), so user constructors are profiled. */
#define CAUSAL_MODULE_CTOR_PRIORITY 101

void __causal_register_module(const void *start, const void *stop);
void __causal_unregister_module(const void *start);

/* ---- Progress points ---------------------------------------------------- */

/* A progress point is a counter in the image that instrumented code
 * increments inline (a relaxed atomic add: no call, no run-time lookup). The
 * pass creates one per (kind, name) and image: a linkonce_odr hidden global
 * named CAUSAL_COUNTER_SYMBOL_PREFIX "<kind>.<name>", in a COMDAT of its own
 * name, in section CAUSAL_COUNTER_SECTION, 8-byte aligned. The runtime finds
 * them through the section bounds and merges same-named counters of several
 * images. */
#define CAUSAL_COUNTER_SECTION "causal_counters"
#define CAUSAL_COUNTER_START_SYMBOL "__start_causal_counters"
#define CAUSAL_COUNTER_STOP_SYMBOL "__stop_causal_counters"
#define CAUSAL_COUNTER_SYMBOL_PREFIX "causal.counter."

/* Kinds, numbered as Coz's coz.h numbers them. */
#define CAUSAL_COUNTER_THROUGHPUT 1u
#define CAUSAL_COUNTER_BEGIN 2u
#define CAUSAL_COUNTER_END 3u

struct causal_counter {
  uint64_t count;   /* visits */
  const char *name; /* NUL-terminated progress point name */
  uint32_t kind;    /* CAUSAL_COUNTER_* */
  uint32_t flags;   /* 0 in the image; once registered, the runtime's point
                       index + 1, bit 31 set for a throughput point
                       (CAUSAL_PROGRESS_VISIT_FN) */
};

/* void CAUSAL_REGISTER_COUNTERS_FN(struct causal_counter *start,
 *                                  struct causal_counter *stop);
 * Called by the module constructor after CAUSAL_REGISTER_MODULE_FN, with the
 * bounds of the image's CAUSAL_COUNTER_SECTION (extern_weak: only if the
 * runtime defines it). Idempotent. Every module's constructor makes this
 * call (the constructor is one COMDAT per image, so all copies must be the
 * same): both bounds are null, or equal, when the image has no counters. */
#define CAUSAL_REGISTER_COUNTERS_FN "__causal_register_counters"
void __causal_register_counters(struct causal_counter *start, struct causal_counter *stop);

/* Function-named progress points the build asked for (-fcausal-progress-fn),
 * so that the link step can name those that matched no function: a module
 * compiled with such options holds, in section
 * CAUSAL_PROGRESS_REQUESTS_SECTION (read-only, byte-aligned, kept by
 * llvm.used), one text record per option: '1' if the option matched a
 * function defined in that module, else '0', a tab, the option as written,
 * a newline. causal-ld unions the records of all modules and warns about the
 * options that no module matched. Nothing reads the section at run time. */
#define CAUSAL_PROGRESS_REQUESTS_SECTION "causal_progress_requests"

/* What the macros of causal/causal.h expand to: a call, guarded by a null
 * check of this weak function, that the pass replaces with the inline
 * increment of counter (kind, name). In a build without the pass the weak
 * symbol is null and nothing is called. `name` must be a string literal.
 * Signature (causal/causal.h declares it weak; nothing may define it):
 *   void CAUSAL_PROGRESS_MARKER_FN(uint32_t kind, const char *name); */
#define CAUSAL_PROGRESS_MARKER_FN "__causal_progress_marker"

/* Visits during experiments. A thread pays the delays it owes before it is
 * counted at a progress point, so that a latency window (begin .. end) holds
 * only the delays inserted while it was open, not debts run up before it
 * opened; and a latency visit records its time in the experiment's virtual
 * time (real time minus the delays inserted since the experiment began), from
 * which the runtime computes the requests' in-flight area exactly
 * (docs/report.md, "Latency"), as does a visit of a throughput point that is
 * visited rarely enough, from which the analysis estimates its period without
 * a count's granularity ("Throughput from visit times"). Before every
 * increment it emits, the pass
 * emits
 *
 *   flag = &CAUSAL_DELAYS_ACTIVE_VAR != null ? &CAUSAL_DELAYS_ACTIVE_VAR
 *                                            : &(a zero of the module);
 *   if (relaxed atomic load of *flag != 0)     (branch weighted unlikely)
 *     CAUSAL_PROGRESS_VISIT_FN(counter);
 *
 * where counter is the address of the counter about to be incremented (a
 * causal_counter of the image, or the coz_counter_t of a coz.h point). Both
 * symbols are extern_weak: without the runtime the flag reads as 0 and
 * nothing is called. The runtime keeps the flag nonzero exactly while an
 * experiment runs (outside one nobody owes anything and nothing is
 * measured). The function pays what the calling thread owes, if anything,
 * and records the visit's time; it may be called from a signal handler and
 * with a counter the runtime does not know (then it only pays). To find a
 * causal_counter's point without a search, the runtime stores the point's
 * index + 1 (bit 31 set for a throughput point) in its flags field when it
 * registers it. */
#define CAUSAL_DELAYS_ACTIVE_VAR "__causal_delays_active"
#define CAUSAL_PROGRESS_VISIT_FN "__causal_progress_visit"
extern uint32_t __causal_delays_active;
void __causal_progress_visit(void *counter);

/* ---- Call paths of chosen functions (iPath) ------------------------------ */

/* A function chosen at build time (-fcausal-paths=NAME,..., -fcausal-paths-file=
 * FILE, [[causal::path]] / CAUSAL_PATH of causal/causal.h) gets one descriptor
 * per image: a linkonce_odr hidden global named CAUSAL_PATH_FN_SYMBOL_PREFIX
 * "<symbol>", in a COMDAT of its own name, in the writable section
 * CAUSAL_PATH_FN_SECTION, 8-byte aligned (so the copies an inline function
 * gets in several modules are one per image). The module constructor passes
 * the section's bounds to CAUSAL_REGISTER_PATH_FNS_FN (extern_weak, called
 * only if defined; both bounds null or equal when the image has none). */
#define CAUSAL_PATH_FN_SECTION "causal_path_fns"
#define CAUSAL_PATH_FN_START_SYMBOL "__start_causal_path_fns"
#define CAUSAL_PATH_FN_STOP_SYMBOL "__stop_causal_path_fns"
#define CAUSAL_PATH_FN_SYMBOL_PREFIX "causal.path_fn."

struct causal_path_fn {
  uint8_t enabled;     /* 0 in the image. Only the runtime writes it (relaxed
                          atomic stores); instrumented code reads it at every
                          entry of the function. Nonzero: collect paths;
                          CAUSAL_PATH_FN_COUNTED: through the countdowns
                          (below), any other nonzero value: call at every
                          entry. */
  uint8_t reserved[3]; /* 0 */
  uint32_t id;         /* 0 in the image; once registered, the runtime's
                          index of the function + 1 (same-named descriptors
                          of several images share one id) */
  const char *symbol;  /* NUL-terminated linkage (mangled) name */
  const char *name;    /* NUL-terminated demangled name, for people */
};

/* void CAUSAL_REGISTER_PATH_FNS_FN(struct causal_path_fn *start,
 *                                  struct causal_path_fn *stop);
 * Called by the module constructor after CAUSAL_REGISTER_COUNTERS_FN.
 * Idempotent. The runtime enables the descriptors its settings choose. */
#define CAUSAL_REGISTER_PATH_FNS_FN "__causal_register_path_fns"
void __causal_register_path_fns(struct causal_path_fn *start, struct causal_path_fn *stop);

/* Each thread's walk countdowns: null until the runtime gives the thread
 * an array of CAUSAL_PATHS_MAX_FUNCTIONS + 1 int32_t, indexed by a
 * descriptor's id. Compiled code decrements the function's countdown at
 * each entry and calls the runtime only when it goes below zero, so that
 * with --paths-walk-one-in K the runtime sees about one entry in K and the
 * others cost a decrement (docs/paths.md, "Sampled walks"). A thread-local
 * defined by the runtime; instrumented code declares it extern_weak with the
 * initial-exec model and reads it only when fn.enabled is
 * CAUSAL_PATH_FN_COUNTED, which only a runtime that defines it stores (an
 * undefined weak thread-local does not read as null: its offset is 0).
 *   extern __thread int32_t *CAUSAL_PATH_COUNTDOWNS_SYMBOL; */
#define CAUSAL_PATH_COUNTDOWNS_SYMBOL "__causal_path_countdowns"
#define CAUSAL_PATH_FN_COUNTED 2

/* What the pass emits in a chosen function F (before inlining, so every
 * inlined copy carries it):
 *
 *   entry:  token = 0;
 *           if (relaxed atomic load of fn.enabled != 0)   (weighted unlikely)
 *             token = causal.path.count(&fn, inlined_at);
 *   at every way out (each return; with C++ exceptions, a cleanup landing pad
 *   that then resumes unwinding, as the sanitizers' EscapeEnumerator makes):
 *           if (token != 0) CAUSAL_PATH_EXIT_FN(&fn, token);
 *
 * and, once per module, the counter (linkonce_odr hidden, noinline, cold;
 * out of F so that F stays as small for the inliner):
 *
 *   uint32_t causal.path.count(struct causal_path_fn *fn, const char *inlined_at) {
 *     if (relaxed atomic load of fn->enabled == CAUSAL_PATH_FN_COUNTED) {
 *       int32_t *c = CAUSAL_PATH_COUNTDOWNS_SYMBOL;       (this thread's)
 *       if (c) {
 *         int32_t *slot = c + relaxed atomic load of fn->id;
 *         *slot = *slot - 1;                 (relaxed atomic load and store)
 *         if (*slot >= 0) return 0;
 *       }
 *     }
 *     return CAUSAL_PATH_ENTER_FN(fn, inlined_at);         (a musttail call)
 *   }
 *
 * The musttail call leaves no frame between F and the runtime: it finds
 * the return address into F and F's frame as if F had called it. Both
 * runtime functions are extern_weak: an image linked without the runtime
 * never sees enabled != 0, so it never calls them. inlined_at is null when the pass
 * places the call; at OptimizerLast, a call whose debug location says it was
 * inlined gets a private constant string naming the frames the inlining
 * removed, innermost first, one per line: "FUNCTION\tFILE:LINE\n" (the
 * function that inlined the call and the line of the call it inlined; then
 * the function that inlined that one, and so on; FUNCTION demangled, no tabs
 * or newlines in it). A frame-pointer walk sees only physical frames, so
 * without it the caller of an inlined F would be missing from its paths.
 *
 * CAUSAL_PATH_ENTER_FN returns a nonzero token when it records the entry (0:
 * not recorded: the runtime is off, full, or F was disabled), and finds the
 * calling context itself: its return address is in F (or in the code F was
 * inlined into), and the frame-pointer chain above it holds F's callers.
 * It stands for the entries that the countdown let pass since F's last
 * entry it saw in the thread, and arms the countdown again. CAUSAL_PATH_EXIT_FN ends the entry of
 * that token and any entries above it that were left without an exit (longjmp). Neither may be
 * called from a signal handler that interrupted the runtime; both are safe in any thread, at any
 * time, including before the runtime started (then they return 0 / do nothing). uint32_t
 * CAUSAL_PATH_ENTER_FN(struct causal_path_fn *fn, const char *inlined_at); void
 * CAUSAL_PATH_EXIT_FN(struct causal_path_fn *fn, uint32_t token); */
#define CAUSAL_PATH_ENTER_FN "__causal_path_enter"
#define CAUSAL_PATH_EXIT_FN "__causal_path_exit"
uint32_t __causal_path_enter(struct causal_path_fn *fn, const char *inlined_at);
void __causal_path_exit(struct causal_path_fn *fn, uint32_t token);

/* Functions the build asked for by name (-fcausal-paths, -fcausal-paths-file),
 * so that the link step can name those that matched no function: the same
 * text records as CAUSAL_PROGRESS_REQUESTS_SECTION ('1' or '0', a tab, the
 * name or glob as written, a newline), in this read-only section. */
#define CAUSAL_PATH_REQUESTS_SECTION "causal_path_requests"

/* ---- Hooks ---------------------------------------------------------------- */

/* The calls the runtime must see: to keep virtual speedups exact across
 * blocking and waking (Coz paper, Tables 1 and 2, plus timed, try and clock
 * variants, sleeps, I/O waits with timeouts, and syscall(), whose futex
 * operations wait and wake; every other system call passes through), and to
 * write the profile before the process image goes (exec, _exit). They are
 * listed once, one line each, in causal/hooks.def, an X-macro table beside
 * this header (it documents its columns). For each CAUSAL_HOOK line X, the
 * pass rewrites direct calls to X in instrumented code into calls to
 * CAUSAL_HOOK_PREFIX X (same signature); the runtime defines those hooks and
 * also interposes X itself for code it did not compile. A CAUSAL_INTERPOSER
 * line is interposed only. One implementation of each, two entry points.
 * Usage, where only the names are needed (the arguments are just tokens):
 *
 *   #define CAUSAL_HOOK(kind, outcome, ret, name, params, args, version) #name,
 *   #include "causal/hooks.def"
 */
#define CAUSAL_HOOK_PREFIX "__causal_hook_"

/* ---- Front-end plugin / pass options ------------------------------------ */

/* The plugin is loaded with -fplugin=<path>; its name for
 * -fplugin-arg-<name>-<arg> is CAUSAL_PLUGIN_NAME. */
#define CAUSAL_PLUGIN_NAME "causal"
/* The pass's name in opt -passes=... */
#define CAUSAL_PASS_NAME "causal-instrument"

/* ---- Inline helpers shared by runtime and tools ------------------------- */

/* Returns the header if [start, stop) holds a valid table of this version,
 * else null. Checks every offset against the section size, so a corrupt or
 * foreign section is rejected rather than read out of bounds. */
static inline const struct causal_linetab_header *causal_linetab_validate(const void *start,
                                                                          const void *stop) {
  const struct causal_linetab_header *h = (const struct causal_linetab_header *)start;
  uintptr_t size = (uintptr_t)stop - (uintptr_t)start;
  uint64_t end;
  int i;
  if (!start || !stop || (uintptr_t)stop < (uintptr_t)start || size < CAUSAL_LINETAB_V1_HEADER_SIZE)
    return 0;
  for (i = 0; i < CAUSAL_LINETAB_MAGIC_SIZE; ++i)
    if (h->magic[i] != CAUSAL_LINETAB_MAGIC[i])
      return 0;
  if (h->version == CAUSAL_LINETAB_VERSION) {
    if (h->header_size != sizeof(*h))
      return 0;
  } else if (h->version != CAUSAL_LINETAB_VERSION_1 ||
             h->header_size != CAUSAL_LINETAB_V1_HEADER_SIZE) {
    return 0;
  }
  if (h->total_size > size || h->num_rows == 0)
    return 0;
  if ((h->rows_offset | h->lines_offset | h->files_offset) & 3u) /* arrays are 4-byte aligned */
    return 0;
  if (h->version == CAUSAL_LINETAB_VERSION) {
    end = (uint64_t)h->functions_offset + (uint64_t)h->num_lines * sizeof(uint32_t);
    if ((h->functions_offset & 3u) || h->functions_offset < sizeof(*h) || end > h->total_size)
      return 0;
  }
  end = (uint64_t)h->rows_offset + (uint64_t)h->num_rows * sizeof(struct causal_linetab_row);
  if (h->rows_offset < h->header_size || end > h->total_size)
    return 0;
  end = (uint64_t)h->lines_offset + (uint64_t)h->num_lines * sizeof(struct causal_linetab_line);
  if (end > h->total_size)
    return 0;
  end = (uint64_t)h->files_offset + (uint64_t)h->num_files * sizeof(uint32_t);
  if (end > h->total_size)
    return 0;
  end = (uint64_t)h->strings_offset + h->strings_size;
  if (end > h->total_size || (h->strings_size && ((const char *)h)[end - 1] != 0))
    return 0;
  return h;
}

static inline const struct causal_linetab_row *
causal_linetab_rows(const struct causal_linetab_header *h) {
  return (const struct causal_linetab_row *)((const char *)h + h->rows_offset);
}
static inline const struct causal_linetab_line *
causal_linetab_lines(const struct causal_linetab_header *h) {
  return (const struct causal_linetab_line *)((const char *)h + h->lines_offset);
}
/* Path of file |index|, or null if out of range. */
static inline const char *causal_linetab_file(const struct causal_linetab_header *h,
                                              uint32_t index) {
  const uint32_t *files = (const uint32_t *)((const char *)h + h->files_offset);
  if (index >= h->num_files || files[index] >= h->strings_size)
    return 0;
  return (const char *)h + h->strings_offset + files[index];
}

/* Demangled name of the function of line |line_index|, or null (a version 1
 * table, an unknown function, an index out of range). */
static inline const char *causal_linetab_function(const struct causal_linetab_header *h,
                                                  uint32_t line_index) {
  const uint32_t *functions;
  if (h->version < CAUSAL_LINETAB_VERSION || line_index >= h->num_lines)
    return 0;
  functions = (const uint32_t *)((const char *)h + h->functions_offset);
  if (functions[line_index] >= h->strings_size)
    return 0;
  return (const char *)h + h->strings_offset + functions[line_index];
}

/* Maps a link-time address to a line index (CAUSAL_NO_LINE if none). Binary
 * search, no allocation, no locks: safe in a signal handler. */
static inline uint32_t causal_linetab_lookup(const struct causal_linetab_header *h,
                                             uint64_t vaddr) {
  const struct causal_linetab_row *rows = causal_linetab_rows(h);
  uint64_t off;
  uint32_t lo = 0, hi = h->num_rows; /* find last row with offset <= off */
  if (vaddr < h->code_vaddr)
    return CAUSAL_NO_LINE;
  off = vaddr - h->code_vaddr;
  if (off > 0xffffffffu || off < rows[0].offset)
    return CAUSAL_NO_LINE;
  while (hi - lo > 1) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (rows[mid].offset <= off)
      lo = mid;
    else
      hi = mid;
  }
  if (lo == h->num_rows - 1) /* at or past the terminator */
    return CAUSAL_NO_LINE;
  return rows[lo].line_index < h->num_lines ? rows[lo].line_index : CAUSAL_NO_LINE;
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* CAUSAL_ABI_H */
