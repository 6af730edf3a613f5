// Opens the library named by argv[1], calls its lib_entry, closes it, and
// exits: the paths of its chosen functions are written after it is gone.
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  void *lib = dlopen(argv[1], RTLD_NOW);
  if (!lib) {
    fprintf(stderr, "%s\n", dlerror());
    return 1;
  }
  void (*entry)(int) = (void (*)(int))dlsym(lib, "lib_entry");
  if (!entry)
    return 1;
  entry(7);
  dlclose(lib);
  printf("closed\n");
  return 0;
}
