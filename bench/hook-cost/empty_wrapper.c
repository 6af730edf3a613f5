/* bench/hook-cost/empty_wrapper.c - the floor for any interposed function: an LD_PRELOAD
 * library whose poll, nanosleep and mutex lock/unlock only call the C library's (not as a
 * tail call, as a hook that does work after the call must). What a hook costs beyond this
 * is its own work. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <poll.h>
#include <pthread.h>
#include <time.h>

static volatile unsigned calls;

int poll(struct pollfd *fds, nfds_t n, int timeout_ms) {
  static int (*real)(struct pollfd *, nfds_t, int);
  if (!real)
    real = (int (*)(struct pollfd *, nfds_t, int))dlsym(RTLD_NEXT, "poll");
  int r = real(fds, n, timeout_ms);
  calls = calls + 1;
  return r;
}

int nanosleep(const struct timespec *req, struct timespec *rem) {
  static int (*real)(const struct timespec *, struct timespec *);
  if (!real)
    real = (int (*)(const struct timespec *, struct timespec *))dlsym(RTLD_NEXT, "nanosleep");
  int r = real(req, rem);
  calls = calls + 1;
  return r;
}

// The mutex functions, each like the two above.
#define EMPTY_WRAPPER_OF_MUTEX(name)                                                               \
  int name(pthread_mutex_t *m) {                                                                   \
    static int (*real)(pthread_mutex_t *);                                                         \
    if (!real)                                                                                     \
      real = (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT, #name);                                  \
    int r = real(m);                                                                               \
    calls = calls + 1;                                                                             \
    return r;                                                                                      \
  }
EMPTY_WRAPPER_OF_MUTEX(pthread_mutex_lock)
EMPTY_WRAPPER_OF_MUTEX(pthread_mutex_unlock)
