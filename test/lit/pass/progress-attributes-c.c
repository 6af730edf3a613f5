// The attributes in C: [[causal::progress]] (C23 spelling), the GNU
// spellings, and the macros of causal/causal.h, lowered to counters.
// RUN: %clang -fplugin=%plugin -I%src_root/include -std=c2x -Wall -Wextra -Werror -O0 -S -emit-llvm %s -o - | FileCheck %s
// RUN: %clang -fplugin=%plugin -I%src_root/include -std=c11 -Wall -Wextra -Werror -DNO_C23 -O2 -S -emit-llvm %s -o - | FileCheck %s
// Without the plugin the macros are empty and nothing is counted (the
// attributes written out are unknown there).
// RUN: %clang -I%src_root/include -std=c11 -Wno-unknown-attributes -DNO_C23 -O2 -S -emit-llvm %s -o - | FileCheck %s --check-prefix=PLAIN
#include "causal/causal.h"

#ifdef NO_C23
__attribute__((causal_progress))
#else
[[causal::progress]]
#endif
int parse(int x) {
  return x * 3;
}

CAUSAL_PROGRESS_FUNCTION int emit(int x) { return x - 1; }

__attribute__((causal_transaction("query"))) int query(int x) {
  if (x)
    return parse(x);
  return emit(x);
}

CAUSAL_TRANSACTION("txn") int txn(int x) { return query(x) + 1; }

// CHECK-DAG: @causal.counter.1.parse = linkonce_odr hidden global {{.*}} i32 1, i32 0 }, section "causal_counters", comdat, align 8
// CHECK-DAG: @causal.counter.1.emit = linkonce_odr hidden global {{.*}} i32 1, i32 0 }, section "causal_counters", comdat, align 8
// CHECK-DAG: @causal.counter.2.query = linkonce_odr hidden global {{.*}} i32 2, i32 0 }, section "causal_counters", comdat, align 8
// CHECK-DAG: @causal.counter.3.query = linkonce_odr hidden global {{.*}} i32 3, i32 0 }, section "causal_counters", comdat, align 8
// CHECK-DAG: @causal.counter.2.txn = linkonce_odr hidden global {{.*}} i32 2, i32 0 }, section "causal_counters", comdat, align 8
// CHECK-DAG: @causal.counter.3.txn = linkonce_odr hidden global {{.*}} i32 3, i32 0 }, section "causal_counters", comdat, align 8
// CHECK-LABEL: define {{.*}}i32 @parse(
// CHECK:       atomicrmw add ptr @causal.counter.1.parse, i64 1 monotonic
// CHECK-NEXT:  ret i32
// CHECK-LABEL: define {{.*}}i32 @query(
// CHECK:       atomicrmw add ptr @causal.counter.2.query, i64 1 monotonic
// CHECK:       atomicrmw add ptr @causal.counter.3.query, i64 1 monotonic
// CHECK-NEXT:  ret i32

// PLAIN-NOT: causal.counter
// PLAIN-NOT: atomicrmw
