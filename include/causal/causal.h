/*===- causal/causal.h - Progress points for programs ---------------------===*
 *
 * The header a program includes to mark progress points in its source:
 *
 *   CAUSAL_PROGRESS;                 throughput point named "FILE:LINE"
 *   CAUSAL_PROGRESS_NAMED("name");   throughput point "name"
 *   CAUSAL_BEGIN("name");            a transaction "name" starts (latency)
 *   CAUSAL_END("name");              a transaction "name" ends
 *
 * and, on functions (expand to nothing where the compiler does not know the
 * attribute, i.e. without the causal plugin):
 *
 *   CAUSAL_PROGRESS_FUNCTION         each return is a visit of a throughput
 *                                    point named after the function
 *   CAUSAL_TRANSACTION("name")       entry begins and each return ends
 *                                    transaction "name"
 *   CAUSAL_PATH                      the calling contexts the function is
 *                                    entered from are collected (call paths,
 *                                    docs/paths.md)
 *
 * and, around a hand-written busy wait (`causal run --waits`, docs/waits.md):
 *
 *   CAUSAL_SPIN_BEGIN(&flag);        the thread starts spinning on |flag|
 *   CAUSAL_SPIN_END(&flag);          it stops (an episode of kind Spin)
 *   CAUSAL_SPIN_WAKE(&flag);         this thread releases the spinners of
 *                                    |flag| (their waker), before it does
 *
 * Names must be string literals. The header works in C and C++, with any
 * compiler: without the causal pass each macro is a call guarded by a null
 * check of a weak function that nothing defines, so it does nothing. With
 * the pass (causal-clang -fcausal-profile), each is replaced by an inline
 * atomic increment of a counter in the image (see causal/abi.h, "Progress
 * points"): no call, no run-time lookup.
 *
 *===----------------------------------------------------------------------===*/
#ifndef CAUSAL_CAUSAL_H
#define CAUSAL_CAUSAL_H

#include "abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The marker the pass replaces (CAUSAL_PROGRESS_MARKER_FN). Weak and never
 * defined: its address is null unless something defines it. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((weak))
#endif
void __causal_progress_marker(uint32_t kind, const char *name);

/* The runtime's entry points of the spin macros (weak: null without it). */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((weak))
#endif
void __causal_spin_begin(const void *object);
#if defined(__GNUC__) || defined(__clang__)
__attribute__((weak))
#endif
void __causal_spin_end(const void *object);
#if defined(__GNUC__) || defined(__clang__)
__attribute__((weak))
#endif
void __causal_spin_wake(const void *object);

#ifdef __cplusplus
} /* extern "C" */
#endif

#define CAUSAL_SPIN_CALL_(fn, object)                                                              \
  do {                                                                                             \
    if (fn)                                                                                        \
      fn((const void *)(object));                                                                  \
  } while (0)
#define CAUSAL_SPIN_BEGIN(object) CAUSAL_SPIN_CALL_(__causal_spin_begin, object)
#define CAUSAL_SPIN_END(object) CAUSAL_SPIN_CALL_(__causal_spin_end, object)
#define CAUSAL_SPIN_WAKE(object) CAUSAL_SPIN_CALL_(__causal_spin_wake, object)

#define CAUSAL_STRINGIFY_(x) #x
#define CAUSAL_STRINGIFY(x) CAUSAL_STRINGIFY_(x)

/* ("" name) accepts only a string literal: any other name is a compile
 * error at the use, with every compiler. */
#define CAUSAL_PROGRESS_MARK_(kind, name)                                                          \
  do {                                                                                             \
    if (__causal_progress_marker)                                                                  \
      __causal_progress_marker((kind), ("" name));                                                 \
  } while (0)

#define CAUSAL_PROGRESS                                                                            \
  CAUSAL_PROGRESS_MARK_(CAUSAL_COUNTER_THROUGHPUT, __FILE__ ":" CAUSAL_STRINGIFY(__LINE__))
#define CAUSAL_PROGRESS_NAMED(name) CAUSAL_PROGRESS_MARK_(CAUSAL_COUNTER_THROUGHPUT, name)
#define CAUSAL_BEGIN(name) CAUSAL_PROGRESS_MARK_(CAUSAL_COUNTER_BEGIN, name)
#define CAUSAL_END(name) CAUSAL_PROGRESS_MARK_(CAUSAL_COUNTER_END, name)

/* Function attributes of the causal plugin, where the compiler knows them:
 * the plugin predefines __CAUSAL_ATTRIBUTES__ (clang's __has_cpp_attribute
 * does not see plugin attributes). The GNU spelling works in C and C++ and
 * carries the name argument in both. */
#if defined(__CAUSAL_ATTRIBUTES__)
#define CAUSAL_PROGRESS_FUNCTION __attribute__((causal_progress))
#define CAUSAL_PATH __attribute__((causal_path))
#define CAUSAL_TRANSACTION(name) __attribute__((causal_transaction(name)))
#else
#define CAUSAL_PROGRESS_FUNCTION
#define CAUSAL_PATH
#define CAUSAL_TRANSACTION(name)
#endif

#endif /* CAUSAL_CAUSAL_H */
