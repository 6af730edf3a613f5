; Running the pass twice, or on a module it already instrumented, adds
; nothing: one descriptor, one entry call, one exit call, one request record.
; RUN: %opt -load-pass-plugin %plugin -passes=causal-instrument,causal-instrument -causal-paths=work -S %s -o %t.twice.ll
; RUN: %opt -load-pass-plugin %plugin -passes=causal-instrument -causal-paths=work -S %t.twice.ll -o %t.thrice.ll
; RUN: grep -c '^@causal.path_fn.work = linkonce_odr' %t.twice.ll | count 1
; RUN: grep -c '^@causal.path_requests.* = private constant' %t.twice.ll | count 1
; RUN: grep -c 'call i32 @causal.path.count(' %t.twice.ll | count 1
; RUN: grep -c 'call void @__causal_path_exit(' %t.twice.ll | count 1
; RUN: grep -c '^@causal.path_fn.work = linkonce_odr' %t.thrice.ll | count 1
; RUN: grep -c '^@causal.path_requests.* = private constant' %t.thrice.ll | count 1
; RUN: grep -c 'call i32 @causal.path.count(' %t.thrice.ll | count 1
; RUN: grep -c 'call void @__causal_path_exit(' %t.thrice.ll | count 1

target triple = "x86_64-unknown-linux-gnu"

define void @work() {
  ret void
}
