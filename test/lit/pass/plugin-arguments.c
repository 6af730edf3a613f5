// -fplugin-arg-causal-<arg>: known arguments work, an unknown one is an
// error that names it.
// RUN: not %clang -fplugin=%plugin -fplugin-arg-causal-bogus -c %s -o %t.o 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: %clang -fplugin=%plugin -fplugin-arg-causal-no-register-module -O2 -S -emit-llvm %s -o - | FileCheck %s --check-prefix=NO-REGISTER
// The pass's cl::opt flags work through -mllvm (the plugin is loaded before
// -mllvm is parsed) and win over the plugin arguments.
// RUN: %clang -fplugin=%plugin -mllvm -causal-register-module=false -O2 -S -emit-llvm %s -o - | FileCheck %s --check-prefix=NO-REGISTER
// RUN: %clang -fplugin=%plugin -fplugin-arg-causal-no-register-module -mllvm -causal-register-module=true -O2 -S -emit-llvm %s -o - | FileCheck %s --check-prefix=REGISTER

// paths= and paths-file= choose functions for call paths; a bad list and an
// unreadable file are errors that name them.
// RUN: %clang -fplugin=%plugin -fplugin-arg-causal-paths=twice -fplugin-arg-causal-paths-file=%S/Inputs/paths-list.txt -O2 -S -emit-llvm %s -o - | FileCheck %s --check-prefix=PATHS
// RUN: not %clang -fplugin=%plugin -fplugin-arg-causal-paths=a,,b -c %s -o %t.o 2>&1 | FileCheck %s --check-prefix=BAD-PATHS
// RUN: not %clang -fplugin=%plugin -fplugin-arg-causal-paths-file=%t.missing -c %s -o %t.o 2>&1 | FileCheck %s --check-prefix=MISSING -DFILE=%t.missing

int twice(int x) { return 2 * x; }

// UNKNOWN: error: unknown argument '-fplugin-arg-causal-bogus' for the causal plugin (known: no-register-module, no-sync-hooks, progress=..., progress-fn=..., latency=..., paths=..., paths-file=...)
// NO-REGISTER-NOT: causal.module_ctor
// NO-REGISTER: define {{.*}}@twice
// NO-REGISTER-NOT: causal.module_ctor
// NO-REGISTER: emissionKind: LineTablesOnly
// REGISTER: @llvm.global_ctors = {{.*}}@causal.module_ctor
// PATHS: c"1\09twice\0A0\09ns::helper\0A0\09_Z5plaini\0A0\09ns::Server::run(int, char)\0A"
// PATHS: define {{.*}}@twice(
// PATHS: call i32 @causal.path.count(ptr nonnull @causal.path_fn.twice, ptr null)
// BAD-PATHS: error: -fplugin-arg-causal-paths=a,,b: invalid function list 'a,,b': expected NAME[,NAME]... without empty names
// MISSING: error: -fplugin-arg-causal-paths-file=[[FILE]]: cannot read the function list file '[[FILE]]': No such file or directory
