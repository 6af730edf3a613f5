// C++: std::mutex and std::shared_mutex lock/unlock inline into calls of the
// pthread functions (through libstdc++'s weak __gthrw_ references); those
// calls go through the hooks at -O0 and -O2. -fplugin-arg-causal-no-sync-hooks
// keeps them direct.
// RUN: %clangxx -fplugin=%plugin -O0 -std=c++17 -S -emit-llvm %s -o - | FileCheck %s
// RUN: %clangxx -fplugin=%plugin -O2 -std=c++17 -S -emit-llvm %s -o - | FileCheck %s
// RUN: %clangxx -fplugin=%plugin -fplugin-arg-causal-no-sync-hooks -O2 -std=c++17 -S -emit-llvm %s -o - \
// RUN:   | FileCheck %s --check-prefix=OFF
#include <mutex>
#include <shared_mutex>

std::mutex Lock;
std::shared_mutex Shared;
int Value;

int bump() {
  std::lock_guard<std::mutex> Guard(Lock);
  return ++Value;
}

int peek() {
  std::shared_lock<std::shared_mutex> Guard(Shared);
  return Value;
}

// CHECK-DAG: select i1 %{{.*}}, ptr @__causal_hook_pthread_mutex_lock, ptr @pthread_mutex_lock
// CHECK-DAG: select i1 %{{.*}}, ptr @__causal_hook_pthread_mutex_unlock, ptr @pthread_mutex_unlock
// CHECK-DAG: select i1 %{{.*}}, ptr @__causal_hook_pthread_rwlock_rdlock, ptr @pthread_rwlock_rdlock
// CHECK-DAG: select i1 %{{.*}}, ptr @__causal_hook_pthread_rwlock_unlock, ptr @pthread_rwlock_unlock
// CHECK-DAG: declare extern_weak {{.*}}i32 @__causal_hook_pthread_mutex_lock(ptr
// CHECK-NOT: call {{.*}}@pthread_mutex_lock(

// OFF-NOT: __causal_hook
// OFF:     call {{.*}}@pthread_mutex_lock(
// OFF-NOT: __causal_hook
