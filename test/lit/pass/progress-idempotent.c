// Running the pass twice (e.g. a ThinLTO backend over instrumented bitcode)
// places no progress point twice: markers are gone after the first run, and
// the build-time points mark the module.
// RUN: %clang -I%src_root/include -O0 -gline-tables-only -Xclang -disable-O0-optnone -S -emit-llvm %s -o %t.ll
// RUN: %opt -load-pass-plugin %plugin -passes=causal-instrument -causal-progress=progress-idempotent.c:17 \
// RUN:   -causal-progress-fn=work -S %t.ll -o %t.once.ll
// RUN: %opt -load-pass-plugin %plugin -passes=causal-instrument,causal-instrument -causal-progress=progress-idempotent.c:17 \
// RUN:   -causal-progress-fn=work -S %t.ll -o %t.twice.ll
// RUN: FileCheck %s < %t.once.ll
// RUN: FileCheck %s < %t.twice.ll
// RUN: sed -n 17p %s | grep -q "s += i"
#include "causal/causal.h"

int work(int n) {
  int s = 0;
  for (int i = 0; i < n; ++i) {
    s += i;
    CAUSAL_PROGRESS_NAMED("step");
  }
  return s;
}

// CHECK-LABEL: define {{.*}}@work(
// CHECK-COUNT-1: atomicrmw add ptr @"causal.counter.1.progress-idempotent.c:17"
// CHECK-COUNT-1: atomicrmw add ptr @causal.counter.1.step
// CHECK-COUNT-1: atomicrmw add ptr @causal.counter.1.work
// CHECK-NOT:     atomicrmw
