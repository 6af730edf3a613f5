// A user's -g is never lowered: full debug info stays full (variables and
// types in .debug_info), and -gline-tables-only stays as it is.
// RUN: %clang -fplugin=%plugin -g -O0 -S -emit-llvm %s -o - | FileCheck %s --check-prefix=FULL-IR
// RUN: %clang -fplugin=%plugin -g -O0 -c %s -o %t.o
// RUN: %llvm_bin/llvm-dwarfdump --debug-info %t.o | FileCheck %s --check-prefix=FULL
// RUN: %clang -fplugin=%plugin -gline-tables-only -O0 -S -emit-llvm %s -o - | FileCheck %s --check-prefix=LINES-IR
// A user's DWARF version is kept too.
// RUN: %clang -fplugin=%plugin -gdwarf-4 -O0 -S -emit-llvm %s -o - | FileCheck %s --check-prefix=DWARF4

struct point {
  int x, y;
};

int manhattan(struct point p) {
  int distance = p.x + p.y;
  return distance;
}

// FULL-IR: !DICompileUnit({{.*}}emissionKind: FullDebug
// FULL-IR: !DILocalVariable(name: "distance"
// FULL: DW_TAG_variable
// FULL: DW_AT_name ("distance")
// FULL: DW_TAG_structure_type
// LINES-IR: !DICompileUnit({{.*}}emissionKind: LineTablesOnly
// DWARF4-DAG: !{i32 7, !"Dwarf Version", i32 4}
// DWARF4-DAG: !DICompileUnit({{.*}}emissionKind: FullDebug
