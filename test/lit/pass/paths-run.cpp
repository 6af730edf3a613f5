// A chosen function at run time, with a stand-in runtime that enables it:
// each entry, also of its inlined copies, calls enter once and each way out,
// a C++ exception thrown through it included, calls exit once with the
// entry's token; at -O2 the copies inlined into first and second say where.
// Without the runtime the program runs as usual.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %clang -I%src_root/include -c %S/Inputs/fake-path-runtime.c -o %t/runtime.o
// RUN: %clangxx -fplugin=%plugin -fplugin-arg-causal-paths=ns::helper -O0 -c %s -o %t/o0.o
// RUN: %clangxx %t/o0.o %t/runtime.o -o %t/o0
// RUN: %t/o0 | FileCheck %s --check-prefixes=CHECK,O0
// RUN: %clangxx -fplugin=%plugin -fplugin-arg-causal-paths=ns::helper -O2 -c %s -o %t/o2.o
// RUN: %clangxx %t/o2.o %t/runtime.o -o %t/o2
// RUN: %t/o2 | FileCheck %s --check-prefixes=CHECK,O2
// RUN: %clangxx %t/o2.o -o %t/no-runtime
// RUN: %t/no-runtime | FileCheck %s --check-prefix=NO-RUNTIME
#include <cstdio>
#include <stdexcept>

[[noreturn]] __attribute__((noinline)) void fail() { throw std::runtime_error("negative"); }

namespace ns {
static int helper(int x) {
  if (x < 0)
    fail();
  return x * 3;
}
} // namespace ns

__attribute__((noinline)) int first(int x) { return ns::helper(x) + 1; }

__attribute__((noinline)) int second(int x) {
  int y = x - 1;
  return ns::helper(y);
}

int main(int argc, char **) {
  std::printf("first=%d\n", first(argc + 1));
  std::printf("second=%d\n", second(argc + 1));
  try {
    first(-argc);
  } catch (const std::exception &e) {
    std::printf("caught %s\n", e.what());
  }
  return 0;
}

// CHECK:      register symbol=_ZN2nsL6helperEi name=ns::helper(int) enabled=0 id=0
// O0-NEXT:    enter ns::helper(int) token=1 inlined_at=null
// O2-NEXT:    enter ns::helper(int) token=1 inlined_at=first(int) | {{/.*}}paths-run.cpp:29 ;{{$}}
// CHECK-NEXT: exit ns::helper(int) token=1
// CHECK-NEXT: first=7
// O0-NEXT:    enter ns::helper(int) token=2 inlined_at=null
// O2-NEXT:    enter ns::helper(int) token=2 inlined_at=second(int) | {{/.*}}paths-run.cpp:33 ;{{$}}
// CHECK-NEXT: exit ns::helper(int) token=2
// CHECK-NEXT: second=3
// O0-NEXT:    enter ns::helper(int) token=3 inlined_at=null
// O2-NEXT:    enter ns::helper(int) token=3 inlined_at=first(int) | {{/.*}}paths-run.cpp:29 ;{{$}}
// CHECK-NEXT: exit ns::helper(int) token=3
// CHECK-NEXT: caught negative
// CHECK-NOT:  {{.}}

// NO-RUNTIME:      first=7
// NO-RUNTIME-NEXT: second=3
// NO-RUNTIME-NEXT: caught negative
