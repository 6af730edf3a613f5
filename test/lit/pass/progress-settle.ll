; Before every progress point increment the pass emits the settling check of
; causal/abi.h: the runtime's flag __causal_delays_active (extern_weak; a zero
; of the module when the runtime is absent) is loaded atomically, and while it
; is nonzero (an experiment runs; branch weighted unlikely) the thread calls
; __causal_progress_visit(counter) to pay what it owes before it is counted
; (and to record a latency visit's time). For
; causal.h markers, build-time points (here a function latency point) and the
; inline increments of Coz's coz.h (a counter pointer stored from
; _call_coz_get_counter, loaded, its first field atomically incremented). Run
; twice, the pass adds nothing more; with -causal-settle-at-progress=false
; there is no check.
; RUN: %opt -load-pass-plugin %plugin -passes=causal-instrument -causal-latency=req:fn:serve:fn:serve -S %s -o - | FileCheck %s
; RUN: %opt -load-pass-plugin %plugin -passes=causal-instrument -causal-latency=req:fn:serve:fn:serve -S %s -o - \
; RUN:   | %opt -load-pass-plugin %plugin -passes=causal-instrument -S -o - | FileCheck %s --check-prefix=TWICE
; RUN: %opt -load-pass-plugin %plugin -passes=causal-instrument -causal-settle-at-progress=false -S %s -o - | FileCheck %s --check-prefix=OFF

target triple = "x86_64-unknown-linux-gnu"

%struct.coz_counter_t = type { i64, i64 }

@.str.loop = private unnamed_addr constant [9 x i8] c"loop.c:7\00", align 1
@.str.coz = private unnamed_addr constant [4 x i8] c"coz\00", align 1
@step._counter = internal global ptr null, align 8
@step._initialized = internal global i8 0, align 1

declare extern_weak void @__causal_progress_marker(i32, ptr)
declare void @work()

; CHECK-DAG: @__causal_delays_active = extern_weak global i32, align 4
; CHECK-DAG: @causal.no_delays = private constant i32 0, align 4

define void @throughput() {
entry:
  call void @__causal_progress_marker(i32 1, ptr @.str.loop)
  ret void
}
; CHECK-LABEL: define void @throughput()
; CHECK-NEXT:  entry:
; CHECK-NEXT:    %[[PRESENT:.+]] = icmp ne ptr @__causal_delays_active, null
; CHECK-NEXT:    %[[FLAG:.+]] = select i1 %[[PRESENT]], ptr @__causal_delays_active, ptr @causal.no_delays
; CHECK-NEXT:    %[[ACTIVE:.+]] = load atomic i32, ptr %[[FLAG]] monotonic, align 4
; CHECK-NEXT:    %[[OWED:.+]] = icmp ne i32 %[[ACTIVE]], 0
; CHECK-NEXT:    br i1 %[[OWED]], label %[[SETTLE:.+]], label %[[COUNT:.+]], !prof ![[UNLIKELY:[0-9]+]]
; CHECK:       [[SETTLE]]:
; CHECK-NEXT:    call void @__causal_progress_visit(ptr @"causal.counter.1.loop.c:7")
; CHECK-NEXT:    br label %[[COUNT]]
; CHECK:       [[COUNT]]:
; CHECK-NEXT:    atomicrmw add ptr @"causal.counter.1.loop.c:7", i64 1 monotonic, align 8
; CHECK-NEXT:    ret void

; A function latency point: begin at the entry, end before the return.
define i32 @serve(i32 %x) {
entry:
  call void @work()
  ret i32 %x
}
; CHECK-LABEL: define i32 @serve(
; CHECK:         load atomic i32, ptr %{{.+}} monotonic, align 4
; CHECK:         call void @__causal_progress_visit(ptr @causal.counter.2.req)
; CHECK:         atomicrmw add ptr @causal.counter.2.req, i64 1 monotonic, align 8
; CHECK-NEXT:    call void @work()
; CHECK:         load atomic i32, ptr %{{.+}} monotonic, align 4
; CHECK:         call void @__causal_progress_visit(ptr @causal.counter.3.req)
; CHECK:         atomicrmw add ptr @causal.counter.3.req, i64 1 monotonic, align 8
; CHECK-NEXT:    ret i32 %x

; COZ_PROGRESS_NAMED("coz") as clang emits it before optimization.
define internal ptr @_call_coz_get_counter(i32 %type, ptr %name) {
  ret ptr null
}
define void @step() {
entry:
  %init = load i8, ptr @step._initialized, align 1
  %fresh = icmp eq i8 %init, 0
  br i1 %fresh, label %get, label %have
get:
  %c = call ptr @_call_coz_get_counter(i32 1, ptr @.str.coz)
  store ptr %c, ptr @step._counter, align 8
  store i8 1, ptr @step._initialized, align 1
  br label %have
have:
  %p = load ptr, ptr @step._counter, align 8
  %nonnull = icmp ne ptr %p, null
  br i1 %nonnull, label %inc, label %out
inc:
  %q = load ptr, ptr @step._counter, align 8
  %count = getelementptr inbounds %struct.coz_counter_t, ptr %q, i32 0, i32 0
  %old = atomicrmw add ptr %count, i64 1 monotonic, align 8
  br label %out
out:
  ret void
}
; CHECK-LABEL: define void @step()
; CHECK:       inc:
; CHECK:         %[[CFLAG:.+]] = select i1 %{{.+}}, ptr @__causal_delays_active, ptr @causal.no_delays
; CHECK-NEXT:    load atomic i32, ptr %[[CFLAG]] monotonic, align 4
; CHECK:         call void @__causal_progress_visit(ptr %count)
; CHECK:         %old = atomicrmw add ptr %count, i64 1 monotonic, align 8, !causal.settled
; CHECK:       declare extern_weak void @__causal_progress_visit(ptr)
; CHECK:       ![[UNLIKELY]] = !{!"branch_weights", i32 1, i32 1048576}

; TWICE-COUNT-4: call void @__causal_progress_visit(
; TWICE-NOT:     call void @__causal_progress_visit(

; OFF-NOT: __causal_progress_visit
; OFF-NOT: __causal_delays_active
