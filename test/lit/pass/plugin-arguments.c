// -fplugin-arg-causal-<arg>: known arguments work, an unknown one is an
// error that names it.
// RUN: not %clang -fplugin=%plugin -fplugin-arg-causal-bogus -c %s -o %t.o 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: %clang -fplugin=%plugin -fplugin-arg-causal-no-register-module -O2 -S -emit-llvm %s -o - | FileCheck %s --check-prefix=NO-REGISTER
// The pass's cl::opt flags work through -mllvm (the plugin is loaded before
// -mllvm is parsed) and win over the plugin arguments.
// RUN: %clang -fplugin=%plugin -mllvm -causal-register-module=false -O2 -S -emit-llvm %s -o - | FileCheck %s --check-prefix=NO-REGISTER
// RUN: %clang -fplugin=%plugin -fplugin-arg-causal-no-register-module -mllvm -causal-register-module=true -O2 -S -emit-llvm %s -o - | FileCheck %s --check-prefix=REGISTER

int twice(int x) { return 2 * x; }

// UNKNOWN: error: unknown argument '-fplugin-arg-causal-bogus' for the causal plugin (known: no-register-module, no-sync-hooks, progress=..., progress-fn=..., latency=...)
// NO-REGISTER-NOT: causal.module_ctor
// NO-REGISTER: define {{.*}}@twice
// NO-REGISTER-NOT: causal.module_ctor
// NO-REGISTER: emissionKind: LineTablesOnly
// REGISTER: @llvm.global_ctors = {{.*}}@causal.module_ctor
