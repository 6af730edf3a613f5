; A chosen function gets one descriptor, struct causal_path_fn of
; causal/abi.h: linkonce_odr hidden, in a COMDAT of its own name together
; with its two strings (the symbol, and the demangled name), in the writable
; section causal_path_fns, 8-aligned, all zero but the two string pointers.
; The names of -causal-paths leave request records for causal-ld, matched (1)
; or not (0) here; a function not chosen gets nothing.
; RUN: %opt -load-pass-plugin %plugin -passes=causal-instrument -causal-paths=_ZN2ns6Server6handleEi,nothing_here -S %s -o - | FileCheck %s
; Without chosen functions: no descriptor, no record (the constructor still
; registers the section's bounds, module-ctor.ll).
; RUN: %opt -load-pass-plugin %plugin -passes=causal-instrument -S %s -o - | FileCheck %s --check-prefix=NONE

target triple = "x86_64-unknown-linux-gnu"

define i32 @_ZN2ns6Server6handleEi(i32 %x) {
  ret i32 %x
}

define i32 @other(i32 %x) {
  ret i32 %x
}

; CHECK-DAG: $causal.path_fn._ZN2ns6Server6handleEi = comdat any
; CHECK-DAG: @causal.path_requests = private constant [{{[0-9]+}} x i8] c"1\09_ZN2ns6Server6handleEi\0A0\09nothing_here\0A", section "causal_path_requests", align 1
; CHECK-DAG: @llvm.used = appending global {{.*}}@causal.path_requests
; CHECK-DAG: @causal.path_fn._ZN2ns6Server6handleEi.symbol = private constant [23 x i8] c"_ZN2ns6Server6handleEi\00", comdat($causal.path_fn._ZN2ns6Server6handleEi), align 1
; CHECK-DAG: @causal.path_fn._ZN2ns6Server6handleEi.name = private constant [24 x i8] c"ns::Server::handle(int)\00", comdat($causal.path_fn._ZN2ns6Server6handleEi), align 1
; CHECK-DAG: @causal.path_fn._ZN2ns6Server6handleEi = linkonce_odr hidden global { i8, [3 x i8], i32, ptr, ptr } { i8 0, [3 x i8] zeroinitializer, i32 0, ptr @causal.path_fn._ZN2ns6Server6handleEi.symbol, ptr @causal.path_fn._ZN2ns6Server6handleEi.name }, section "causal_path_fns", comdat, align 8
; CHECK-DAG: @__start_causal_path_fns = extern_weak hidden constant i8
; CHECK-DAG: @__stop_causal_path_fns = extern_weak hidden constant i8
; CHECK-NOT: @causal.path_fn.other
; CHECK-LABEL: define i32 @_ZN2ns6Server6handleEi(
; CHECK:       call i32 @causal.path.count(ptr @causal.path_fn._ZN2ns6Server6handleEi, ptr null)
; CHECK-LABEL: define i32 @other(
; CHECK-NEXT:    ret i32 %x
; CHECK:       call void @__causal_register_path_fns(ptr @__start_causal_path_fns, ptr @__stop_causal_path_fns)

; NONE-NOT: @causal.path_fn
; NONE-NOT: causal_path_requests
; NONE-NOT: @__causal_path_enter
