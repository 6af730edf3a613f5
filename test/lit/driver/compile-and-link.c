// Compiling and linking in one invocation gets both groups, and clang uses
// both: cc1 loads the plugin and the link runs the causal link step.
// RUN: sh %S/Inputs/make-prefix.sh %causal-clang %t/p
// RUN: %t/p/bin/causal-clang -fcausal-profile -O1 -### %s -o %t/exe 2>&1 \
// RUN:   | FileCheck %s -DPREFIX=%t/p --implicit-check-not=warning:
// RUN: %t/p/bin/causal-clang++ -fcausal-profile -O1 -### -x c++ %s -o %t/exe 2>&1 \
// RUN:   | FileCheck %s -DPREFIX=%t/p --implicit-check-not=warning: --check-prefixes=CHECK,CXX

// CHECK: "-cc1"
// CHECK-SAME: "-mframe-pointer=all"
// CHECK-SAME: "-load" "[[PREFIX]]/lib/causal/CausalPlugin.so"
// CHECK: "[[PREFIX]]/libexec/causal/ld"
// CXX-SAME: "-lstdc++"

int main(void) { return 0; }
