; The pass emits one constructor and one destructor per module, each in a
; COMDAT of its own name, registered through llvm.global_ctors/dtors with the
; function as associated data, calling the extern_weak runtime hooks only when
; they are defined, with the hidden extern_weak bounds of the line table and,
; after it, of the counter section and of the call-path descriptor section
; (also in a module without counters or chosen functions: the constructor is
; one COMDAT per image, so every module's copy is the same).
; RUN: %opt -load-pass-plugin %plugin -passes=causal-instrument -S %s -o - | FileCheck %s

target triple = "x86_64-unknown-linux-gnu"

define i32 @work(i32 %x) {
  %y = add i32 %x, 1
  ret i32 %y
}

; CHECK-DAG: $causal.module_ctor = comdat any
; CHECK-DAG: $causal.module_dtor = comdat any
; CHECK-DAG: @__start_causal_lines = extern_weak hidden constant i8
; CHECK-DAG: @__stop_causal_lines = extern_weak hidden constant i8
; CHECK-DAG: @__start_causal_counters = extern_weak hidden constant i8
; CHECK-DAG: @__stop_causal_counters = extern_weak hidden constant i8
; CHECK-DAG: @__start_causal_path_fns = extern_weak hidden constant i8
; CHECK-DAG: @__stop_causal_path_fns = extern_weak hidden constant i8
; CHECK-DAG: @llvm.global_ctors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 101, ptr @causal.module_ctor, ptr @causal.module_ctor }]
; CHECK-DAG: @llvm.global_dtors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 101, ptr @causal.module_dtor, ptr @causal.module_dtor }]

; The user's code is unchanged.
; CHECK-LABEL: define i32 @work(i32 %x) {
; CHECK-NEXT:    %y = add i32 %x, 1
; CHECK-NEXT:    ret i32 %y

; CHECK-LABEL: define linkonce_odr hidden void @causal.module_ctor() {{.*}}comdat {
; CHECK:         [[PRESENT:%.*]] = icmp ne ptr @__causal_register_module, null
; CHECK-NEXT:    br i1 [[PRESENT]], label %[[CALL:.*]], label %[[RET:.*]]
; CHECK:       [[CALL]]:
; CHECK-NEXT:    call void @__causal_register_module(ptr @__start_causal_lines, ptr @__stop_causal_lines)
; CHECK-NEXT:    br label %[[RET]]
; CHECK:       [[RET]]:
; CHECK-NEXT:    [[PRESENT1:%.*]] = icmp ne ptr @__causal_register_counters, null
; CHECK-NEXT:    br i1 [[PRESENT1]], label %[[CALL1:.*]], label %[[RET1:.*]]
; CHECK:       [[CALL1]]:
; CHECK-NEXT:    call void @__causal_register_counters(ptr @__start_causal_counters, ptr @__stop_causal_counters)
; CHECK-NEXT:    br label %[[RET1]]
; CHECK:       [[RET1]]:
; CHECK-NEXT:    [[PRESENT3:%.*]] = icmp ne ptr @__causal_register_path_fns, null
; CHECK-NEXT:    br i1 [[PRESENT3]], label %[[CALL3:.*]], label %[[RET3:.*]]
; CHECK:       [[CALL3]]:
; CHECK-NEXT:    call void @__causal_register_path_fns(ptr @__start_causal_path_fns, ptr @__stop_causal_path_fns)
; CHECK-NEXT:    br label %[[RET3]]
; CHECK:       [[RET3]]:
; CHECK-NEXT:    ret void

; CHECK-DAG: declare extern_weak void @__causal_register_module(ptr, ptr)
; CHECK-DAG: declare extern_weak void @__causal_register_counters(ptr, ptr)
; CHECK-DAG: declare extern_weak void @__causal_register_path_fns(ptr, ptr)

; CHECK-LABEL: define linkonce_odr hidden void @causal.module_dtor() {{.*}}comdat {
; CHECK:         [[PRESENT2:%.*]] = icmp ne ptr @__causal_unregister_module, null
; CHECK-NEXT:    br i1 [[PRESENT2]], label %[[CALL2:.*]], label %[[RET2:.*]]
; CHECK:       [[CALL2]]:
; CHECK-NEXT:    call void @__causal_unregister_module(ptr @__start_causal_lines)
; CHECK:       [[RET2]]:
; CHECK-NEXT:    ret void

; CHECK-DAG: declare extern_weak void @__causal_unregister_module(ptr)
