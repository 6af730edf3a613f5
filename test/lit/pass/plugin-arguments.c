// -fplugin-arg-causal-<arg>: known arguments work, an unknown one is an
// error that names it.
// RUN: not %clang -fplugin=%plugin -fplugin-arg-causal-bogus -c %s -o %t.o 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: %clang -fplugin=%plugin -fplugin-arg-causal-no-register-module -O2 -S -emit-llvm %s -o - | FileCheck %s --check-prefix=NO-REGISTER

int twice(int x) { return 2 * x; }

// UNKNOWN: error: unknown argument '-fplugin-arg-causal-bogus' for the causal plugin (known: no-register-module)
// NO-REGISTER-NOT: causal.module_ctor
// NO-REGISTER: define {{.*}}@twice
// NO-REGISTER-NOT: causal.module_ctor
// NO-REGISTER: emissionKind: LineTablesOnly
