; A module with its own constructors keeps them; ours is appended with its
; priority and associated data.
; RUN: %opt -load-pass-plugin %plugin -passes=causal-instrument -S %s -o - | FileCheck %s

target triple = "x86_64-unknown-linux-gnu"

@llvm.global_ctors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 65535, ptr @user_init, ptr null }]

define internal void @user_init() {
  ret void
}

; CHECK: @llvm.global_ctors = appending global [2 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 65535, ptr @user_init, ptr null }, { i32, ptr, ptr } { i32 101, ptr @causal.module_ctor, ptr @causal.module_ctor }]
