//===- test/unit/runtime/Sanitizers.h - Which sanitizer this build has ----===//
//
// scripts/test-sanitizers.sh builds the runtime tests and their programs
// with -fsanitize=address,undefined or -fsanitize=thread (CAUSAL_SANITIZE).
// The few checks that cannot hold under a sanitizer ask here: GCC defines
// __SANITIZE_ADDRESS__ / __SANITIZE_THREAD__, clang answers __has_feature.
// C (malloc_guard.c) reads the macros, C++ the constants.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_TEST_UNIT_RUNTIME_SANITIZERS_H
#define CAUSAL_TEST_UNIT_RUNTIME_SANITIZERS_H

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CAUSAL_TEST_ASAN 1
#endif
#if __has_feature(thread_sanitizer)
#define CAUSAL_TEST_TSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(CAUSAL_TEST_ASAN)
#define CAUSAL_TEST_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__) && !defined(CAUSAL_TEST_TSAN)
#define CAUSAL_TEST_TSAN 1
#endif

#if defined(CAUSAL_TEST_ASAN) || defined(CAUSAL_TEST_TSAN)
#define CAUSAL_TEST_SANITIZED 1
#endif

#ifdef __cplusplus
namespace causal::test {

#ifdef CAUSAL_TEST_ASAN
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#ifdef CAUSAL_TEST_TSAN
inline constexpr bool kThreadSanitizer = true;
#else
inline constexpr bool kThreadSanitizer = false;
#endif
/// A sanitizer's runtime is loaded: its interceptors come first in the
/// symbol lookup order (ahead of libcausal_rt.so's interposers, which they
/// reach through RTLD_NEXT), and it owns the allocator.
inline constexpr bool kSanitized = kAddressSanitizer || kThreadSanitizer;
/// TSan runs an asynchronous signal's handler only at the thread's next
/// intercepted call and keeps one signal pending per number: a thread that
/// spins in its own code gets the sample handler now and then (16 of 390
/// expected samples arrived), too few for experiments to start. Checks that
/// need samples to arrive (experiments, inserted delays, sampled lines) are
/// left out under TSan; what they run is still checked for races.
inline constexpr bool kSamplesHeldBack = kThreadSanitizer;
inline constexpr const char *kSamplesHeldBackWhy =
    "TSan holds asynchronous signals back until an intercepted call: samples do not arrive";

} // namespace causal::test
#endif

#endif // CAUSAL_TEST_UNIT_RUNTIME_SANITIZERS_H
