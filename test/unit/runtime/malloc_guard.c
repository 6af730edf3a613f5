/*===- test/unit/runtime/malloc_guard.c - Catches allocation in the handler ===
 *
 * LD_PRELOADed into the target by the tests. The sample signal (SIGRTMAX:
 * the runtime takes the highest real-time signal the program left alone) is
 * blocked while its handler runs (and while the runtime drains a ring
 * outside the handler), so an allocation seen with SIGPROF blocked is an
 * allocation in signal context: print a marker and a backtrace on stderr.
 *===----------------------------------------------------------------------===*/
#define _GNU_SOURCE
#include "Sanitizers.h"

#include <execinfo.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);

static __thread int g_checking;

static void check(const char *what) {
  if (g_checking)
    return;
  g_checking = 1;
  sigset_t current;
  sigemptyset(&current);
  /* The raw system call: the libc wrapper could itself be interposed. */
  if (syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &current, 8) == 0 &&
      sigismember(&current, SIGRTMAX)) {
    static const char marker[] = "ALLOCATION IN SIGNAL CONTEXT: ";
    write(2, marker, sizeof(marker) - 1);
    write(2, what, strlen(what));
    write(2, "\n", 1);
    void *frames[32];
    backtrace_symbols_fd(frames, backtrace(frames, 32), 2);
  }
  g_checking = 0;
}

#ifdef CAUSAL_TEST_SANITIZED
/* The sanitizer owns the allocator (its malloc comes first in the lookup
 * order and must free what it allocated): the guard watches it through the
 * sanitizers' allocation hooks instead of defining malloc. */
int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void *, size_t),
                                              void (*free_hook)(const volatile void *));

static void onMalloc(const volatile void *p, size_t size) {
  (void)p;
  (void)size;
  check("malloc");
}
static void onFree(const volatile void *p) {
  (void)p;
  check("free");
}
__attribute__((constructor)) static void installHooks(void) {
  __sanitizer_install_malloc_and_free_hooks(onMalloc, onFree);
}
#else
void *malloc(size_t size) {
  check("malloc");
  return __libc_malloc(size);
}
void free(void *p) {
  if (p)
    check("free");
  __libc_free(p);
}
void *calloc(size_t count, size_t size) {
  check("calloc");
  return __libc_calloc(count, size);
}
void *realloc(void *p, size_t size) {
  check("realloc");
  return __libc_realloc(p, size);
}
#endif
