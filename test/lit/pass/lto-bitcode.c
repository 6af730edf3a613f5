// -flto and -flto=thin: the pre-link compile writes bitcode that already has
// the constructor (the link-time optimizer does not run our pass) and line
// tables.
// RUN: %clang -fplugin=%plugin -flto -O2 -c %s -o %t.full.bc
// RUN: %llvm_bin/llvm-dis %t.full.bc -o - | FileCheck %s
// RUN: %clang -fplugin=%plugin -flto=thin -O2 -c %s -o %t.thin.bc
// RUN: %llvm_bin/llvm-dis %t.thin.bc -o - | FileCheck %s
// RUN: %clang -fplugin=%plugin -flto=thin -O0 -c %s -o %t.thin0.bc
// RUN: %llvm_bin/llvm-dis %t.thin0.bc -o - | FileCheck %s

int twice(int x) { return 2 * x; }

// CHECK-DAG: @llvm.global_ctors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 101, ptr @causal.module_ctor, ptr @causal.module_ctor }]
// CHECK-DAG: define linkonce_odr hidden void @causal.module_ctor() {{.*}}comdat
// CHECK-DAG: define linkonce_odr hidden void @causal.module_dtor() {{.*}}comdat
// CHECK-DAG: !DICompileUnit({{.*}}emissionKind: LineTablesOnly
