// The macros of causal/causal.h count visits: one counter per (kind, name)
// and image, shared by the translation units of that image (COMDAT), a
// shared library has its own; each image registers its counter section once.
// The same sources without the plugin, with gcc, and with clang run and give
// the same program output (the stand-in runtime lines aside).
// RUN: rm -rf %t && mkdir -p %t && sed -n 37p %s | grep -q "CAUSAL_PROGRESS;"
// RUN: %clang -I%src_root/include -c %S/Inputs/counter-dump.c -o %t/dump.o
// RUN: %clang -fplugin=%plugin -I%src_root/include -O0 -c %s -o %t/main.o
// RUN: %clang -fplugin=%plugin -I%src_root/include -O2 -c %S/Inputs/worker.c -o %t/worker.o
// RUN: %clang %t/main.o %t/worker.o %t/dump.o -o %t/one-image
// RUN: %t/one-image | FileCheck %s --check-prefix=ONE
// RUN: %llvm_bin/llvm-readelf -sW %t/one-image | grep -c 'causal.counter.1.item$' | grep -qx 1
// The worker in a shared library: its own "item" counter and registration.
// RUN: %clang -fplugin=%plugin -I%src_root/include -O2 -fPIC -shared %S/Inputs/worker.c -o %t/libworker.so
// RUN: %clang %t/main.o %t/dump.o -L%t -lworker -Wl,-rpath,%t -o %t/two-images
// RUN: %t/two-images | FileCheck %s --check-prefix=TWO
// Without the plugin (clang, gcc): nothing is counted or registered, same output.
// RUN: %clang -I%src_root/include -Wall -Wextra -Werror -O2 %s %S/Inputs/worker.c -o %t/plain
// RUN: %t/plain > %t/plain.out
// RUN: %t/one-image | grep -v -e '^register' -e '^counter' | diff %t/plain.out -
// RUN: %llvm_bin/llvm-nm %t/plain | FileCheck %s --check-prefix=PLAIN
// RUN: gcc -I%src_root/include -Wall -Wextra -Werror -O2 %s %S/Inputs/worker.c -o %t/gcc
// RUN: %t/gcc | diff %t/plain.out -
#include "causal/causal.h"

#include <stdio.h>

int worker(int n);

static int requests(int n) {
  int done = 0;
  for (int i = 0; i < n; ++i) {
    CAUSAL_BEGIN("request");
    done += worker(i);
    CAUSAL_PROGRESS_NAMED("item");
    CAUSAL_END("request");
    CAUSAL_PROGRESS;
  }
  return done;
}

int main(void) {
  printf("done=%d\n", requests(4));
  return 0;
}

// ONE:      register image=0 counters=4
// ONE-NEXT: done=4
// (4 requests, items: 4 in main, 0+1+2+3 = 6 in worker)
// ONE-NEXT: counter name={{.*}}markers.c:37 kind=1 image=0 count=4 flags=0
// ONE-NEXT: counter name=item kind=1 image=0 count=10 flags=0
// ONE-NEXT: counter name=request kind=2 image=0 count=4 flags=0
// ONE-NEXT: counter name=request kind=3 image=0 count=4 flags=0
// ONE-NOT:  counter

// TWO-DAG:  register image=0 counters=1
// TWO-DAG:  register image=1 counters=4
// TWO:      done=4
// TWO-NEXT: counter name={{.*}}markers.c:37 kind=1 image=1 count=4 flags=0
// TWO-NEXT: counter name=item kind=1 image=0 count=6 flags=0
// TWO-NEXT: counter name=item kind=1 image=1 count=4 flags=0
// TWO-NEXT: counter name=request kind=2 image=1 count=4 flags=0
// TWO-NEXT: counter name=request kind=3 image=1 count=4 flags=0
// TWO-NOT:  counter

// PLAIN-NOT: causal.counter
// PLAIN:     w __causal_progress_marker
// PLAIN-NOT: causal.counter
