/*
# How causal-ld treats links that are not the ordinary case.
RUN: rm -rf %t && mkdir -p %t

No DWARF line info: one plain link, no table, the runtime still linked.
RUN: %clang -O2 --ld-path=%causal-ld %S/Inputs/dso_main.c %S/Inputs/dso_lib.c -o %t/nodebug
RUN: llvm-readelf -S %t/nodebug | FileCheck %s --check-prefix=NOTABLE --implicit-check-not=causal_lines
RUN: llvm-readelf -d %t/nodebug | FileCheck %s --check-prefix=NEEDED
NOTABLE: .text
NEEDED: (NEEDED)
NEEDED-SAME: [libcausal_rt.so]

-r: passed through (no table, no runtime); the final link embeds the table.
RUN: %clang -gline-tables-only -O1 -c %S/Inputs/dso_main.c -o %t/main.o
RUN: %clang -gline-tables-only -O1 -c %S/Inputs/dso_lib.c -o %t/lib.o
RUN: %causal-ld -r %t/main.o %t/lib.o -o %t/both.o
RUN: llvm-readelf -h -S %t/both.o | FileCheck %s --check-prefix=RELOC --implicit-check-not=causal_lines
RELOC: Type: REL (Relocatable file)
RUN: %clang -gline-tables-only --ld-path=%causal-ld %t/both.o -o %t/from-r
RUN: %clang -gline-tables-only --ld-path=%causal-ld %t/both.o -o %t/from-r.g -g
RUN: %causal lines --check --dwarf %t/from-r.g %t/from-r --min-bytes 100 | FileCheck %s

--gc-sections: the sequence of the collected function is dropped, its lines
are not in the table.
RUN: %clang -gline-tables-only -O1 -ffunction-sections --ld-path=%causal-ld -Wl,--gc-sections %s -o %t/gc
RUN: %clang -gline-tables-only -O1 -ffunction-sections --ld-path=%causal-ld -Wl,--gc-sections %s -o %t/gc.g -g
RUN: %causal lines --check --dwarf %t/gc.g %t/gc --min-bytes 100 | FileCheck %s
RUN: %causal lines %t/gc | FileCheck %s --check-prefix=GC -DFILE=%s
GC: line table version 2

Response files are expanded: an -S inside one is still held back until the
table is embedded, and the other options reach the real linker.
RUN: echo "-S --defsym causal_rsp_marker=0x1234" > %t/args.rsp
RUN: %clang -gline-tables-only -O2 --ld-path=%causal-ld -Wl,@%t/args.rsp %S/Inputs/dso_main.c %S/Inputs/dso_lib.c -o %t/rsp
RUN: llvm-readelf -S %t/rsp | FileCheck %s --check-prefix=RSP --implicit-check-not=.debug_
RUN: llvm-nm %t/rsp | FileCheck %s --check-prefix=RSPSYM
RSP: causal_lines
RSPSYM: 0000000000001234 A causal_rsp_marker

The real linker's exit status is causal-ld's; CAUSAL_REAL_LD chooses it.
RUN: cp %S/Inputs/fake_ld.py %t/fake-ld
RUN: chmod +x %t/fake-ld
RUN: env FAKE_LD_LOG=%t/fake.log CAUSAL_REAL_LD=%t/fake-ld %python %S/Inputs/exit_status.py %causal-ld %t/main.o -o %t/never | FileCheck %s --check-prefix=STATUS
RUN: FileCheck %s --check-prefix=FAKEARGS < %t/fake.log
STATUS: exit status: 3
FAKEARGS: -lcausal_rt
FAKEARGS: {{.*}}main.o
RUN: env CAUSAL_REAL_LD=/nonexistent/ld not %causal-ld %t/main.o -o %t/never 2>&1 | FileCheck %s --check-prefix=NOLD
NOLD: causal-ld: error: CAUSAL_REAL_LD=/nonexistent/ld: no such executable

A failing link: the linker's message appears once, its status is returned.
RUN: not %clang -gline-tables-only --ld-path=%causal-ld %S/Inputs/dso_main.c -o %t/undef 2>&1 | FileCheck %s --check-prefix=UNDEF --implicit-check-not="undefined reference"
UNDEF: undefined reference to `dso_scale'
UNDEF: linker command failed with exit code 1

Temporary files are removed after a link and after a failed link (lto.test:
after ThinLTO links).
RUN: rm -rf %t/tmp && mkdir %t/tmp
RUN: env TMPDIR=%t/tmp %clang -gline-tables-only -O1 --ld-path=%causal-ld %S/Inputs/dso_main.c %S/Inputs/dso_lib.c -o %t/tmp-ok
RUN: env TMPDIR=%t/tmp not %clang -gline-tables-only --ld-path=%causal-ld %S/Inputs/dso_main.c -o %t/tmp-fail
RUN: ls -A %t/tmp | count 0

--version is passed straight through.
RUN: %causal-ld --version | FileCheck %s --check-prefix=VERSION
RUN: %causal-ld.lld --version | FileCheck %s --check-prefix=LLDVERSION
VERSION: GNU ld
LLDVERSION: LLD

CHECK: code bytes: {{[0-9]+}} in {{[0-9]+}} executable sections, [[N:[1-9][0-9]*]] with a source line
CHECK-NEXT: bytes agreeing: [[N]] of [[N]] (100.00 %)
*/
int unused_function(int x) {
  // GC-NOT: [[FILE]]:[[#@LINE+1]]
  return x * 3 + 1;
}

int main(void) {
  return 0;
}
