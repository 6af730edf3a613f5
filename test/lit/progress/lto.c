// With -flto and -flto=thin the counters of several translation units still
// merge into one per (kind, name) and image, and count every visit.
// REQUIRES: lld
// RUN: rm -rf %t && mkdir -p %t
// RUN: %clang -I%src_root/include -c %S/Inputs/counter-dump.c -o %t/dump.o
// RUN: %clang -fplugin=%plugin -I%src_root/include -O2 -flto -c %S/markers.c -o %t/main.full.o
// RUN: %clang -fplugin=%plugin -I%src_root/include -O2 -flto -c %S/Inputs/worker.c -o %t/worker.full.o
// RUN: %clang -flto -fuse-ld=lld %t/main.full.o %t/worker.full.o %t/dump.o -o %t/full
// RUN: %t/full | FileCheck %s
// RUN: %clang -fplugin=%plugin -I%src_root/include -O2 -flto=thin -c %S/markers.c -o %t/main.thin.o
// RUN: %clang -fplugin=%plugin -I%src_root/include -O2 -flto=thin -c %S/Inputs/worker.c -o %t/worker.thin.o
// RUN: %clang -flto=thin -fuse-ld=lld %t/main.thin.o %t/worker.thin.o %t/dump.o -o %t/thin
// RUN: %t/thin | FileCheck %s

// CHECK:      register image=0 counters=4
// CHECK-NEXT: done=4
// CHECK-DAG:  counter name=item kind=1 image=0 count=10 flags=0
// CHECK-DAG:  counter name={{.*}}markers.c:37 kind=1 image=0 count=4 flags=0
// CHECK-DAG:  counter name=request kind=2 image=0 count=4 flags=0
// CHECK-DAG:  counter name=request kind=3 image=0 count=4 flags=0
// CHECK-NOT:  counter
