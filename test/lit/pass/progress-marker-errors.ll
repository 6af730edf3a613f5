; A marker whose name is not a constant string, or whose kind is not a
; constant 1, 2 or 3, is a compile error at the call's source location.
; RUN: rm -rf %t && split-file %s %t
; RUN: not %opt -load-pass-plugin %plugin -passes=causal-instrument -disable-output %t/variable-name.ll 2>&1 | FileCheck %s --check-prefix=NAME
; RUN: not %opt -load-pass-plugin %plugin -passes=causal-instrument -disable-output %t/variable-kind.ll 2>&1 | FileCheck %s --check-prefix=KIND
; RUN: not %opt -load-pass-plugin %plugin -passes=causal-instrument -disable-output %t/unknown-kind.ll 2>&1 | FileCheck %s --check-prefix=KIND
; RUN: not %opt -load-pass-plugin %plugin -passes=causal-instrument -disable-output %t/empty-name.ll 2>&1 | FileCheck %s --check-prefix=NAME
; The same from C through clang, at the user's line.
; RUN: not %clang -fplugin=%plugin -c -x c %t/name.c -o /dev/null 2>&1 | FileCheck %s --check-prefix=CLANG

; NAME: error: app.c:12:5: in function f void (ptr): causal: invalid progress point: the name must be a non-empty constant string (a string literal)
; KIND: error: app.c:12:5: in function f void (ptr): causal: invalid progress point: the kind must be a constant CAUSAL_COUNTER_THROUGHPUT, _BEGIN or _END
; CLANG: name.c:4:5: error: causal: invalid progress point: the name must be a non-empty constant string (a string literal)
; CLANG-NEXT: 4 | __causal_progress_marker(1, name);

;--- name.c
__attribute__((weak)) void __causal_progress_marker(unsigned kind, const char *name);
void f(const char *name) {
  if (__causal_progress_marker)
    __causal_progress_marker(1, name);
}
;--- variable-name.ll
target triple = "x86_64-unknown-linux-gnu"
declare extern_weak void @__causal_progress_marker(i32, ptr)
define void @f(ptr %name) !dbg !5 {
  call void @__causal_progress_marker(i32 1, ptr %name), !dbg !8
  ret void
}
!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!3}
!0 = distinct !DICompileUnit(language: DW_LANG_C11, file: !1, emissionKind: LineTablesOnly)
!1 = !DIFile(filename: "app.c", directory: "/src")
!3 = !{i32 2, !"Debug Info Version", i32 3}
!5 = distinct !DISubprogram(name: "f", scope: !1, file: !1, line: 11, type: !6, spFlags: DISPFlagDefinition, unit: !0)
!6 = !DISubroutineType(types: !{})
!8 = !DILocation(line: 12, column: 5, scope: !5)
;--- variable-kind.ll
target triple = "x86_64-unknown-linux-gnu"
@.str = private unnamed_addr constant [2 x i8] c"n\00", align 1
declare extern_weak void @__causal_progress_marker(i32, ptr)
define void @f(ptr %p) !dbg !5 {
  %kind = load i32, ptr %p
  call void @__causal_progress_marker(i32 %kind, ptr @.str), !dbg !8
  ret void
}
!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!3}
!0 = distinct !DICompileUnit(language: DW_LANG_C11, file: !1, emissionKind: LineTablesOnly)
!1 = !DIFile(filename: "app.c", directory: "/src")
!3 = !{i32 2, !"Debug Info Version", i32 3}
!5 = distinct !DISubprogram(name: "f", scope: !1, file: !1, line: 11, type: !6, spFlags: DISPFlagDefinition, unit: !0)
!6 = !DISubroutineType(types: !{})
!8 = !DILocation(line: 12, column: 5, scope: !5)
;--- unknown-kind.ll
target triple = "x86_64-unknown-linux-gnu"
@.str = private unnamed_addr constant [2 x i8] c"n\00", align 1
declare extern_weak void @__causal_progress_marker(i32, ptr)
define void @f(ptr %p) !dbg !5 {
  call void @__causal_progress_marker(i32 7, ptr @.str), !dbg !8
  ret void
}
!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!3}
!0 = distinct !DICompileUnit(language: DW_LANG_C11, file: !1, emissionKind: LineTablesOnly)
!1 = !DIFile(filename: "app.c", directory: "/src")
!3 = !{i32 2, !"Debug Info Version", i32 3}
!5 = distinct !DISubprogram(name: "f", scope: !1, file: !1, line: 11, type: !6, spFlags: DISPFlagDefinition, unit: !0)
!6 = !DISubroutineType(types: !{})
!8 = !DILocation(line: 12, column: 5, scope: !5)
;--- empty-name.ll
target triple = "x86_64-unknown-linux-gnu"
@.empty = private unnamed_addr constant [1 x i8] zeroinitializer, align 1
declare extern_weak void @__causal_progress_marker(i32, ptr)
define void @f(ptr %p) !dbg !5 {
  call void @__causal_progress_marker(i32 1, ptr @.empty), !dbg !8
  ret void
}
!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!3}
!0 = distinct !DICompileUnit(language: DW_LANG_C11, file: !1, emissionKind: LineTablesOnly)
!1 = !DIFile(filename: "app.c", directory: "/src")
!3 = !{i32 2, !"Debug Info Version", i32 3}
!5 = distinct !DISubprogram(name: "f", scope: !1, file: !1, line: 11, type: !6, spFlags: DISPFlagDefinition, unit: !0)
!6 = !DISubroutineType(types: !{})
!8 = !DILocation(line: 12, column: 5, scope: !5)
