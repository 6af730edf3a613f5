// A C program built with causal-clang -fcausal-profile, so linked through
// causal-ld (GNU ld, the default): the embedded
// table matches the DWARF of a -g copy on every code byte, at -O0 and -O2,
// PIE and not, DWARF 5 (default); and DWARF 4 from plain clang with
// --ld-path=causal-ld (the link step does not need the compiler plugin).
//
// RUN: %causal-clang -fcausal-profile -O0 %s -o %t.O0
// RUN: %causal-clang -fcausal-profile -O0 %s -o %t.O0.g -g
// RUN: %causal lines --check --dwarf %t.O0.g %t.O0 --min-bytes 100 | FileCheck %s --check-prefix=CHECK
// RUN: %causal-clang -fcausal-profile -O2 %s -o %t.O2
// RUN: %causal-clang -fcausal-profile -O2 %s -o %t.O2.g -g
// RUN: %causal lines --check --dwarf %t.O2.g %t.O2 --min-bytes 100 | FileCheck %s --check-prefix=CHECK
// RUN: %causal-clang -fcausal-profile -O2 -no-pie %s -o %t.nopie
// RUN: %causal-clang -fcausal-profile -O2 -no-pie %s -o %t.nopie.g -g
// RUN: %causal lines --check --dwarf %t.nopie.g %t.nopie --min-bytes 100 | FileCheck %s --check-prefix=CHECK
// RUN: %clang -gline-tables-only -gdwarf-4 -O1 --ld-path=%causal-ld %s -o %t.dw4
// RUN: %clang -gline-tables-only -gdwarf-4 -O1 --ld-path=%causal-ld %s -o %t.dw4.g -g
// RUN: %causal lines --check --dwarf %t.dw4.g %t.dw4 --min-bytes 100 | FileCheck %s --check-prefix=CHECK
//
// llvm-symbolizer, independently, agrees with every row.
// RUN: %python %S/Inputs/symbolizer_agrees.py %causal %llvm_bin/llvm-symbolizer %t.O2 %t.O2.g | FileCheck %s --check-prefix=SYMB
// RUN: %python %S/Inputs/symbolizer_agrees.py %causal %llvm_bin/llvm-symbolizer %t.dw4 %t.dw4.g | FileCheck %s --check-prefix=SYMB
// RUN: %python %S/Inputs/symbolizer_agrees.py %causal %llvm_bin/llvm-symbolizer %t.nopie %t.nopie.g | FileCheck %s --check-prefix=SYMB
//
// The printed table names this file's lines, -O0 keeps each statement.
// RUN: %causal lines %t.O0 | FileCheck %s --check-prefix=PRINT -DFILE=%s
//
// The program behaves as when linked without causal-ld.
// RUN: %clang -gline-tables-only -O2 %s -o %t.plain
// RUN: %t.plain a b > %t.plain.out
// RUN: env CAUSAL_DISABLE=1 %t.O2 a b > %t.O2.out
// RUN: diff %t.plain.out %t.O2.out
//
// CHECK: code bytes: {{[0-9]+}} in {{[0-9]+}} executable sections, [[N:[1-9][0-9]*]] with a source line
// CHECK-NEXT: bytes agreeing: [[N]] of [[N]] (100.00 %)
// SYMB: rows checked: {{[1-9][0-9]*}}, disagreeing: 0
// PRINT: line table version 2 in section causal_lines at 0x{{[0-9a-f]+}}
// PRINT-NEXT: code 0x{{[0-9a-f]+}}-0x{{[0-9a-f]+}}: {{[0-9]+}} rows, {{[0-9]+}} lines, 1 files
#include <stdio.h>

static int weigh(int x) {
  int total = 0;
  for (int i = 0; i < x * 16; ++i)
    // PRINT-DAG: [[FILE]]:[[#@LINE+1]]
    total += i % 7;
  // PRINT-DAG: [[FILE]]:[[#@LINE+1]]
  return total;
}

int main(int argc, char **argv) {
  (void)argv;
  int result = argc > 1 ? weigh(argc * 30) : 0;
  // PRINT-DAG: [[FILE]]:[[#@LINE+1]]
  printf("%d\n", result);
  return 0;
}
