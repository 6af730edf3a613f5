// Progress points named through plugin arguments: a malformed spec is an
// error naming it; a line of this translation unit's source file without code
// is an error naming the spec and the file; a line of another file and a
// function this translation unit does not define are fine (other translation
// units may have them).
// RUN: not %clang -fplugin=%plugin -fplugin-arg-causal-progress=nocolon -c %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=MALFORMED-LINE
// RUN: not %clang -fplugin=%plugin -fplugin-arg-causal-progress=a.c:0 -c %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not %clang -fplugin=%plugin -fplugin-arg-causal-progress-fn= -c %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=EMPTY-FN
// RUN: not %clang -fplugin=%plugin -fplugin-arg-causal-latency=lat:a.c:3 -c %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=LATENCY
// RUN: not %clang -fplugin=%plugin -fplugin-arg-causal-progress=progress-spec-errors.c:2 -c %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=NO-CODE
// RUN: not %clang -fplugin=%plugin -fplugin-arg-causal-latency=l:fn:twice:progress-spec-errors.c:3 -c %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=NO-CODE-LATENCY
// RUN: %clang -fplugin=%plugin -fplugin-arg-causal-progress=other.c:2 -fplugin-arg-causal-progress-fn=not_here \
// RUN:   -fplugin-arg-causal-latency=l:fn:a::b:other.c:9 -fplugin-arg-causal-progress=progress-spec-errors.c:23 -O2 -S -emit-llvm %s -o - | FileCheck %s --check-prefix=FINE
// (line 23 is the return of twice)
// RUN: sed -n 23p %s | grep -q "return 2"
// The same through opt's options.
// RUN: %clang -O0 -gline-tables-only -Xclang -disable-O0-optnone -S -emit-llvm %s -o %t.ll
// RUN: not %opt -load-pass-plugin %plugin -passes=causal-instrument -causal-latency=x -disable-output %t.ll 2>&1 | FileCheck %s --check-prefix=OPT-MALFORMED
// RUN: not %opt -load-pass-plugin %plugin -passes=causal-instrument -causal-progress=progress-spec-errors.c:3 -disable-output %t.ll 2>&1 | FileCheck %s --check-prefix=OPT-NO-CODE
// RUN: %opt -load-pass-plugin %plugin -passes=causal-instrument -causal-progress=progress-spec-errors.c:23=twice-line -S %t.ll | FileCheck %s --check-prefix=OPT-FINE

int twice(int x) {
  return 2 * x;
}

// MALFORMED-LINE: error: -fplugin-arg-causal-progress=nocolon: invalid progress point 'nocolon': expected FILE:LINE[=NAME] (FILE without ':', LINE a positive number)
// ZERO: error: -fplugin-arg-causal-progress=a.c:0: invalid progress point 'a.c:0'
// EMPTY-FN: error: -fplugin-arg-causal-progress-fn=: invalid progress function ''
// LATENCY: error: -fplugin-arg-causal-latency=lat:a.c:3: invalid latency point 'lat:a.c:3': expected NAME:BEGIN:END with BEGIN and END each FILE:LINE or fn:FUNC (NAME and FILE without ':')
// NO-CODE: error: causal: progress point '-fcausal-progress=progress-spec-errors.c:2': line 2 of {{.*}}progress-spec-errors.c has no code
// NO-CODE-LATENCY: error: causal: progress point '-fcausal-latency=l:fn:twice:progress-spec-errors.c:3': line 3 of {{.*}}progress-spec-errors.c has no code
// FINE: define {{.*}} @twice(
// FINE: atomicrmw add ptr @"causal.counter.1.progress-spec-errors.c:23", i64 1 monotonic
// OPT-MALFORMED: error: causal: invalid latency point 'x'
// OPT-NO-CODE: error: causal: progress point '-fcausal-progress=progress-spec-errors.c:3': line 3 of {{.*}}progress-spec-errors.c has no code
// OPT-FINE: atomicrmw add ptr @causal.counter.1.twice-line, i64 1 monotonic
