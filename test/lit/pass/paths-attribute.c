// [[causal::path]] (C23 spelling), __attribute__((causal_path)) and the
// CAUSAL_PATH macro of causal/causal.h choose a function for call paths: it
// gets its descriptor and entry check, at -O0 and -O2; an attribute leaves
// no request record (only -fcausal-paths names do). With an argument it is
// an error. Without the plugin the macro is empty and nothing is emitted.
// RUN: %clang -fplugin=%plugin -I%src_root/include -std=c2x -Wall -Wextra -Werror -O0 -S -emit-llvm %s -o - | FileCheck %s
// RUN: %clang -fplugin=%plugin -I%src_root/include -std=c11 -Wall -Wextra -Werror -DNO_C23 -O2 -S -emit-llvm %s -o - | FileCheck %s
// RUN: not %clang -fplugin=%plugin -I%src_root/include -std=c11 -DWITH_ARGUMENT -fsyntax-only %s 2>&1 | FileCheck %s --check-prefix=ARGUMENT
// RUN: %clang -I%src_root/include -std=c11 -Wno-unknown-attributes -DNO_C23 -O2 -S -emit-llvm %s -o - | FileCheck %s --check-prefix=PLAIN
#include "causal/causal.h"

#ifdef NO_C23
__attribute__((causal_path))
#else
[[causal::path]]
#endif
__attribute__((noinline)) int parse(int x) {
  return x * 3;
}

__attribute__((causal_path, noinline)) int emit(int x) { return x - 1; }

CAUSAL_PATH __attribute__((noinline)) int by_macro(int x) { return x + 7; }

int not_chosen(int x) { return parse(x) + emit(x) + by_macro(x); }

#ifdef WITH_ARGUMENT
__attribute__((causal_path(1))) int bad(int x) { return x; }
#endif

// CHECK-DAG: @causal.path_fn.parse = linkonce_odr hidden global {{.*}} section "causal_path_fns", comdat, align 8
// CHECK-DAG: @causal.path_fn.emit = linkonce_odr hidden global {{.*}} section "causal_path_fns", comdat, align 8
// CHECK-DAG: @causal.path_fn.by_macro = linkonce_odr hidden global {{.*}} section "causal_path_fns", comdat, align 8
// CHECK-NOT: causal_path_requests
// CHECK-LABEL: define {{.*}}i32 @parse(
// CHECK:       load atomic i8, ptr @causal.path_fn.parse monotonic
// CHECK:       call i32 @causal.path.count(ptr {{(nonnull )?}}@causal.path_fn.parse, ptr null)
// CHECK:       call void @__causal_path_exit(ptr {{(nonnull )?}}@causal.path_fn.parse,
// CHECK-LABEL: define {{.*}}i32 @emit(
// CHECK:       call i32 @causal.path.count(ptr {{(nonnull )?}}@causal.path_fn.emit, ptr null)
// CHECK-LABEL: define {{.*}}i32 @by_macro(
// CHECK:       call i32 @causal.path.count(ptr {{(nonnull )?}}@causal.path_fn.by_macro, ptr null)
// CHECK-LABEL: define {{.*}}i32 @not_chosen(
// CHECK-NOT:   __causal_path_enter
// CHECK:       ret i32

// ARGUMENT: error: 'causal_path' attribute takes no arguments

// PLAIN-NOT: causal.path_fn
// PLAIN-NOT: __causal_path_enter
