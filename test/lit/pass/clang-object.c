// In the object file: constructor and destructor, each with its
// .init_array.101/.fini_array.101 entry in a COMDAT group of its own name,
// and undefined weak references to the runtime and the section bounds.
// RUN: %clang -fplugin=%plugin -O0 -c %s -o %t.O0.o
// RUN: %llvm_bin/llvm-readelf --section-groups %t.O0.o | FileCheck %s
// RUN: %llvm_bin/llvm-readelf --symbols %t.O0.o | FileCheck %s --check-prefix=SYMBOLS
// RUN: %clang -fplugin=%plugin -O2 -c %s -o %t.O2.o
// RUN: %llvm_bin/llvm-readelf --section-groups %t.O2.o | FileCheck %s
// RUN: %llvm_bin/llvm-readelf --symbols %t.O2.o | FileCheck %s --check-prefix=SYMBOLS

int twice(int x) { return 2 * x; }

// CHECK:      COMDAT group section {{.*}} [causal.module_ctor] contains
// CHECK-NEXT:    [Index]    Name
// CHECK-DAG:     .text.causal.module_ctor
// CHECK-DAG:     .init_array.101
// CHECK:      COMDAT group section {{.*}} [causal.module_dtor] contains
// CHECK-NEXT:    [Index]    Name
// CHECK-DAG:     .text.causal.module_dtor
// CHECK-DAG:     .fini_array.101
// SYMBOLS-DAG: FUNC    WEAK   HIDDEN   {{.*}} causal.module_ctor
// SYMBOLS-DAG: FUNC    WEAK   HIDDEN   {{.*}} causal.module_dtor
// SYMBOLS-DAG: NOTYPE  WEAK   DEFAULT  UND __causal_register_module
// SYMBOLS-DAG: NOTYPE  WEAK   DEFAULT  UND __causal_unregister_module
// SYMBOLS-DAG: NOTYPE  WEAK   HIDDEN   UND __start_causal_lines
// SYMBOLS-DAG: NOTYPE  WEAK   HIDDEN   UND __stop_causal_lines
