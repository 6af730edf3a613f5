; -causal-paths-file=FILE: one name a line, '#' comments, blanks and blank
; lines ignored, names with commas kept whole; adds to -causal-paths. An
; unreadable file is an error that names it.
; RUN: %opt -load-pass-plugin %plugin -passes=causal-instrument -S %s -o - \
; RUN:   -causal-paths-file=%S/Inputs/paths-list.txt -causal-paths=c_function | FileCheck %s
; RUN: not %opt -load-pass-plugin %plugin -passes=causal-instrument -S %s -o /dev/null \
; RUN:   -causal-paths-file=%t.missing.txt 2>&1 | FileCheck %s --check-prefix=MISSING -DFILE=%t.missing.txt

target triple = "x86_64-unknown-linux-gnu"

define i32 @_ZN2ns6helperEi(i32 %x) {
  ret i32 %x
}
define i32 @_Z5plaini(i32 %x) {
  ret i32 %x
}
define void @_ZN2ns6Server3runEic(i32 %x, i8 %c) {
  ret void
}
define void @c_function() {
  ret void
}
define void @not_listed() {
  ret void
}

; CHECK: @causal.path_requests = private constant {{.*}} c"1\09c_function\0A1\09ns::helper\0A1\09_Z5plaini\0A1\09ns::Server::run(int, char)\0A"
; CHECK-LABEL: define i32 @_ZN2ns6helperEi(
; CHECK-NEXT:  load atomic i8, ptr @causal.path_fn._ZN2ns6helperEi
; CHECK-LABEL: define i32 @_Z5plaini(
; CHECK-NEXT:  load atomic i8, ptr @causal.path_fn._Z5plaini
; CHECK-LABEL: define void @_ZN2ns6Server3runEic(
; CHECK-NEXT:  load atomic i8, ptr @causal.path_fn._ZN2ns6Server3runEic
; CHECK-LABEL: define void @c_function(
; CHECK-NEXT:  load atomic i8, ptr @causal.path_fn.c_function
; CHECK-LABEL: define void @not_listed(
; CHECK-NEXT:  ret void

; MISSING: causal: -causal-paths-file=[[FILE]]: cannot read the function list file '[[FILE]]': No such file or directory
