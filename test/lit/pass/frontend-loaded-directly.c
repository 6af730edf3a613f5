// CausalFrontend.so is loaded by CausalPlugin.so; naming it directly is an
// error that says which file to load.
// RUN: not %clang -fplugin=%runtime_dir/causal/CausalFrontend.so -c %s -o %t.o 2>&1 | FileCheck %s

int twice(int x) { return 2 * x; }

// CHECK: error: load the causal plugin as -fplugin=<prefix>/lib/causal/CausalPlugin.so, not CausalFrontend.so
