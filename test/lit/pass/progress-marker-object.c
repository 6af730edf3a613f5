// In the object, at -O0 as at -O2, C and C++: no call of the marker and no
// reference to its address (no relocation, no symbol) remain; each progress
// point is a locked increment of a counter in section causal_counters (one
// 24-byte struct causal_counter per (kind, name)).
// RUN: rm -rf %t && mkdir -p %t
// RUN: %clang -fplugin=%plugin -I%src_root/include -O0 -c %s -o %t/O0.o
// RUN: %clang -fplugin=%plugin -I%src_root/include -O2 -c %s -o %t/O2.o
// RUN: %clangxx -fplugin=%plugin -I%src_root/include -O0 -x c++ -c %s -o %t/cxx.o
// RUN: %clang -fplugin=%plugin -I%src_root/include -O0 -fno-pic -c %s -o %t/nopic.o
// RUN: %llvm_bin/llvm-objdump -dr %t/O0.o | FileCheck %s --check-prefix=CODE
// RUN: %llvm_bin/llvm-nm %t/O0.o | FileCheck %s --check-prefix=SYMS
// RUN: %llvm_bin/llvm-readelf -SW %t/O0.o | FileCheck %s --check-prefix=SECTIONS
// RUN: %llvm_bin/llvm-objdump -dr %t/O2.o | FileCheck %s --check-prefix=CODE
// RUN: %llvm_bin/llvm-nm %t/O2.o | FileCheck %s --check-prefix=SYMS
// RUN: %llvm_bin/llvm-readelf -SW %t/O2.o | FileCheck %s --check-prefix=SECTIONS
// RUN: %llvm_bin/llvm-objdump -dr %t/cxx.o | FileCheck %s --check-prefix=CODE
// RUN: %llvm_bin/llvm-nm %t/cxx.o | FileCheck %s --check-prefix=SYMS
// RUN: %llvm_bin/llvm-readelf -SW %t/cxx.o | FileCheck %s --check-prefix=SECTIONS
// RUN: %llvm_bin/llvm-objdump -dr %t/nopic.o | FileCheck %s --check-prefix=CODE
// RUN: %llvm_bin/llvm-nm %t/nopic.o | FileCheck %s --check-prefix=SYMS
// RUN: %llvm_bin/llvm-readelf -SW %t/nopic.o | FileCheck %s --check-prefix=SECTIONS
#include "causal/causal.h"

int step(int n) {
  int s = 0;
  for (int i = 0; i < n; ++i) {
    CAUSAL_BEGIN("work");
    s += i;
    CAUSAL_END("work");
  }
  CAUSAL_PROGRESS;
  return s;
}

// CODE-NOT: __causal_progress_marker
// CODE:     lock
// CODE-NEXT: incq
// CODE-NOT: __causal_progress_marker
// CODE:     lock
// CODE-NEXT: incq
// CODE-NOT: __causal_progress_marker
// CODE:     lock
// CODE-NEXT: incq
// CODE-NOT: __causal_progress_marker

// SYMS-NOT: __causal_progress_marker
// SYMS:     causal.counter.2.work
// SYMS-NOT: __causal_progress_marker

// Three counters (one group each): 3 x 24 bytes in three sections, 8-aligned.
// SECTIONS-COUNT-3: ] causal_counters PROGBITS {{[0-9a-f]+}} {{[0-9a-f]+}} 000018 00 WAG {{ *[0-9]+ +[0-9]+}} 8
// SECTIONS-NOT: {{] causal_counters}}
