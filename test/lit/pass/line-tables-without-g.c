// Without -g the plugin raises debug info to line tables only: the object has
// .debug_line (the link step builds the profiler's table from it) but no
// variable or type information. Plain clang emits no DWARF at all.
// RUN: %clang -fplugin=%plugin -O2 -S -emit-llvm %s -o - | FileCheck %s --check-prefix=IR
// RUN: %clang -fplugin=%plugin -O2 -c %s -o %t.o
// RUN: %llvm_bin/llvm-readelf --sections %t.o | FileCheck %s --check-prefix=SECTIONS
// RUN: %llvm_bin/llvm-dwarfdump --debug-info --debug-line %t.o | FileCheck %s --check-prefix=DWARF
// At -O0 every statement has a row with its line:
// RUN: %clang -fplugin=%plugin -O0 -c %s -o %t.O0.o
// RUN: %llvm_bin/llvm-dwarfdump --debug-line %t.O0.o | FileCheck %s --check-prefix=ROW
// RUN: %clang -O2 -c %s -o %t.plain.o
// RUN: %llvm_bin/llvm-readelf --sections %t.plain.o | FileCheck %s --check-prefix=PLAIN
// -g0 is also raised: the profiler cannot work without line tables.
// RUN: %clang -fplugin=%plugin -g0 -O2 -c %s -o %t.g0.o
// RUN: %llvm_bin/llvm-readelf --sections %t.g0.o | FileCheck %s --check-prefix=SECTIONS

int accumulate(int n) {
  int total = 0;
  for (int i = 0; i < n; ++i)
    total += i * i; // ROW: {{^0x[0-9a-f]+ +}}[[@LINE]] {{.*}}is_stmt
  return total;
}

// IR: !DICompileUnit({{.*}}emissionKind: LineTablesOnly
// IR: !{i32 7, !"Dwarf Version", i32 5}
// SECTIONS: .debug_line
// DWARF:     DW_AT_name ("{{.*}}line-tables-without-g.c")
// DWARF-NOT: DW_TAG_variable
// DWARF-NOT: DW_TAG_base_type
// DWARF:     .debug_line contents:
// DWARF:     version: 5
// PLAIN-NOT: .debug_
