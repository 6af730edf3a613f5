; Each -causal-progress-fn option leaves a record in the module, matched (1)
; or not (0) here, for causal-ld to name the options no module matched
; (causal/abi.h, CAUSAL_PROGRESS_REQUESTS_SECTION); kept by llvm.used. A
; module without such options gets no record.
; RUN: %opt -load-pass-plugin %plugin -passes=causal-instrument -causal-progress-fn=work -causal-progress-fn=wrok -S %s -o - | FileCheck %s
; RUN: %opt -load-pass-plugin %plugin -passes=causal-instrument -S %s -o - | FileCheck %s --check-prefix=NONE

target triple = "x86_64-unknown-linux-gnu"

define i32 @work(i32 %x) {
  ret i32 %x
}

; CHECK: @causal.progress_requests = private constant [{{[0-9]+}} x i8] c"1\09-fcausal-progress-fn=work\0A0\09-fcausal-progress-fn=wrok\0A", section "causal_progress_requests", align 1
; CHECK: @llvm.used = appending global {{.*}}@causal.progress_requests
; NONE-NOT: causal_progress_requests
