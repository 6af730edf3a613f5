; A function whose return follows a musttail call gets its increment before
; the call (nothing may stand between the two); the result verifies.
; RUN: %opt -load-pass-plugin %plugin -passes=causal-instrument -causal-progress-fn=forward -S %s -o - | FileCheck %s

target triple = "x86_64-unknown-linux-gnu"

declare i32 @target(i32)

define i32 @forward(i32 %x) {
  %r = musttail call i32 @target(i32 %x)
  ret i32 %r
}
; The settling check goes before the increment, so before the call too.
; CHECK-LABEL: define i32 @forward(
; CHECK:         call void @__causal_progress_visit(ptr @causal.counter.1.forward)
; CHECK:       causal.count:
; CHECK-NEXT:    atomicrmw add ptr @causal.counter.1.forward, i64 1 monotonic, align 8
; CHECK-NEXT:    %r = musttail call i32 @target(i32 %x)
; CHECK-NEXT:    ret i32 %r
