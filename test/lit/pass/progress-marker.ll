; The marker calls of causal/causal.h become inline relaxed atomic increments
; of one counter per (kind, name): linkonce_odr hidden, in a COMDAT of its own
; name together with its name string, in section causal_counters, 8-byte
; aligned, initialized to {0, name, kind, 0}. The null checks of the marker
; fold to true, their branches are folded, and the marker is gone: no call and
; no reference to its address remain. Calls and invokes. (The settling check
; before each increment is progress-settle.ll's subject: off here.)
; RUN: %opt -load-pass-plugin %plugin -passes=causal-instrument -causal-settle-at-progress=false -S %s -o - | FileCheck %s
; RUN: %opt -load-pass-plugin %plugin -passes=causal-instrument -S %s -o - | FileCheck %s --check-prefix=GONE

target triple = "x86_64-unknown-linux-gnu"

@.str.loop = private unnamed_addr constant [9 x i8] c"loop.c:7\00", align 1
@.str.req = private unnamed_addr constant [4 x i8] c"req\00", align 1

declare extern_weak void @__causal_progress_marker(i32, ptr)
declare void @work()
declare i32 @__gxx_personality_v0(...)

; CHECK-DAG: $"causal.counter.1.loop.c:7" = comdat any
; CHECK-DAG: $causal.counter.2.req = comdat any
; CHECK-DAG: $causal.counter.3.req = comdat any
; CHECK-DAG: @"causal.counter.1.loop.c:7.name" = private constant [9 x i8] c"loop.c:7\00", comdat($"causal.counter.1.loop.c:7"), align 1
; CHECK-DAG: @"causal.counter.1.loop.c:7" = linkonce_odr hidden global { i64, ptr, i32, i32 } { i64 0, ptr @"causal.counter.1.loop.c:7.name", i32 1, i32 0 }, section "causal_counters", comdat, align 8
; CHECK-DAG: @causal.counter.2.req = linkonce_odr hidden global { i64, ptr, i32, i32 } { i64 0, ptr @causal.counter.2.req.name, i32 2, i32 0 }, section "causal_counters", comdat, align 8
; CHECK-DAG: @causal.counter.3.req = linkonce_odr hidden global { i64, ptr, i32, i32 } { i64 0, ptr @causal.counter.3.req.name, i32 3, i32 0 }, section "causal_counters", comdat, align 8
; CHECK-DAG: @causal.counter.2.req.name = private constant [4 x i8] c"req\00", comdat($causal.counter.2.req), align 1
; CHECK-DAG: @causal.counter.3.req.name = private constant [4 x i8] c"req\00", comdat($causal.counter.3.req), align 1

; What CAUSAL_PROGRESS expands to at -O0 (twice with the same name: one counter).
define void @throughput() {
entry:
  %present = icmp ne ptr @__causal_progress_marker, null
  br i1 %present, label %mark, label %done
mark:
  call void @__causal_progress_marker(i32 1, ptr @.str.loop)
  br label %done
done:
  %again = icmp eq ptr null, @__causal_progress_marker
  br i1 %again, label %end, label %mark2
mark2:
  call void @__causal_progress_marker(i32 1, ptr @.str.loop)
  br label %end
end:
  ret void
}
; CHECK-LABEL: define void @throughput() {
; CHECK-NEXT:  entry:
; CHECK-NEXT:    br label %mark
; CHECK:       mark:
; CHECK-NEXT:    atomicrmw add ptr @"causal.counter.1.loop.c:7", i64 1 monotonic, align 8
; CHECK-NEXT:    br label %done
; CHECK:       done:
; CHECK-NEXT:    br label %mark2
; CHECK:       mark2:
; CHECK-NEXT:    atomicrmw add ptr @"causal.counter.1.loop.c:7", i64 1 monotonic, align 8
; CHECK-NEXT:    br label %end
; CHECK:       end:
; CHECK-NEXT:    ret void

; CAUSAL_BEGIN / CAUSAL_END inside a try block (invokes).
define void @transaction() personality ptr @__gxx_personality_v0 {
entry:
  invoke void @__causal_progress_marker(i32 2, ptr @.str.req)
          to label %body unwind label %lpad
body:
  call void @work()
  invoke void @__causal_progress_marker(i32 3, ptr @.str.req)
          to label %out unwind label %lpad
out:
  ret void
lpad:
  %lp = landingpad { ptr, i32 } cleanup
  resume { ptr, i32 } %lp
}
; CHECK-LABEL: define void @transaction()
; CHECK-NEXT:  entry:
; CHECK-NEXT:    atomicrmw add ptr @causal.counter.2.req, i64 1 monotonic, align 8
; CHECK-NEXT:    br label %body
; CHECK:       body:
; CHECK-NEXT:    call void @work()
; CHECK-NEXT:    atomicrmw add ptr @causal.counter.3.req, i64 1 monotonic, align 8
; CHECK-NEXT:    br label %out
; The landing pad is unreachable now and removed.
; CHECK-NOT:   landingpad

; GONE-NOT: __causal_progress_marker
