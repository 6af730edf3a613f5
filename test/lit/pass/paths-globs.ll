; Which functions a name chooses: equal to, or an fnmatch glob of, the
; symbol, the demangled name, or the demangled name without parameters.
; Declarations, available_externally and naked functions and the runtime's
; own __causal* functions are never instrumented, even when a glob matches.
; A list is split at the commas outside (), <> and [].
; RUN: %opt -load-pass-plugin %plugin -passes=causal-instrument -S %s -o - \
; RUN:   -causal-paths='ns::helper,_Z5plaini,ns::Server::run(int, char),ns::Server::get*' \
; RUN:   -causal-paths='c_*' -causal-paths='*_external,*naked*,__causal*,ext*' | FileCheck %s
; A glob or name that matches nothing leaves a record of 0.
; RUN: %opt -load-pass-plugin %plugin -passes=causal-instrument -S %s -o - -causal-paths='ns::help*(char)' \
; RUN:   | FileCheck %s --check-prefix=NOMATCH
; An empty name in a list is an error that names the list.
; RUN: not %opt -load-pass-plugin %plugin -passes=causal-instrument -S %s -o /dev/null -causal-paths='a,,b' 2>&1 \
; RUN:   | FileCheck %s --check-prefix=EMPTY

target triple = "x86_64-unknown-linux-gnu"

; ns::helper(int): by its demangled name without parameters
define i32 @_ZN2ns6helperEi(i32 %x) {
  ret i32 %x
}
; plain(int): by its symbol
define i32 @_Z5plaini(i32 %x) {
  ret i32 %x
}
; ns::Server::run(int, char): by its demangled name with parameters
define void @_ZN2ns6Server3runEic(i32 %x, i8 %c) {
  ret void
}
; ns::Server::get_a(), ns::Server::get_b(): a glob of the name without parameters
define void @_ZN2ns6Server5get_aEv() {
  ret void
}
define void @_ZN2ns6Server5get_bEv() {
  ret void
}
; ns::Server::put(): not chosen
define void @_ZN2ns6Server3putEv() {
  ret void
}
; a C function by a glob of its symbol
define void @c_function() {
  ret void
}
define available_externally void @avail_external() {
  ret void
}
define void @is_naked() naked {
  unreachable
}
define void @__causal_internal() {
  ret void
}
declare void @extern_decl()

; CHECK: @causal.path_requests = private constant {{.*}} c"1\09ns::helper\0A1\09_Z5plaini\0A1\09ns::Server::run(int, char)\0A1\09ns::Server::get*\0A1\09c_*\0A0\09*_external\0A0\09*naked*\0A0\09__causal*\0A0\09ext*\0A"
; CHECK-LABEL: define i32 @_ZN2ns6helperEi(
; CHECK-NEXT:  load atomic i8, ptr @causal.path_fn._ZN2ns6helperEi
; CHECK-LABEL: define i32 @_Z5plaini(
; CHECK-NEXT:  load atomic i8, ptr @causal.path_fn._Z5plaini
; CHECK-LABEL: define void @_ZN2ns6Server3runEic(
; CHECK-NEXT:  load atomic i8, ptr @causal.path_fn._ZN2ns6Server3runEic
; CHECK-LABEL: define void @_ZN2ns6Server5get_aEv(
; CHECK-NEXT:  load atomic i8, ptr @causal.path_fn._ZN2ns6Server5get_aEv
; CHECK-LABEL: define void @_ZN2ns6Server5get_bEv(
; CHECK-NEXT:  load atomic i8, ptr @causal.path_fn._ZN2ns6Server5get_bEv
; CHECK-LABEL: define void @_ZN2ns6Server3putEv(
; CHECK-NEXT:  ret void
; CHECK-LABEL: define void @c_function(
; CHECK-NEXT:  load atomic i8, ptr @causal.path_fn.c_function
; CHECK-LABEL: define available_externally void @avail_external(
; CHECK-NEXT:  ret void
; CHECK-LABEL: define void @is_naked(
; CHECK-NEXT:  unreachable
; CHECK-LABEL: define void @__causal_internal(
; CHECK-NEXT:  ret void

; NOMATCH: c"0\09ns::help*(char)\0A"
; NOMATCH-NOT: @causal.path_fn.

; EMPTY: causal: -causal-paths=a,,b: invalid function list 'a,,b': expected NAME[,NAME]... without empty names
