// Live control of a chosen function that only a library loaded with dlopen
// has (the executable has none): the runtime serves control from that
// registration on. Usage: live_dl PIDFILE STOPFILE LIBRARY [MAX_SECONDS]:
// loads LIBRARY, writes its pid to PIDFILE, calls lib_step until STOPFILE
// exists or MAX_SECONDS (default 120) have passed.
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: live_dl PIDFILE STOPFILE LIBRARY [MAX_SECONDS]\n");
    return 2;
  }
  void *lib = dlopen(argv[3], RTLD_NOW);
  if (!lib) {
    fprintf(stderr, "%s\n", dlerror());
    return 1;
  }
  void (*step)(unsigned) = (void (*)(unsigned))dlsym(lib, "lib_step");
  if (!step)
    return 1;
  int max_seconds = argc > 4 ? atoi(argv[4]) : 120;
  char tmp[4096];
  snprintf(tmp, sizeof(tmp), "%s.tmp", argv[1]);
  FILE *f = fopen(tmp, "w");
  if (!f)
    return 1;
  fprintf(f, "%d\n", (int)getpid());
  fclose(f);
  rename(tmp, argv[1]);
  time_t end = time(NULL) + max_seconds;
  unsigned long rounds = 0;
  while (time(NULL) < end && access(argv[2], F_OK) != 0) {
    for (int i = 0; i < 100; ++i)
      step(20000);
    ++rounds;
  }
  printf("stopped after %lu rounds\n", rounds);
  return 0;
}
