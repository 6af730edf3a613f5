; The code of a chosen function (causal/abi.h): after the entry block's
; allocas, a relaxed atomic load of the descriptor's `enabled` byte and a
; branch weighted unlikely to the call of the module's counter,
; causal.path.count; the token is a phi of 0 and the call's result; before
; every return (before the musttail call of a return that has one) a test of
; the token and, if nonzero, the call of __causal_path_exit. The counter
; (linkonce_odr hidden, one per image, noinline, cold) calls
; __causal_path_enter at once unless `enabled` is CAUSAL_PATH_FN_COUNTED;
; then only if the thread has no countdowns (a null thread-local) or the
; function's countdown, decremented, falls below zero; its call is a
; musttail call, so the runtime sees the chosen function's return address
; and frame. Both runtime functions and the thread-local are extern_weak.
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

; CHECK:       @__causal_path_countdowns = extern_weak thread_local(initialexec) global ptr, align 8
; CHECK-LABEL: define i32 @work(i32 %x)
; CHECK-NOT:   landingpad
; CHECK:       entry:
; CHECK-NEXT:    %slot = alloca i32, align 4
; CHECK-NEXT:    %causal.path.enabled = load atomic i8, ptr @causal.path_fn.work monotonic, align 8, !dbg [[FNLOC:![0-9]+]]
; CHECK-NEXT:    %causal.path.on = icmp ne i8 %causal.path.enabled, 0, !dbg [[FNLOC]]
; CHECK-NEXT:    br i1 %causal.path.on, label %causal.path.enter, label %causal.path.body, !dbg [[FNLOC]], !prof [[UNLIKELY:![0-9]+]]
; CHECK:       causal.path.enter:
; CHECK-NEXT:    %causal.path.entered = call i32 @causal.path.count(ptr @causal.path_fn.work, ptr null) #[[NOUNWIND:[0-9]+]], !dbg [[FNLOC]]
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
; CHECK:         call i32 @causal.path.count(ptr @causal.path_fn.forward, ptr null)
; CHECK:         call void @__causal_path_exit(ptr @causal.path_fn.forward, i32 %causal.path.token)
; CHECK:       causal.path.out:
; CHECK-NEXT:    %r = musttail call i32 @target(i32 %x)
; CHECK-NEXT:    ret i32 %r
; CHECK-LABEL: define void @nodebug()
; CHECK-NOT:   !dbg
; CHECK:         call i32 @causal.path.count(ptr @causal.path_fn.nodebug, ptr null) #[[NOUNWIND]]{{$}}
; CHECK-NOT:   !dbg
; CHECK:         call void @__causal_path_exit(ptr @causal.path_fn.nodebug, i32 %causal.path.token) #[[NOUNWIND]]{{$}}
; CHECK:         ret void
; CHECK-NEXT:  }
; CHECK:       declare extern_weak i32 @__causal_path_enter(ptr, ptr) #[[NOUNWIND]]
; CHECK-LABEL: define linkonce_odr hidden i32 @causal.path.count(
; CHECK-SAME:    ptr %fn, ptr %inlined_at) #[[COUNTER:[0-9]+]] comdat {
; CHECK-NEXT:  entry:
; CHECK-NEXT:    %enabled = load atomic i8, ptr %fn monotonic, align 8
; CHECK-NEXT:    %counted = icmp eq i8 %enabled, 2
; CHECK-NEXT:    br i1 %counted, label %countdowns, label %enter
; CHECK:       countdowns:
; CHECK-NEXT:    [[TLS:%[0-9]+]] = call align 8 ptr @llvm.threadlocal.address.p0(ptr align 8 @__causal_path_countdowns)
; CHECK-NEXT:    %countdowns1 = load ptr, ptr [[TLS]], align 8
; CHECK-NEXT:    %uncounted = icmp eq ptr %countdowns1, null
; CHECK-NEXT:    br i1 %uncounted, label %enter, label %countdown
; CHECK:       countdown:
; CHECK-NEXT:    [[IDAT:%[0-9]+]] = getelementptr inbounds i8, ptr %fn, i64 4
; CHECK-NEXT:    %id = load atomic i32, ptr [[IDAT]] monotonic, align 4
; CHECK-NEXT:    [[ID64:%[0-9]+]] = zext i32 %id to i64
; CHECK-NEXT:    %slot = getelementptr inbounds i32, ptr %countdowns1, i64 [[ID64]]
; CHECK-NEXT:    %count = load atomic i32, ptr %slot monotonic, align 4
; CHECK-NEXT:    %left = add i32 %count, -1
; CHECK-NEXT:    store atomic i32 %left, ptr %slot monotonic, align 4
; CHECK-NEXT:    %due = icmp slt i32 %left, 0
; CHECK-NEXT:    br i1 %due, label %enter, label %skip
; CHECK:       skip:
; CHECK-NEXT:    ret i32 0
; CHECK:       enter:
; CHECK-NEXT:    %token = musttail call i32 @__causal_path_enter(ptr %fn, ptr %inlined_at) #[[NOUNWIND]]
; CHECK-NEXT:    ret i32 %token
; CHECK-NEXT:  }
; CHECK-DAG:   declare extern_weak void @__causal_path_exit(ptr, i32) #[[NOUNWIND]]
; CHECK-DAG:   attributes #[[NOUNWIND]] = { nounwind }
; CHECK-DAG:   attributes #[[COUNTER]] = { cold noinline nounwind "frame-pointer"="all" }
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
