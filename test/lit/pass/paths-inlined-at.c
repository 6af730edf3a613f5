// After an -O2 pipeline, a chosen static function inlined into two callers:
// each inlined copy's entry call names, instead of null, the frame the
// inlining removed: "CALLER\tFILE:LINE\n" with the line of the call; two
// callers, two strings. A copy inlined two levels deep names both frames,
// innermost first. The pass's early step ran before inlining (the copies
// carry the entry), its last step after it.
// RUN: %clang -fplugin=%plugin -fplugin-arg-causal-paths=helper -O2 -S -emit-llvm %s -o - | FileCheck %s
// RUN: %clang -fplugin=%plugin -fplugin-arg-causal-paths=helper -O2 -g -S -emit-llvm %s -o - | FileCheck %s
// At -O0 nothing is inlined: the entry call keeps its null.
// RUN: %clang -fplugin=%plugin -fplugin-arg-causal-paths=helper -O0 -S -emit-llvm %s -o - | FileCheck %s --check-prefix=O0

static int helper(int x) { return x * 3 + 1; }

int first(int x) { return helper(x) + 2; }

int second(int x) {
  int y = x - 1;
  return helper(y);
}

static int middle(int x) { return helper(x + 5); }

int outer(int x) { return middle(x) - 4; }

// CHECK-DAG: @[[FIRST:causal.inlined_at[.0-9]*]] = private unnamed_addr constant [{{[0-9]+}} x i8] c"first\09{{/.*}}paths-inlined-at.c:14\0A\00", align 1
// CHECK-DAG: @[[SECOND:causal.inlined_at[.0-9]*]] = private unnamed_addr constant [{{[0-9]+}} x i8] c"second\09{{/.*}}paths-inlined-at.c:18\0A\00", align 1
// CHECK-DAG: @[[OUTER:causal.inlined_at[.0-9]*]] = private unnamed_addr constant [{{[0-9]+}} x i8] c"middle\09{{/.*}}paths-inlined-at.c:21\0Aouter\09{{/.*}}paths-inlined-at.c:23\0A\00", align 1
// CHECK-LABEL: define {{.*}}i32 @first(
// CHECK:       call i32 @causal.path.count(ptr nonnull @causal.path_fn.helper, ptr @[[FIRST]])
// CHECK-LABEL: define {{.*}}i32 @second(
// CHECK:       call i32 @causal.path.count(ptr nonnull @causal.path_fn.helper, ptr @[[SECOND]])
// CHECK-LABEL: define {{.*}}i32 @outer(
// CHECK:       call i32 @causal.path.count(ptr nonnull @causal.path_fn.helper, ptr @[[OUTER]])
// CHECK-NOT:   define {{.*}}@helper(

// O0-NOT: causal.inlined_at
// O0: define internal i32 @helper(
// O0: call i32 @causal.path.count(ptr @causal.path_fn.helper, ptr null)
