// [[causal::path]] in C++ on a member function declared in its class, with its
// definition outside its class: the descriptor is named after the symbol
// and holds the demangled name.
// RUN: %clangxx -fplugin=%plugin -I%src_root/include -std=c++17 -Wall -Werror -O1 -S -emit-llvm %s -o - | FileCheck %s
namespace ns {
struct Server {
  [[causal::path]] int handle(int x);
};
int Server::handle(int x) { return x + 1; }
} // namespace ns

int use(ns::Server &s) { return s.handle(2); }

// CHECK-DAG: @causal.path_fn._ZN2ns6Server6handleEi.name = private constant {{.*}} c"ns::Server::handle(int)\00"
// CHECK-DAG: @causal.path_fn._ZN2ns6Server6handleEi = linkonce_odr hidden global
// CHECK-LABEL: define {{.*}} @_ZN2ns6Server6handleEi(
// CHECK:       call i32 @causal.path.count(ptr {{(nonnull )?}}@causal.path_fn._ZN2ns6Server6handleEi, ptr null)
