; Loaded as a pass plugin, the pass also joins the default pipelines at the
; OptimizerLast extension point, at -O0 too (where every function is optnone,
; the pass is required).
; RUN: %opt -load-pass-plugin %plugin -passes='default<O0>' -S %s -o - | FileCheck %s
; RUN: %opt -load-pass-plugin %plugin -passes='default<O2>' -S %s -o - | FileCheck %s
; RUN: %opt -load-pass-plugin %plugin -passes='thinlto-pre-link<O2>' -S %s -o - | FileCheck %s
; RUN: %opt -load-pass-plugin %plugin -passes='lto-pre-link<O2>' -S %s -o - | FileCheck %s
; Without the plugin nothing is added.
; RUN: %opt -passes='default<O2>' -S %s -o - | FileCheck %s --check-prefix=NOPLUGIN

target triple = "x86_64-unknown-linux-gnu"

define void @work() noinline optnone {
  ret void
}

; CHECK: @llvm.global_ctors = {{.*}} @causal.module_ctor
; CHECK: define linkonce_odr hidden void @causal.module_ctor()
; NOPLUGIN-NOT: causal
