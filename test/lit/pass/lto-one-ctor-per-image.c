// Linked from several instrumented objects, an image has one constructor and
// one destructor, with and without LTO. (Plain system linker; the causal link
// step is tested elsewhere.)
// RUN: rm -rf %t && mkdir -p %t
// RUN: %clang -fplugin=%plugin -O2 -DPART=1 -c %s -o %t/a.o
// RUN: %clang -fplugin=%plugin -O2 -DPART=2 -c %s -o %t/b.o
// RUN: %clang %t/a.o %t/b.o -o %t/exe
// RUN: %llvm_bin/llvm-nm %t/exe | FileCheck %s
// RUN: %clang -fplugin=%plugin -flto -O2 -DPART=1 -c %s -o %t/a.full.o
// RUN: %clang -fplugin=%plugin -flto -O2 -DPART=2 -c %s -o %t/b.full.o
// RUN: %clang -flto %t/a.full.o %t/b.full.o -o %t/exe.full
// RUN: %llvm_bin/llvm-nm %t/exe.full | FileCheck %s
// RUN: %clang -fplugin=%plugin -flto=thin -O2 -DPART=1 -c %s -o %t/a.thin.o
// RUN: %clang -fplugin=%plugin -flto=thin -O2 -DPART=2 -c %s -o %t/b.thin.o
// RUN: %clang -flto=thin %t/a.thin.o %t/b.thin.o -o %t/exe.thin
// RUN: %llvm_bin/llvm-nm %t/exe.thin | FileCheck %s
// REQUIRES: gold-plugin

#if PART == 1
int helper(int x) { return x + 1; }
#else
int helper(int x);
int main(void) { return helper(-1); }
#endif

// CHECK-COUNT-1: causal.module_ctor
// CHECK-NOT:     causal.module_ctor
// CHECK-COUNT-1: causal.module_dtor
// CHECK-NOT:     causal.module_
