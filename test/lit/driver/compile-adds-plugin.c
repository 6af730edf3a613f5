// With -fcausal-profile, a compile-only invocation gets the plugin and frame
// pointers, appended after the user's arguments (so they win), and no linker.
// RUN: sh %S/Inputs/make-prefix.sh %causal-clang %t/p
// RUN: sh %S/Inputs/make-fake-clang.sh %t/fake
// RUN: env CAUSAL_CLANG=%t/fake/clang %t/p/bin/causal-clang -fcausal-profile -O2 -c %s -o %t/x.o -fomit-frame-pointer \
// RUN:   | FileCheck %s -DPREFIX=%t/p --match-full-lines --check-prefix=ARGS
// clang accepts them without a warning: the plugin is loaded by cc1 and
// frame pointers are kept even though the user asked to omit them.
// RUN: %t/p/bin/causal-clang -fcausal-profile -O2 -### -c %s -o %t/x.o -fomit-frame-pointer 2>&1 \
// RUN:   | FileCheck %s -DPREFIX=%t/p --check-prefix=CLANG --implicit-check-not=warning: --implicit-check-not=libexec

// ARGS:      program=clang
// ARGS-NEXT: CAUSAL_REAL_LD=unset
// ARGS-NEXT: [-O2]
// ARGS-NEXT: [-c]
// ARGS-NEXT: [{{.*}}compile-adds-plugin.c]
// ARGS-NEXT: [-o]
// ARGS-NEXT: [{{.*}}x.o]
// ARGS-NEXT: [-fomit-frame-pointer]
// ARGS-NEXT: [-fplugin=[[PREFIX]]/lib/causal/CausalPlugin.so]
// ARGS-NEXT: [-fno-omit-frame-pointer]
// ARGS-NEXT: [-mno-omit-leaf-frame-pointer]
// ARGS-EMPTY:

// CLANG: "-cc1"
// CLANG-SAME: "-mframe-pointer=all"
// CLANG-SAME: "-load" "[[PREFIX]]/lib/causal/CausalPlugin.so"

int main(void) { return 0; }
