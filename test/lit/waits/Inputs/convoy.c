// A lock convoy: "holder" takes the lock once and keeps it 30 ms; three
// "waiter" threads queue behind it. Their episodes are of kind Mutex, the
// first woken by the holder at its unlock line, the others by the waiter
// before them. The holder lets the lock go only once every waiter sleeps in
// its lock: on a loaded machine a waiter that came late would find the lock
// free, or wait less than 30 ms. Once only: a holder that took the lock again
// sometimes lost it to the waiter it had woken and waited for that waiter.
// Prints a checksum; exit status 3.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile int shared;
static volatile int holder_ready;
static volatile long waiter_tids[3];

#include "spin_for.h"

static void *holder(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "holder");
  pthread_mutex_lock(&lock);
  holder_ready = 1;
  for (int i = 0; i < 3; ++i)
    waitUntilSleeping(&waiter_tids[i]);
  spinFor(30 * 1000 * 1000);
  shared += 1;
  pthread_mutex_unlock(&lock); // UNLOCK_LINE
  return 0;
}

static void *waiter(void *arg) {
  pthread_setname_np(pthread_self(), "waiter");
  while (!holder_ready)
    ;
  *(volatile long *)arg = syscall(SYS_gettid);
  pthread_mutex_lock(&lock); // LOCK_LINE
  shared += 10;
  pthread_mutex_unlock(&lock);
  return 0;
}

int main(void) {
  pthread_t h, w[3];
  pthread_create(&h, 0, holder, 0);
  for (int i = 0; i < 3; ++i)
    pthread_create(&w[i], 0, waiter, (void *)&waiter_tids[i]);
  for (int i = 0; i < 3; ++i)
    pthread_join(w[i], 0);
  pthread_join(h, 0);
  printf("shared=%d\n", shared);
  return 3;
}
