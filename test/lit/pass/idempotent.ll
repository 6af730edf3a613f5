; Running the pass twice, or on a module it already instrumented, adds
; nothing: still one constructor, one destructor, one entry each.
; RUN: %opt -load-pass-plugin %plugin -passes=causal-instrument,causal-instrument -S %s -o %t.twice.ll
; RUN: FileCheck %s < %t.twice.ll
; RUN: %opt -load-pass-plugin %plugin -passes=causal-instrument -S %t.twice.ll -o - | FileCheck %s

target triple = "x86_64-unknown-linux-gnu"

define void @work() {
  ret void
}

; CHECK:     @llvm.global_ctors = appending global [1 x
; CHECK:     @llvm.global_dtors = appending global [1 x
; CHECK-NOT: causal.module_ctor.
; CHECK-NOT: causal.module_dtor.
; CHECK-COUNT-1: define linkonce_odr hidden void @causal.module_ctor()
; CHECK-COUNT-1: define linkonce_odr hidden void @causal.module_dtor()
; CHECK-NOT: define {{.*}}@causal.module_
