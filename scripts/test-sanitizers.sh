#!/usr/bin/env bash
# Builds the runtime, the profile library, the report and their unit tests
# with a sanitizer and runs those tests: ASan+UBSan (build-asan/), then TSan
# (build-tsan/). scripts/test.sh runs it after the main suite (CI does); it
# also runs alone. Only the unit-test targets (and what they run: the runtime's test
# programs, linked with a sanitized libcausal_rt.so) are built, not the
# compiler plugin, the link step or the lit suites.
#
# usage: scripts/test-sanitizers.sh [asan|tsan]...   (default: both)
# Environment: CAUSAL_SANITIZER_JOBS (default: nproc) for build and ctest.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=${CAUSAL_SANITIZER_JOBS:-$(nproc)}
kinds=("$@")
[ ${#kinds[@]} -gt 0 ] || kinds=(asan tsan)

# The unit tests (GoogleTest executables), run directly: one process each.
targets=(causal_rt_unittests causal_profile_tests causal_report_tests causal_settings_tests)

for kind in "${kinds[@]}"; do
  case "$kind" in
    asan) sanitize=address,undefined; build="$root/build-asan" ;;
    tsan) sanitize=thread; build="$root/build-tsan" ;;
    *) echo "test-sanitizers.sh: unknown sanitizer '$kind' (asan or tsan)" >&2; exit 2 ;;
  esac
  echo "== $kind: -fsanitize=$sanitize in $build"
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DLLVM_DIR=/usr/lib/llvm-19/lib/cmake/llvm -DCAUSAL_SANITIZE="$sanitize" >/dev/null
  cmake --build "$build" -j"$jobs" --target "${targets[@]}"
  # Every finding is fatal (-fno-sanitize-recover, halt_on_error) and names
  # its stack. The runtime's test programs handle the sampling signal
  # themselves: the sanitizers must not take over signal handling. What a
  # sanitizer changes for the tests themselves (its interceptors ahead of
  # the runtime's interposers, its allocator, TSan's thread start) the tests
  # handle (test/unit/runtime/Sanitizers.h, RunTarget.h), not options here.
  export ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:abort_on_error=0:allow_user_segv_handler=1:handle_segv=0:handle_abort=0:use_sigaltstack=0
  export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
  # TSan: the crash tests need the program to die by its signal (TSan would
  # report a SEGV and exit 66), and TSan has no interceptor for
  # pthread_clockjoin_np (glibc 2.34; the hooks' target joins with it): a
  # thread joined that way looks leaked to it.
  export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:report_signal_unsafe=0:handle_segv=0:handle_abort=0:report_thread_leaks=0
  for target in "${targets[@]}"; do
    test_binary=$(find "$build" -type f -name "$target" -perm -u+x | head -n 1)
    echo "-- $kind: $target"
    (cd "$build" && "$test_binary" --gtest_brief=1)
  done
  unset ASAN_OPTIONS UBSAN_OPTIONS TSAN_OPTIONS
done
echo "== sanitizers: clean"
