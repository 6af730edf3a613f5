; Direct calls and invokes of the hooked functions of causal/hooks.def call the
; runtime's hook instead when it is defined: `&hook != null ? hook : X`, with
; the hook an extern_weak declaration of the same type. One function per
; family (mutex, cond, rwlock, sem, barrier, join, create/exit, signals).
; Indirect calls, calls inside __causal* functions, calls of a function the
; module defines itself and other uses of the address are left alone.
; RUN: %opt -load-pass-plugin %plugin -passes=causal-instrument -S %s -o - | FileCheck %s
; Off with -causal-sync-hooks=false.
; RUN: %opt -load-pass-plugin %plugin -passes=causal-instrument -causal-sync-hooks=false -S %s -o - | FileCheck %s --check-prefix=OFF
; Every function of a CAUSAL_HOOK line, from causal/hooks.def itself.
; RUN: %python %S/Inputs/sync-calls.py %src_root/include/causal/hooks.def > %t.ll
; RUN: %opt -load-pass-plugin %plugin -passes=causal-instrument -S %t.ll -o %t.out.ll
; RUN: grep -c 'hook.target[0-9]* = select' %t.out.ll > %t.count
; RUN: grep -c '^CAUSAL_HOOK(' %src_root/include/causal/hooks.def | diff - %t.count
; RUN: FileCheck %s --check-prefix=ALL < %t.out.ll

target triple = "x86_64-unknown-linux-gnu"

declare i32 @pthread_mutex_lock(ptr)
declare i32 @pthread_mutex_unlock(ptr)
declare i32 @pthread_cond_wait(ptr, ptr)
declare i32 @pthread_cond_broadcast(ptr)
declare i32 @pthread_rwlock_wrlock(ptr)
declare i32 @sem_post(ptr)
declare i32 @pthread_barrier_wait(ptr)
declare i32 @pthread_join(i64, ptr)
declare i32 @pthread_create(ptr, ptr, ptr, ptr)
declare void @pthread_exit(ptr) noreturn
declare i32 @pthread_kill(i64, i32)
declare i32 @sigwait(ptr, ptr)
declare extern_weak i32 @sem_wait(ptr)
declare void @use(ptr)
declare i32 @nanosleep(ptr, ptr)
declare i32 @poll(ptr, i64, i32)
declare i64 @syscall(i64, ...)
declare i32 @__gxx_personality_v0(...)

define i32 @sem_trywait(ptr %s) {
  ret i32 0
}

define void @families(ptr %m, ptr %c, ptr %s, i64 %t) {
  %1 = call i32 @pthread_mutex_lock(ptr %m)
  %2 = call i32 @pthread_cond_wait(ptr %c, ptr %m)
  %3 = call i32 @pthread_cond_broadcast(ptr %c)
  %4 = call i32 @pthread_mutex_unlock(ptr %m)
  %5 = call i32 @pthread_rwlock_wrlock(ptr %m)
  %6 = call i32 @sem_post(ptr %s)
  %7 = call i32 @sem_wait(ptr %s)
  %8 = call i32 @pthread_barrier_wait(ptr %s)
  %9 = call i32 @pthread_join(i64 %t, ptr null)
  %10 = call i32 @pthread_create(ptr %s, ptr null, ptr @use, ptr null)
  %11 = call i32 @pthread_kill(i64 %t, i32 10)
  %12 = call i32 @sigwait(ptr %s, ptr %c)
  %13 = call i32 @sem_trywait(ptr %s)
  call void @pthread_exit(ptr null)
  unreachable
}
; CHECK-LABEL: define void @families(
; CHECK:      [[P1:%.*]] = icmp ne ptr @__causal_hook_pthread_mutex_lock, null
; CHECK-NEXT: [[T1:%.*]] = select i1 [[P1]], ptr @__causal_hook_pthread_mutex_lock, ptr @pthread_mutex_lock
; CHECK-NEXT: call i32 [[T1]](ptr %m)
; CHECK:      select i1 {{.*}}, ptr @__causal_hook_pthread_cond_wait, ptr @pthread_cond_wait
; CHECK-NEXT: call i32 %{{.*}}(ptr %c, ptr %m)
; CHECK:      select i1 {{.*}}, ptr @__causal_hook_pthread_cond_broadcast, ptr @pthread_cond_broadcast
; CHECK:      select i1 {{.*}}, ptr @__causal_hook_pthread_mutex_unlock, ptr @pthread_mutex_unlock
; CHECK:      select i1 {{.*}}, ptr @__causal_hook_pthread_rwlock_wrlock, ptr @pthread_rwlock_wrlock
; CHECK:      select i1 {{.*}}, ptr @__causal_hook_sem_post, ptr @sem_post
; CHECK:      select i1 {{.*}}, ptr @__causal_hook_sem_wait, ptr @sem_wait
; CHECK:      select i1 {{.*}}, ptr @__causal_hook_pthread_barrier_wait, ptr @pthread_barrier_wait
; CHECK:      select i1 {{.*}}, ptr @__causal_hook_pthread_join, ptr @pthread_join
; CHECK-NEXT: call i32 %{{.*}}(i64 %t, ptr null)
; CHECK:      select i1 {{.*}}, ptr @__causal_hook_pthread_create, ptr @pthread_create
; The thread function passed as an argument is not a call: untouched.
; CHECK-NEXT: call i32 %{{.*}}(ptr %s, ptr null, ptr @use, ptr null)
; CHECK:      select i1 {{.*}}, ptr @__causal_hook_pthread_kill, ptr @pthread_kill
; CHECK:      select i1 {{.*}}, ptr @__causal_hook_sigwait, ptr @sigwait
; A sync function this module defines is not rewritten.
; CHECK-NEXT: call i32 %{{.*}}(ptr %s, ptr %c)
; CHECK-NEXT: call i32 @sem_trywait(ptr %s)
; CHECK:      select i1 {{.*}}, ptr @__causal_hook_pthread_exit, ptr @pthread_exit
; CHECK-NEXT: call void %{{.*}}(ptr null)
; CHECK-NEXT: unreachable

define void @invokes(ptr %m) personality ptr @__gxx_personality_v0 {
entry:
  %r = invoke i32 @pthread_mutex_lock(ptr %m)
          to label %ok unwind label %lpad
ok:
  ret void
lpad:
  %lp = landingpad { ptr, i32 } cleanup
  resume { ptr, i32 } %lp
}
; CHECK-LABEL: define void @invokes(
; CHECK:      [[PI:%.*]] = icmp ne ptr @__causal_hook_pthread_mutex_lock, null
; CHECK-NEXT: [[TI:%.*]] = select i1 [[PI]], ptr @__causal_hook_pthread_mutex_lock, ptr @pthread_mutex_lock
; CHECK-NEXT: invoke i32 [[TI]](ptr %m)
; CHECK-NEXT:   to label %ok unwind label %lpad

; Sleeps and waits with a timeout, and the variadic syscall(): every argument
; is passed on as it was (the call keeps its function type).
define void @sleeps(ptr %ts, ptr %word) {
  %1 = call i32 @nanosleep(ptr %ts, ptr null)
  %2 = call i32 @poll(ptr null, i64 0, i32 5)
  %3 = call i64 (i64, ...) @syscall(i64 202, ptr %word, i32 0, i32 1, ptr %ts, ptr null, i32 0)
  ret void
}
; CHECK-LABEL: define void @sleeps(
; CHECK:      select i1 {{.*}}, ptr @__causal_hook_nanosleep, ptr @nanosleep
; CHECK-NEXT: call i32 %{{.*}}(ptr %ts, ptr null)
; CHECK:      select i1 {{.*}}, ptr @__causal_hook_poll, ptr @poll
; CHECK-NEXT: call i32 %{{.*}}(ptr null, i64 0, i32 5)
; CHECK:      select i1 {{.*}}, ptr @__causal_hook_syscall, ptr @syscall
; CHECK-NEXT: call i64 (i64, ...) %{{.*}}(i64 202, ptr %word, i32 0, i32 1, ptr %ts, ptr null, i32 0)

define void @indirect(ptr %fn, ptr %m) {
  %r = call i32 %fn(ptr %m)
  call void @use(ptr @pthread_mutex_lock)
  ret void
}
; CHECK-LABEL: define void @indirect(
; CHECK-NEXT:  %r = call i32 %fn(ptr %m)
; CHECK-NEXT:  call void @use(ptr @pthread_mutex_lock)
; CHECK-NEXT:  ret void

; The runtime's own code (any __causal* function) is never rewritten.
define i32 @__causal_hook_pthread_mutex_trylock(ptr %m) {
  %r = call i32 @pthread_mutex_lock(ptr %m)
  ret i32 %r
}
; CHECK-LABEL: define i32 @__causal_hook_pthread_mutex_trylock(
; CHECK-NEXT:  %r = call i32 @pthread_mutex_lock(ptr %m)

; CHECK-DAG: declare extern_weak i32 @__causal_hook_pthread_mutex_lock(ptr)
; CHECK-DAG: declare extern_weak i32 @__causal_hook_pthread_join(i64, ptr)
; CHECK-DAG: declare extern_weak void @__causal_hook_pthread_exit(ptr) #[[NORETURN:[0-9]+]]
; CHECK-DAG: declare extern_weak i32 @__causal_hook_sem_wait(ptr)
; CHECK-DAG: declare extern_weak i64 @__causal_hook_syscall(i64, ...)
; CHECK-DAG: attributes #[[NORETURN]] = { noreturn }
; CHECK-NOT: declare {{.*}}@__causal_hook_sem_trywait

; OFF-NOT: select
; OFF-NOT: declare {{.*}}__causal_hook_
; OFF:     call i32 @pthread_mutex_lock(ptr %m)
; OFF-NOT: select
; OFF-NOT: declare {{.*}}__causal_hook_

; ALL-NOT: call {{.*}} @pthread_
; ALL-NOT: call {{.*}} @sem_
; ALL-NOT: call {{.*}} @sig
