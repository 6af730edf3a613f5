// clang -fplugin adds the pass at every optimization level; the user's code
// still compiles as usual.
// RUN: %clang -fplugin=%plugin -O0 -S -emit-llvm %s -o - | FileCheck %s
// RUN: %clang -fplugin=%plugin -O1 -S -emit-llvm %s -o - | FileCheck %s
// RUN: %clang -fplugin=%plugin -O2 -S -emit-llvm %s -o - | FileCheck %s
// RUN: %clang -fplugin=%plugin -O3 -S -emit-llvm %s -o - | FileCheck %s
// RUN: %clang -fplugin=%plugin -Os -S -emit-llvm %s -o - | FileCheck %s
// Without the plugin: nothing.
// RUN: %clang -O2 -S -emit-llvm %s -o - | FileCheck %s --check-prefix=PLAIN

int twice(int x) { return 2 * x; }

// CHECK-DAG: @llvm.global_ctors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 101, ptr @causal.module_ctor, ptr @causal.module_ctor }]
// CHECK-DAG: @llvm.global_dtors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 101, ptr @causal.module_dtor, ptr @causal.module_dtor }]
// CHECK-DAG: define {{.*}}i32 @twice(
// CHECK-DAG: define linkonce_odr hidden void @causal.module_ctor() {{.*}}comdat
// CHECK-DAG: call void @__causal_register_module(ptr @__start_causal_lines, ptr @__stop_causal_lines)
// CHECK-DAG: define linkonce_odr hidden void @causal.module_dtor() {{.*}}comdat
// CHECK-DAG: call void @__causal_unregister_module(ptr @__start_causal_lines)
// PLAIN-NOT: causal
