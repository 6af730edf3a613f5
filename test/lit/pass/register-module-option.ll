; -causal-register-module=false turns the module registration off; the
; default (and =true) emits it.
; RUN: %opt -load-pass-plugin %plugin -passes=causal-instrument -causal-register-module=false -S %s -o - | FileCheck %s --check-prefix=OFF
; RUN: %opt -load-pass-plugin %plugin -passes=causal-instrument -causal-register-module=true -S %s -o - | FileCheck %s --check-prefix=ON

target triple = "x86_64-unknown-linux-gnu"

define void @work() {
  ret void
}

; OFF-NOT: causal
; ON:      @llvm.global_ctors = {{.*}} @causal.module_ctor
