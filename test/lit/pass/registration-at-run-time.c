// What the module constructor does when the program runs: it calls the
// runtime once per image with the bounds of the image's causal_lines section
// (null when the image has none), the destructor unregisters it; without the
// runtime the program runs as usual. Position-independent executables, static
// (non-PIE) ones, GNU ld and lld.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %clang -fplugin=%plugin -O2 -DPART=1 -c %s -o %t/main.o
// RUN: %clang -fplugin=%plugin -O0 -DPART=2 -c %s -o %t/other.o
// RUN: %clang -c %S/Inputs/fake-runtime.c -o %t/runtime.o
// RUN: %clang -c %S/Inputs/linetab-placeholder.s -o %t/placeholder.o
// RUN: %clang %t/main.o %t/other.o %t/runtime.o -o %t/no-section
// RUN: %t/no-section | FileCheck %s --check-prefix=NO-SECTION
// RUN: %clang %t/main.o %t/other.o %t/runtime.o %t/placeholder.o -o %t/section
// RUN: %t/section | FileCheck %s --check-prefix=SECTION
// RUN: %clang %t/main.o %t/other.o -o %t/no-runtime
// RUN: %t/no-runtime | FileCheck %s --check-prefix=NO-RUNTIME
// RUN: %clang -fplugin=%plugin -fno-pic -O2 -DPART=1 -c %s -o %t/main.nopic.o
// RUN: %clang -fplugin=%plugin -fno-pic -O2 -DPART=2 -c %s -o %t/other.nopic.o
// RUN: %clang -no-pie %t/main.nopic.o %t/other.nopic.o %t/runtime.o -o %t/no-pie
// RUN: %t/no-pie | FileCheck %s --check-prefix=NO-SECTION
// RUN: %clang -no-pie %t/main.nopic.o %t/other.nopic.o %t/runtime.o %t/placeholder.o -o %t/no-pie-section
// RUN: %t/no-pie-section | FileCheck %s --check-prefix=SECTION

#include <stdio.h>

#if PART == 1
int other(void);
int main(void) {
  printf("main %d\n", other());
  return 0;
}
#else
int other(void) { return 42; }
#endif

// NO-SECTION:      register start=null size=0
// NO-SECTION-NEXT: main 42
// NO-SECTION-NEXT: unregister start=null
// NO-SECTION-NOT:  register
// SECTION:         register start=set size=64
// SECTION-NEXT:    main 42
// SECTION-NEXT:    unregister start=set
// SECTION-NOT:     register
// NO-RUNTIME:      main 42
// NO-RUNTIME-NOT:  register
