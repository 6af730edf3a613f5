// End to end through the build tree's own plugin: causal-clang
// -fcausal-profile compiles with the pass and line tables, C and C++, and
// keeps frame pointers. (Compile only: the link step is tested in linker/.)
// RUN: %causal-clang -fcausal-profile -O2 -c %s -o %t.o
// RUN: %llvm_bin/llvm-readelf --sections --symbols %t.o | FileCheck %s
// RUN: %causal-clangxx -fcausal-profile -O2 -x c++ -c %s -o %t.cxx.o
// RUN: %llvm_bin/llvm-readelf --sections --symbols %t.cxx.o | FileCheck %s
// RUN: %causal-clang -fcausal-profile -O2 -S -emit-llvm %s -o - | FileCheck %s --check-prefix=IR
// Without the flag causal-clang is plain clang: no constructor, no DWARF.
// RUN: %causal-clang -O2 -c %s -o %t.plain.o
// RUN: %llvm_bin/llvm-readelf --sections --symbols %t.plain.o | FileCheck %s --check-prefix=PLAIN

int leaf(int x) { return x * 3; }

// CHECK-DAG: .debug_line
// CHECK-DAG: causal.module_ctor
// CHECK-DAG: causal.module_dtor
// IR: define {{.*}}@leaf({{.*}} #[[ATTRS:[0-9]+]]
// IR: attributes #[[ATTRS]] = {{.*}}"frame-pointer"="all"
// PLAIN-NOT: .debug_line
// PLAIN-NOT: causal.module_
