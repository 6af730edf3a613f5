; The section bounds exist only on ELF targets: elsewhere the pass leaves the
; module as it is.
; RUN: %opt -load-pass-plugin %plugin -passes=causal-instrument -S %s -o - | FileCheck %s

target triple = "x86_64-apple-macosx14.0.0"

define void @work() {
  ret void
}

; CHECK-NOT: causal
; CHECK:     define void @work()
; CHECK-NOT: causal
