// The pass runs once per compilation: with -fplugin, with -fpass-plugin, and
// with both naming the same file. Its progress point phase runs once too,
// before it (at PipelineStart).
// RUN: %clang -fplugin=%plugin -O2 -c %s -o /dev/null -Xclang -fdebug-pass-manager 2>&1 | FileCheck %s
// RUN: %clang -fpass-plugin=%plugin -O2 -c %s -o /dev/null -Xclang -fdebug-pass-manager 2>&1 | FileCheck %s
// RUN: %clang -fplugin=%plugin -fpass-plugin=%plugin -O2 -c %s -o /dev/null -Xclang -fdebug-pass-manager 2>&1 | FileCheck %s
// RUN: %clang -fplugin=%plugin -fpass-plugin=%plugin -O0 -c %s -o /dev/null -Xclang -fdebug-pass-manager 2>&1 | FileCheck %s
// Two source files in one driver run: once each.
// RUN: rm -rf %t && mkdir -p %t && cp %s %t/a.c && cp %s %t/b.c
// RUN: cd %t && %clang -fplugin=%plugin -O2 -c a.c b.c -Xclang -fdebug-pass-manager 2>&1 | FileCheck %s --check-prefix=TWO

int twice(int x) { return 2 * x; }

// CHECK-COUNT-1: Running pass: causal::CausalProgressPointPass on [module]
// CHECK-NOT:     Running pass: causal::CausalProgressPointPass
// CHECK-COUNT-1: Running pass: causal::CausalInstrumentPass on [module]
// CHECK-NOT:     Running pass: causal::Causal
// TWO-COUNT-1:   Running pass: causal::CausalProgressPointPass on [module]
// TWO-COUNT-1:   Running pass: causal::CausalInstrumentPass on [module]
// TWO-COUNT-1:   Running pass: causal::CausalProgressPointPass on [module]
// TWO-COUNT-1:   Running pass: causal::CausalInstrumentPass on [module]
// TWO-NOT:       Running pass: causal::Causal

