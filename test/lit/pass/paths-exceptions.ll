; C++ exceptions: a chosen function's calls that may throw become invokes of
; a new cleanup landing pad that calls __causal_path_exit and resumes
; unwinding (EscapeEnumerator); a landing pad of its own that resumes gets the
; exit before its resume. Calls that cannot throw stay calls. A function
; without a personality takes the module's __gxx_personality_v0.
; RUN: %opt -load-pass-plugin %plugin -passes=causal-instrument -causal-paths=may_throw_through,own_cleanup -S %s -o - | FileCheck %s

target triple = "x86_64-unknown-linux-gnu"

declare void @thrower()
declare void @quiet() nounwind
declare i32 @__gxx_personality_v0(...)

define void @may_throw_through() {
entry:
  call void @quiet()
  call void @thrower()
  ret void
}

define void @own_cleanup() personality ptr @__gxx_personality_v0 {
entry:
  invoke void @thrower() to label %ok unwind label %lp
ok:
  ret void
lp:
  %l = landingpad { ptr, i32 } cleanup
  call void @quiet()
  resume { ptr, i32 } %l
}

; CHECK-LABEL: define void @may_throw_through() personality ptr @__gxx_personality_v0 {
; CHECK:         call i32 @causal.path.count(ptr @causal.path_fn.may_throw_through, ptr null)
; CHECK:       causal.path.body:
; CHECK-NEXT:    %causal.path.token = phi i32
; CHECK-NEXT:    call void @quiet()
; CHECK-NEXT:    invoke void @thrower()
; CHECK-NEXT:      to label %[[CONT:.*]] unwind label %causal.path.cleanup
; CHECK:       [[CONT]]:
; CHECK:         call void @__causal_path_exit(ptr @causal.path_fn.may_throw_through, i32 %causal.path.token)
; CHECK:         ret void
; CHECK:       causal.path.cleanup:
; CHECK-NEXT:    %cleanup.lpad = landingpad { ptr, i32 }
; CHECK-NEXT:      cleanup
; CHECK-NEXT:    %causal.path.recorded{{[0-9]*}} = icmp ne i32 %causal.path.token, 0
; CHECK-NEXT:    br i1 %causal.path.recorded{{[0-9]*}}, label %[[EXIT:.*]], label %[[OUT:.*]], !prof
; CHECK:       [[EXIT]]:
; CHECK-NEXT:    call void @__causal_path_exit(ptr @causal.path_fn.may_throw_through, i32 %causal.path.token)
; CHECK:       [[OUT]]:
; CHECK-NEXT:    resume { ptr, i32 } %cleanup.lpad
; CHECK-NEXT:  }

; CHECK-LABEL: define void @own_cleanup() personality ptr @__gxx_personality_v0 {
; CHECK:         invoke void @thrower()
; CHECK-NEXT:      to label %ok unwind label %lp
; CHECK:       ok:
; CHECK:         call void @__causal_path_exit(ptr @causal.path_fn.own_cleanup, i32 %causal.path.token)
; CHECK:         ret void
; CHECK:       lp:
; CHECK-NEXT:    %l = landingpad { ptr, i32 }
; CHECK-NEXT:      cleanup
; CHECK-NEXT:    call void @quiet()
; CHECK-NEXT:    %causal.path.recorded{{[0-9]*}} = icmp ne i32 %causal.path.token, 0
; CHECK:         call void @__causal_path_exit(ptr @causal.path_fn.own_cleanup, i32 %causal.path.token)
; CHECK:         resume { ptr, i32 } %l
; CHECK-NOT:   landingpad
; CHECK:       }
