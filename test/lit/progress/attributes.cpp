// [[causal::progress]] counts each return of a function as a visit of a
// throughput point named after it (qualified name without parameters);
// __attribute__((causal_transaction("n"))) begins n at entry and ends it at
// each return. C++11 [[...]] and GNU spellings, the macros of causal/causal.h, a
// declaration carrying the attribute to the definition, -O0 and -O2. The
// macros expand to nothing without the plugin: no warning, same output.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %clang -I%src_root/include -c %S/Inputs/counter-dump.c -o %t/dump.o
// RUN: %clangxx -fplugin=%plugin -I%src_root/include -Wall -Wextra -Werror -O0 -c %s -o %t/O0.o
// RUN: %clangxx %t/O0.o %t/dump.o -o %t/O0 && %t/O0 | FileCheck %s
// RUN: %clangxx -fplugin=%plugin -I%src_root/include -Wall -Wextra -Werror -O2 -c %s -o %t/O2.o
// RUN: %clangxx %t/O2.o %t/dump.o -o %t/O2 && %t/O2 | FileCheck %s
// RUN: %clangxx -I%src_root/include -Wall -Wextra -Werror -DPLAIN -O2 %s -o %t/plain
// RUN: %t/plain > %t/plain.out
// RUN: %t/O2 | grep -v -e '^register' -e '^counter' | diff %t/plain.out -
// Misplaced or malformed attributes are errors.
// RUN: not %clangxx -fplugin=%plugin -I%src_root/include -fsyntax-only -DBAD %s 2>&1 | FileCheck %s --check-prefix=BAD
#include "causal/causal.h"

#include <cstdio>

namespace shop {
struct Cart {
  CAUSAL_PROGRESS_FUNCTION int add(int item) {
    if (item < 0)
      return 0; // a second return
    total += item;
    return 1;
  }
  int total = 0;
};
} // namespace shop

#ifndef PLAIN
__attribute__((causal_transaction("checkout"))) int checkout(shop::Cart &cart);
[[causal::progress]] static int helper(int x) { return x + 1; }
#else
int checkout(shop::Cart &cart);
static int helper(int x) { return x + 1; }
#endif

int checkout(shop::Cart &cart) { return cart.total; }

CAUSAL_TRANSACTION("batch") int batch(shop::Cart &cart, int n) {
  int added = 0;
  for (int i = -2; i < n; ++i)
    added += cart.add(helper(i));
  return added;
}

#ifdef BAD
[[causal::progress]] int not_a_function;
[[causal::transaction("x")]] int no_name_reaches_plugin();
__attribute__((causal_transaction(42))) int number_name();
__attribute__((causal_transaction)) int no_name();
#endif

int main() {
  shop::Cart cart;
  int added = batch(cart, 5) + batch(cart, 3);
  std::printf("added=%d total=%d checkout=%d\n", added, cart.total, checkout(cart));
  return 0;
}

// 2 batches, 7 + 5 add calls, 12 helper calls, one checkout.
// CHECK:      register image=0 counters=6
// CHECK:      counter name=batch kind=2 image=0 count=2 flags=0
// CHECK-NEXT: counter name=batch kind=3 image=0 count=2 flags=0
// CHECK-NEXT: counter name=checkout kind=2 image=0 count=1 flags=0
// CHECK-NEXT: counter name=checkout kind=3 image=0 count=1 flags=0
// CHECK-NEXT: counter name=helper kind=1 image=0 count=12 flags=0
// CHECK-NEXT: counter name=shop::Cart::add kind=1 image=0 count=12 flags=0
// CHECK-NOT:  counter

// BAD: error: 'progress' attribute only applies to functions
// BAD: error: 'transaction' attribute takes one argument: the transaction name, a non-empty string literal (clang drops the arguments of a plugin's {{.*}} attribute: write __attribute__((causal_transaction("name"))) or CAUSAL_TRANSACTION("name") of causal/causal.h)
// BAD: error: 'transaction' attribute takes one argument
// BAD: error: 'transaction' attribute takes one argument
