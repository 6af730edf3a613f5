// Loads and unloads DIR/CYCLE_LIB CYCLES times while another thread calls
// into it whenever it is loaded (a rwlock keeps the caller out while it is
// not). Prints the cycles done (the same with and without the profiler) and
// writes the calls made (their number depends on timing) to the file
// $CYCLES_CALLS_FILE names, if set. CYCLE_LIB: set when compiling (the
// profiled and the plain build load their own build of the library).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_rwlock_t loaded_lock;
static void (*loaded_work)(unsigned);
static volatile int done;
static unsigned long calls;

static void *caller(void *arg) {
  (void)arg;
  while (!done) {
    pthread_rwlock_rdlock(&loaded_lock);
    if (loaded_work) {
      loaded_work(200);
      ++calls;
    }
    pthread_rwlock_unlock(&loaded_lock);
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s DIR CYCLES\n", argv[0]);
    return 2;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", argv[1], CYCLE_LIB);
  unsigned cycles = (unsigned)strtoul(argv[2], 0, 10);
  // The loader must not wait behind a caller that takes the lock again and
  // again.
  pthread_rwlockattr_t attr;
  pthread_rwlockattr_init(&attr);
  pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
  pthread_rwlock_init(&loaded_lock, &attr);
  pthread_t thread;
  if (pthread_create(&thread, 0, caller, 0) != 0)
    return 3;
  unsigned done_cycles = 0;
  for (unsigned c = 0; c < cycles; ++c) {
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      fprintf(stderr, "dlopen: %s\n", dlerror());
      return 4;
    }
    pthread_rwlock_wrlock(&loaded_lock);
    loaded_work = (void (*)(unsigned))dlsym(handle, "cycle_work");
    pthread_rwlock_unlock(&loaded_lock);
    usleep(300); // the caller calls meanwhile
    pthread_rwlock_wrlock(&loaded_lock);
    loaded_work = 0;
    pthread_rwlock_unlock(&loaded_lock);
    if (dlclose(handle) != 0)
      return 5;
    ++done_cycles;
  }
  done = 1;
  pthread_join(thread, 0);
  if (getenv("CYCLES_CALLS_FILE")) {
    FILE *out = fopen(getenv("CYCLES_CALLS_FILE"), "w");
    if (!out)
      return 6;
    fprintf(out, "%lu\n", calls);
    fclose(out);
  }
  printf("%u cycles\n", done_cycles);
  return 0;
}
