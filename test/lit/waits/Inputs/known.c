// The known-answer programs of docs/waits.md, run for real (waits.test checks
// the same answers on synthetic sidecars), one per argument:
//   w1  a pipeline: "stageA" waits for items from "stageB", which writes and
//       fsyncs a file (argv[2]) for each item: the knot is {stageB, its disk},
//       stageA only waits because stageB is slow
//   w3  three threads "t5", "t15", "t30" sleep 5, 15, 30 ms and meet at a
//       barrier, 8 rounds: t30 is what the others wait for
//   w4  a pool: three "worker"s take items that a "producer" adds every 6 ms
//       and signals, and work 0.5 ms on each; an "announcer" broadcasts on
//       the same condition every 1.5 ms or more for nothing (a configuration
//       generation the workers do not wait for): each wait of a worker is
//       woken several times for nothing before its item comes. The workers
//       wait for the producer, not for the announcer
//   w5  "heartbeat" sleeps 2 ms at a time while "worker" computes for 200 ms
//       and main joins it: the heartbeat is a background thread, never a
//       bottleneck
// Each prints what it did and exits with status 0.
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "spin_for.h"

// ---- w1
enum { kItems = 40 };
static sem_t items;
static const char *w1_path;
static void *stageA(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "stageA");
  for (int i = 0; i < kItems; ++i)
    sem_wait(&items); // W1_WAIT_LINE
  return 0;
}
static void *stageB(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "stageB");
  int fd = open(w1_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  static char block[1 << 16];
  memset(block, 'b', sizeof block);
  for (int i = 0; i < kItems; ++i) {
    if (write(fd, block, sizeof block) != (ssize_t)sizeof block)
      exit(1);
    fdatasync(fd); // W1_FSYNC_LINE
    sem_post(&items); // W1_POST_LINE
  }
  close(fd);
  unlink(w1_path);
  return 0;
}

// ---- w3
static pthread_barrier_t barrier;
static void *party(void *arg) {
  long ms = (long)arg;
  char name[16];
  snprintf(name, sizeof name, "t%ld", ms);
  pthread_setname_np(pthread_self(), name);
  for (int round = 0; round < 8; ++round) {
    usleep(ms * 1000);
    pthread_barrier_wait(&barrier); // W3_BARRIER_LINE
  }
  return 0;
}

// ---- w4
enum { kPoolWorkers = 3, kPoolItems = 40 };
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pool_changed = PTHREAD_COND_INITIALIZER;
static int pool_items, pool_done, pool_generation, pool_taken;
static void *poolWorker(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "worker");
  for (;;) {
    pthread_mutex_lock(&pool_lock);
    while (pool_items == 0 && !pool_done)
      pthread_cond_wait(&pool_changed, &pool_lock); // W4_WAIT_LINE
    if (pool_items == 0) {
      pthread_mutex_unlock(&pool_lock);
      return 0;
    }
    --pool_items;
    ++pool_taken;
    pthread_mutex_unlock(&pool_lock);
    spinFor(500 * 1000); // the item's work
  }
}
static void *poolProducer(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "producer");
  for (int i = 0; i < kPoolItems; ++i) {
    usleep(6000);
    pthread_mutex_lock(&pool_lock);
    ++pool_items;
    pthread_cond_signal(&pool_changed); // W4_PRODUCE_LINE
    pthread_mutex_unlock(&pool_lock);
  }
  return 0;
}
static volatile int announcing = 1;
static void *poolAnnouncer(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "announcer");
  while (announcing) {
    usleep(1500);
    pthread_mutex_lock(&pool_lock);
    ++pool_generation;
    pthread_cond_broadcast(&pool_changed); // W4_ANNOUNCE_LINE
    pthread_mutex_unlock(&pool_lock);
  }
  return 0;
}

// ---- w5
static volatile int working = 1;
static void *heartbeat(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "heartbeat");
  while (working)
    usleep(2000); // W5_SLEEP_LINE
  return 0;
}
static void *worker(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "worker");
  spinFor(200 * 1000 * 1000);
  return 0;
}

int main(int argc, char **argv) {
  const char *scene = argc > 1 ? argv[1] : "";
  pthread_t t[3];
  if (!strcmp(scene, "w1")) {
    w1_path = argc > 2 ? argv[2] : "w1.data";
    sem_init(&items, 0, 0);
    pthread_create(&t[0], 0, stageA, 0);
    pthread_create(&t[1], 0, stageB, 0);
    pthread_join(t[0], 0);
    pthread_join(t[1], 0);
  } else if (!strcmp(scene, "w3")) {
    pthread_barrier_init(&barrier, 0, 3);
    long lengths[3] = {5, 15, 30};
    for (int i = 0; i < 3; ++i)
      pthread_create(&t[i], 0, party, (void *)lengths[i]);
    for (int i = 0; i < 3; ++i)
      pthread_join(t[i], 0);
  } else if (!strcmp(scene, "w4")) {
    pthread_t workers[kPoolWorkers];
    for (int i = 0; i < kPoolWorkers; ++i)
      pthread_create(&workers[i], 0, poolWorker, 0);
    pthread_create(&t[0], 0, poolProducer, 0);
    pthread_create(&t[1], 0, poolAnnouncer, 0);
    pthread_join(t[0], 0);
    pthread_mutex_lock(&pool_lock);
    pool_done = 1;
    pthread_cond_broadcast(&pool_changed);
    pthread_mutex_unlock(&pool_lock);
    for (int i = 0; i < kPoolWorkers; ++i)
      pthread_join(workers[i], 0);
    announcing = 0;
    pthread_join(t[1], 0);
    printf("w4: %d items taken\n", pool_taken);
  } else if (!strcmp(scene, "w5")) {
    pthread_create(&t[0], 0, heartbeat, 0);
    pthread_create(&t[1], 0, worker, 0);
    pthread_join(t[1], 0); // W5_JOIN_LINE
    working = 0;
    pthread_join(t[0], 0);
  } else {
    fprintf(stderr, "unknown scene '%s'\n", scene);
    return 2;
  }
  printf("%s done\n", scene);
  return 0;
}
