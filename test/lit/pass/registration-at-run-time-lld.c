// As registration-at-run-time.c, linked with lld, and for a shared library
// (each image registers its own section).
// REQUIRES: lld
// RUN: rm -rf %t && mkdir -p %t
// RUN: %clang -fplugin=%plugin -O2 -DPART=1 -c %s -o %t/main.o
// RUN: %clang -fplugin=%plugin -fPIC -O2 -DPART=2 -c %s -o %t/lib.o
// RUN: %clang -c %S/Inputs/fake-runtime.c -o %t/runtime.o
// RUN: %clang -c %S/Inputs/linetab-placeholder.s -o %t/placeholder.o
// RUN: %clang -fuse-ld=lld %t/main.o %t/lib.o %t/runtime.o -o %t/no-section
// RUN: %t/no-section | FileCheck %s --check-prefix=NO-SECTION
// RUN: %clang -fuse-ld=lld %t/main.o %t/lib.o %t/runtime.o %t/placeholder.o -o %t/section
// RUN: %t/section | FileCheck %s --check-prefix=SECTION
// The library has the section, the executable has not: two registrations.
// RUN: %clang -fuse-ld=lld -shared %t/lib.o %t/placeholder.o -o %t/libpart.so
// RUN: %clang -fuse-ld=lld -rdynamic %t/main.o %t/runtime.o %t/libpart.so -Wl,-rpath,%t -o %t/with-dso
// RUN: %t/with-dso | FileCheck %s --check-prefix=DSO

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
// SECTION:         register start=set size=64
// SECTION-NEXT:    main 42
// SECTION-NEXT:    unregister start=set
// DSO-DAG:         register start=set size=64
// DSO-DAG:         register start=null size=0
// DSO:             main 42
// DSO-DAG:         unregister start=null
// DSO-DAG:         unregister start=set
