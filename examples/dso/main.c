// An executable using two instrumented shared libraries: libdso_linked.so,
// linked normally, and libdso_loaded.so, opened with dlopen at run time.
// Each library has one hot line; the profile must attribute samples to the
// lines inside both libraries, not to the executable's call sites.
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

unsigned long linked_work(int n);

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "./libdso_loaded.so";
  int rounds = argc > 2 ? atoi(argv[2]) : 30;
  void *handle = dlopen(path, RTLD_NOW);
  if (!handle) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 1;
  }
  unsigned long (*loaded_work)(int) = (unsigned long (*)(int))dlsym(handle, "loaded_work");
  if (!loaded_work) {
    fprintf(stderr, "dlsym: %s\n", dlerror());
    return 1;
  }
  unsigned long a = 0, b = 0;
  for (int r = 0; r < rounds; ++r) {
    a += linked_work(300000);
    b += loaded_work(300000);
  }
  printf("linked=%lu loaded=%lu\n", a, b);
  return 0;
}
