// C++: the pass runs next to the C++ constructors; the user's static
// initializer (default priority 65535) stays after ours (101).
// RUN: %clangxx -fplugin=%plugin -O0 -S -emit-llvm %s -o - | FileCheck %s
// RUN: %clangxx -fplugin=%plugin -O2 -S -emit-llvm %s -o - | FileCheck %s
// RUN: %clangxx -fplugin=%plugin -O2 -c %s -o %t.o
// RUN: %clangxx -fplugin=%plugin -O1 -flto=thin -c %s -o %t.thin.bc
// RUN: %llvm_bin/llvm-dis %t.thin.bc -o - | FileCheck %s
// RUN: %clangxx -fplugin=%plugin -O3 -flto -c %s -o %t.full.bc
// RUN: %llvm_bin/llvm-dis %t.full.bc -o - | FileCheck %s
// RUN: %llvm_bin/llvm-readelf --section-groups %t.o | FileCheck %s --check-prefix=OBJ

#include <vector>

int produce();
static std::vector<int> Values{produce(), produce()};

int sum() {
  int Total = 0;
  for (int V : Values)
    Total += V;
  return Total;
}

// CHECK: @llvm.global_ctors = appending global [2 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 65535, ptr @_GLOBAL__sub_I_{{.*}}, ptr null }, { i32, ptr, ptr } { i32 101, ptr @causal.module_ctor, ptr @causal.module_ctor }]
// CHECK: define linkonce_odr hidden void @causal.module_ctor() {{.*}}comdat
// CHECK: define linkonce_odr hidden void @causal.module_dtor() {{.*}}comdat
// OBJ: [causal.module_ctor]
// OBJ: [causal.module_dtor]
