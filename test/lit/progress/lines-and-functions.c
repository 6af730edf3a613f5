// Progress points named at build time count what they should, at -O0 and -O2:
// a line is visited each time execution enters it (here: the for line once at
// the start and once per i++; the condition line once per iteration though it
// spans several blocks), a function at each return, and a latency point
// begins at a line and ends at a function's returns. The program computes the
// expected counts itself; a stand-in runtime prints the counters at exit.
// RUN: rm -rf %t && mkdir -p %t
// RUN: sed -n 32p %s | grep -q LOOP && sed -n 33p %s | grep -q COND && sed -n 34p %s | grep -q BODY
// RUN: %clang -I%src_root/include -c %S/Inputs/counter-dump.c -o %t/dump.o
// RUN: %clang -fplugin=%plugin -O0 -c %s -o %t/O0.o -fplugin-arg-causal-progress=lines-and-functions.c:32=loop \
// RUN:   -fplugin-arg-causal-progress=progress/lines-and-functions.c:33 -fplugin-arg-causal-progress-fn=classify \
// RUN:   -fplugin-arg-causal-latency=req:lines-and-functions.c:34:fn:classify
// RUN: %clang %t/O0.o %t/dump.o -o %t/O0 && %t/O0 | FileCheck %s
// RUN: %clang -fplugin=%plugin -O2 -c %s -o %t/O2.o -fplugin-arg-causal-progress=lines-and-functions.c:32=loop \
// RUN:   -fplugin-arg-causal-progress=progress/lines-and-functions.c:33 -fplugin-arg-causal-progress-fn=classify \
// RUN:   -fplugin-arg-causal-latency=req:lines-and-functions.c:34:fn:classify
// RUN: %clang %t/O2.o %t/dump.o -o %t/O2 && %t/O2 | FileCheck %s
#include <stdio.h>

int data[] = {5, -3, 7, 200, 9, -1, 42, 0, 64};

__attribute__((noinline)) int classify(int v) {
  if (v > 100)
    return 2;
  if (v > 0)
    return 1;
  return 0;
}

int run(int n, int *body_entries) {
  int s = 0;
  for (int i = 0; i < n; i++) { // LOOP
    if (data[i] > 0 && data[i] < 100) // COND
      s += classify(data[i]) + (++*body_entries > 0); // BODY
    else
      s -= classify(data[i]);
  }
  return s;
}

int main(int argc, char **argv) {
  (void)argv;
  int n = (int)(sizeof(data) / sizeof(data[0])) - (argc - 1);
  int body_entries = 0;
  int s = run(n, &body_entries);
  printf("sum=%d loop=%d cond=%d body=%d classify=%d\n", s, 1 + n, n, body_entries, n);
  return 0;
}

// CHECK:      register image=0 counters=5
// CHECK-NEXT: sum={{-?[0-9]+}} loop=[[LOOP:[0-9]+]] cond=[[COND:[0-9]+]] body=[[BODY:[0-9]+]] classify=[[CLASSIFY:[0-9]+]]
// CHECK-NEXT: counter name=classify kind=1 image=0 count=[[CLASSIFY]] flags=0
// CHECK-NEXT: counter name=loop kind=1 image=0 count=[[LOOP]] flags=0
// CHECK-NEXT: counter name=progress/lines-and-functions.c:33 kind=1 image=0 count=[[COND]] flags=0
// CHECK-NEXT: counter name=req kind=2 image=0 count=[[BODY]] flags=0
// CHECK-NEXT: counter name=req kind=3 image=0 count=[[CLASSIFY]] flags=0
