; The code of a chosen function (causal/abi.h): after the entry block's
; allocas, a relaxed atomic load of the descriptor's `enabled` byte and a
; branch weighted unlikely to the call of __causal_path_enter; the token is a
; phi of 0 and the call's result; before every return (before the musttail
; call of a return that has one) a test of the token and, if nonzero, the
; call of __causal_path_exit. Both functions are extern_weak and nounwind.
; The inserted code is on the function's line of its DISubprogram; in a
; function without one, it has no location. A nounwind function gets no
; landing pad. The result verifies (opt verifies its output).
; RUN: %opt -load-pass-plugin %plugin -passes=causal-instrument -causal-paths=work,forward,nodebug -S %s -o - | FileCheck %s

target triple = "x86_64-unknown-linux-gnu"

declare i32 @target(i32)

define i32 @work(i32 %x) nounwind !dbg !5 {
entry:
  %slot = alloca i32, align 4
  store i32 %x, ptr %slot, !dbg !8
  %c = icmp eq i32 %x, 0, !dbg !8
  br i1 %c, label %zero, label %more, !dbg !8
zero:
  ret i32 0, !dbg !9
more:
  %y = add i32 %x, 1, !dbg !10
  ret i32 %y, !dbg !10
}

define i32 @forward(i32 %x) {
  %r = musttail call i32 @target(i32 %x)
  ret i32 %r
}

define void @nodebug() {
  ret void
}

; CHECK-LABEL: define i32 @work(i32 %x)
; CHECK-NOT:   landingpad
; CHECK:       entry:
; CHECK-NEXT:    %slot = alloca i32, align 4
; CHECK-NEXT:    %causal.path.enabled = load atomic i8, ptr @causal.path_fn.work monotonic, align 8, !dbg [[FNLOC:![0-9]+]]
; CHECK-NEXT:    %causal.path.on = icmp ne i8 %causal.path.enabled, 0, !dbg [[FNLOC]]
; CHECK-NEXT:    br i1 %causal.path.on, label %causal.path.enter, label %causal.path.body, !dbg [[FNLOC]], !prof [[UNLIKELY:![0-9]+]]
; CHECK:       causal.path.enter:
; CHECK-NEXT:    %causal.path.entered = call i32 @__causal_path_enter(ptr @causal.path_fn.work, ptr null) #[[NOUNWIND:[0-9]+]], !dbg [[FNLOC]]
; CHECK-NEXT:    br label %causal.path.body, !dbg [[FNLOC]]
; CHECK:       causal.path.body:
; CHECK-NEXT:    %causal.path.token = phi i32 [ 0, %entry ], [ %causal.path.entered, %causal.path.enter ], !dbg [[FNLOC]]
; CHECK-NEXT:    store i32 %x, ptr %slot
; CHECK:       zero:
; CHECK-NEXT:    %causal.path.recorded = icmp ne i32 %causal.path.token, 0, !dbg [[RET0:![0-9]+]]
; CHECK-NEXT:    br i1 %causal.path.recorded, label %causal.path.exit, label %causal.path.out, !dbg [[RET0]], !prof [[UNLIKELY]]
; CHECK:       causal.path.exit:
; CHECK-NEXT:    call void @__causal_path_exit(ptr @causal.path_fn.work, i32 %causal.path.token) #[[NOUNWIND]], !dbg [[RET0]]
; CHECK:       causal.path.out:
; CHECK-NEXT:    ret i32 0, !dbg [[RET0]]
; CHECK:       more:
; CHECK:         %causal.path.recorded{{[0-9]+}} = icmp ne i32 %causal.path.token, 0
; CHECK:         call void @__causal_path_exit(ptr @causal.path_fn.work, i32 %causal.path.token)
; CHECK:         ret i32 %y
; CHECK-NOT:   __causal_path_exit
; CHECK-LABEL: define i32 @forward(
; CHECK:         call i32 @__causal_path_enter(ptr @causal.path_fn.forward, ptr null)
; CHECK:         call void @__causal_path_exit(ptr @causal.path_fn.forward, i32 %causal.path.token)
; CHECK:       causal.path.out:
; CHECK-NEXT:    %r = musttail call i32 @target(i32 %x)
; CHECK-NEXT:    ret i32 %r
; CHECK-LABEL: define void @nodebug()
; CHECK-NOT:   !dbg
; CHECK:         call i32 @__causal_path_enter(ptr @causal.path_fn.nodebug, ptr null) #[[NOUNWIND]]{{$}}
; CHECK-NOT:   !dbg
; CHECK:         call void @__causal_path_exit(ptr @causal.path_fn.nodebug, i32 %causal.path.token) #[[NOUNWIND]]{{$}}
; CHECK:         ret void
; CHECK-NEXT:  }
; CHECK-DAG:   declare extern_weak i32 @__causal_path_enter(ptr, ptr) #[[NOUNWIND]]
; CHECK-DAG:   declare extern_weak void @__causal_path_exit(ptr, i32) #[[NOUNWIND]]
; CHECK-DAG:   attributes #[[NOUNWIND]] = { nounwind }
; CHECK-DAG:   [[UNLIKELY]] = !{!"branch_weights", i32 1, i32 1048576}
; CHECK-DAG:   [[FNLOC]] = !DILocation(line: 7, scope: [[SP:![0-9]+]])
; CHECK-DAG:   [[SP]] = distinct !DISubprogram(name: "work"
; CHECK-DAG:   [[RET0]] = !DILocation(line: 10, column: 3, scope: [[SP]])

!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!3, !4}
!0 = distinct !DICompileUnit(language: DW_LANG_C11, file: !1, producer: "test", isOptimized: false, runtimeVersion: 0, emissionKind: LineTablesOnly)
!1 = !DIFile(filename: "work.c", directory: "/src")
!3 = !{i32 2, !"Debug Info Version", i32 3}
!4 = !{i32 7, !"Dwarf Version", i32 5}
!5 = distinct !DISubprogram(name: "work", scope: !1, file: !1, line: 7, type: !6, scopeLine: 8, spFlags: DISPFlagDefinition, unit: !0)
!6 = !DISubroutineType(types: !7)
!7 = !{}
!8 = !DILocation(line: 9, column: 3, scope: !5)
!9 = !DILocation(line: 10, column: 3, scope: !5)
!10 = !DILocation(line: 11, column: 3, scope: !5)
