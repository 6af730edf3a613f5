// Small scenes of waiting, one per argument, for the --waits tests:
//   condvar  "waiter" waits on a condition "signaler" signals 20 ms later
//   join     main joins "child", which works 20 ms
//   sleep    main sleeps 20 ms
//   pipe     "reader" reads a pipe "writer" writes 20 ms later
//   fsync    main writes 1 MB to a file and fsyncs it, 10 times
//   barrier  three threads "partyMS" meet at a barrier after 5, 15, 30 ms (party30 last)
//   spin     "spinner" busy-waits (CAUSAL_SPIN_*) on a flag "releaser" sets
//            20 ms later
//   pingpong "ping" and "pong" hand a turn to each other through two
//            semaphores 20000 times: more episodes than one buffer holds
//   fork     the child sleeps 20 ms and exits; the parent waits for it, then
//            sleeps 20 ms
//   channel KIND STYLE
//            "receiver" waits for data on a channel KIND (pipe, socketpair,
//            tcp: a loopback connection, eventfd) that "sender" writes 20 ms
//            later; it waits by STYLE: read (recv for sockets), poll, select,
//            or epoll (the event's data a pointer, not the descriptor), or
//            poll-zero (busy polling with a zero timeout), then reads; or 64 KB written before it starts are read in blocking mode
//            (bulk) or non-blocking mode (bulk-nonblocking)
//   reuse    an eventfd that "oldwriter" wrote is closed; a new eventfd gets
//            its number, and main waits for it until "newwriter" writes it
//            20 ms later with a direct system call, which no hook sees: the
//            wait's waker is unknown, not the old descriptor's writer
//   openfifo PATH  main opens the FIFOs PATH.1 with open() and PATH.2 with
//            openat(), for reading, with flags the compiler cannot see (with
//            _FORTIFY_SOURCE, gcc calls __open_2 and __openat_2); "opener"
//            opens each for writing 20 ms later
// Each prints what it did and exits with status 5 (the program's own).
#define _GNU_SOURCE
#include <causal/causal.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "spin_for.h"

// ---- condvar
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int ready;
static volatile long waiter_tid; // set before the waiter waits
static void *condWaiter(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "waiter");
  waiter_tid = syscall(SYS_gettid);
  pthread_mutex_lock(&m);
  while (!ready)
    pthread_cond_wait(&c, &m); // COND_WAIT_LINE
  pthread_mutex_unlock(&m);
  return 0;
}
static void *condSignaler(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "signaler");
  // The waiter asleep in its wait first (on a loaded machine its thread may
  // start late: a signal before the wait began would wake nobody), then
  // 20 ms of work.
  waitUntilSleeping(&waiter_tid);
  spinFor(20 * 1000 * 1000);
  pthread_mutex_lock(&m);
  ready = 1;
  pthread_cond_signal(&c); // SIGNAL_LINE
  pthread_mutex_unlock(&m);
  return 0;
}

// ---- join
static void *child(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "child");
  spinFor(20 * 1000 * 1000);
  return 0;
}

// ---- pipe
static int fds[2];
static volatile long reader_tid; // set before the reader waits
static void *pipeReader(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "reader");
  reader_tid = syscall(SYS_gettid);
  char buffer[16];
  ssize_t n = read(fds[0], buffer, sizeof buffer); // READ_LINE
  printf("read %zd bytes\n", n);
  return 0;
}
static void *pipeWriter(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "writer");
  waitUntilSleeping(&reader_tid); // as the signaler above
  spinFor(20 * 1000 * 1000);
  ssize_t n = write(fds[1], "hello", 5); // WRITE_LINE
  (void)n;
  return 0;
}

// ---- barrier
// party30 comes last even when a CPU is taken from another party for a
// while (a VM's vCPU preempted by its host: party5 once reached the
// barrier 340 ms late in CI): it waits until the others are at the
// barrier, then 10 ms more, so that their waits are long.
static pthread_barrier_t barrier;
static int parties_arrived;
static void *party(void *arg) {
  char name[16];
  long ms = (long)arg;
  snprintf(name, sizeof name, "party%ld", ms);
  pthread_setname_np(pthread_self(), name);
  spinFor(ms * 1000 * 1000);
  if (ms == 30) {
    while (__atomic_load_n(&parties_arrived, __ATOMIC_ACQUIRE) < 2)
      spinFor(100 * 1000);
    spinFor(10 * 1000 * 1000);
  } else {
    __atomic_fetch_add(&parties_arrived, 1, __ATOMIC_RELEASE);
  }
  pthread_barrier_wait(&barrier); // BARRIER_LINE
  return 0;
}

// ---- spin
static volatile int released;
static void *spinner(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "spinner");
  CAUSAL_SPIN_BEGIN(&released); // SPIN_BEGIN_LINE
  while (!released)
    ;
  CAUSAL_SPIN_END(&released);
  return 0;
}
static void *releaser(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "releaser");
  spinFor(20 * 1000 * 1000);
  CAUSAL_SPIN_WAKE(&released); // SPIN_WAKE_LINE
  released = 1;
  return 0;
}

// ---- pingpong
static sem_t ping_turn, pong_turn;
enum { kRounds = 20000 };
static void *ping(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "ping");
  for (int i = 0; i < kRounds; ++i) {
    sem_wait(&ping_turn);
    sem_post(&pong_turn);
  }
  return 0;
}
static void *pong(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "pong");
  for (int i = 0; i < kRounds; ++i) {
    sem_post(&ping_turn);
    sem_wait(&pong_turn);
  }
  return 0;
}

// ---- channel
static int channel_rx = -1, channel_tx = -1;
static const char *channel_style = "read";
static int openChannel(const char *kind) {
  int two[2];
  if (!strcmp(kind, "pipe") && pipe(two) == 0) {
    channel_rx = two[0];
    channel_tx = two[1];
  } else if (!strcmp(kind, "socketpair") && socketpair(AF_UNIX, SOCK_STREAM, 0, two) == 0) {
    channel_rx = two[1];
    channel_tx = two[0];
  } else if (!strcmp(kind, "eventfd")) {
    channel_rx = channel_tx = eventfd(0, 0);
  } else if (!strcmp(kind, "tcp")) {
    struct sockaddr_in address;
    memset(&address, 0, sizeof address);
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof address;
    int listener = socket(AF_INET, SOCK_STREAM, 0);
    if (listener < 0 || bind(listener, (struct sockaddr *)&address, size) != 0 ||
        listen(listener, 1) != 0 || getsockname(listener, (struct sockaddr *)&address, &size) != 0)
      return -1;
    channel_tx = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(channel_tx, (struct sockaddr *)&address, size) != 0)
      return -1;
    channel_rx = accept(listener, 0, 0);
    close(listener);
  }
  return channel_rx >= 0 && channel_tx >= 0 ? 0 : -1;
}
static volatile long receiver_tid; // set before the receiver waits
static void *channelReceiver(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "receiver");
  receiver_tid = syscall(SYS_gettid);
  static int tag; // epoll's event data: a pointer, as libevent's callers use
  if (!strcmp(channel_style, "poll")) {
    struct pollfd one = {channel_rx, POLLIN, 0};
    poll(&one, 1, 10000); // CHANNEL_POLL_LINE
  } else if (!strcmp(channel_style, "select")) {
    fd_set readable;
    FD_ZERO(&readable);
    FD_SET(channel_rx, &readable);
    struct timeval ten = {10, 0};
    select(channel_rx + 1, &readable, 0, 0, &ten); // CHANNEL_SELECT_LINE
  } else if (!strcmp(channel_style, "poll-zero")) { // busy polling never waits
    struct pollfd one = {channel_rx, POLLIN, 0};
    while (poll(&one, 1, 0) == 0) // CHANNEL_POLL_ZERO_LINE
      ;
  } else if (!strcmp(channel_style, "epoll")) {
    int epfd = epoll_create1(0);
    struct epoll_event event = {EPOLLIN, {.ptr = &tag}};
    epoll_ctl(epfd, EPOLL_CTL_ADD, channel_rx, &event);
    struct epoll_event got;
    int ready = epoll_wait(epfd, &got, 1, 10000); // CHANNEL_EPOLL_LINE
    if (ready != 1 || got.data.ptr != &tag)
      printf("epoll: unexpected event\n");
    close(epfd);
  }
  if (!strncmp(channel_style, "bulk", 4)) { // 64 KB already there: read, never wait
    if (!strcmp(channel_style, "bulk-nonblocking"))
      fcntl(channel_rx, F_SETFL, fcntl(channel_rx, F_GETFL) | O_NONBLOCK);
    static char bulk[65536];
    ssize_t total = 0, n;
    while (total < (ssize_t)sizeof bulk &&
           (n = read(channel_rx, bulk + total, sizeof bulk - total)) > 0) // CHANNEL_BULK_LINE
      total += n;
    printf("received %zd bytes\n", total);
    return 0;
  }
  // A length the compiler cannot check: with _FORTIFY_SOURCE, __read_chk.
  static volatile size_t length = 16;
  char buffer[16];
  ssize_t n = read(channel_rx, buffer, length); // CHANNEL_READ_LINE
  printf("received %zd bytes\n", n);
  return 0;
}
static void *channelSender(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "sender");
  if (!strncmp(channel_style, "bulk", 4))
    return 0; // main wrote it
  // 20 ms of work, then the write once the receiver is asleep in its wait
  // (on a loaded machine it may not have reached it in 20 ms; a write
  // before the wait began would wake nobody). At most 10 s more.
  spinFor(20 * 1000 * 1000);
  for (int tries = 0; strcmp(channel_style, "poll-zero") && tries < 10000 &&
                     !(receiver_tid && isSleeping(receiver_tid));
       ++tries)
    spinFor(1000 * 1000);
  uint64_t one = 1;
  ssize_t n = write(channel_tx, &one, sizeof one); // CHANNEL_WRITE_LINE
  (void)n;
  return 0;
}

// ---- reuse
static int reuse_fd = -1;
static void *oldWriter(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "oldwriter");
  uint64_t one = 1;
  ssize_t n = write(reuse_fd, &one, sizeof one); // REUSE_OLD_WRITE_LINE
  (void)n;
  return 0;
}
static void *newWriter(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "newwriter");
  spinFor(20 * 1000 * 1000);
  uint64_t one = 1;
  syscall(SYS_write, reuse_fd, &one, sizeof one); // not a hook: no waker known
  return 0;
}
static int reuseScene(void) {
  reuse_fd = eventfd(0, 0);
  int old_number = reuse_fd;
  pthread_t t;
  pthread_create(&t, 0, oldWriter, 0);
  pthread_join(t, 0);
  uint64_t value;
  if (read(reuse_fd, &value, sizeof value) != sizeof value)
    return -1;
  close(reuse_fd);
  reuse_fd = eventfd(0, 0);
  printf("reuse: same number %s\n", reuse_fd == old_number ? "yes" : "no");
  pthread_create(&t, 0, newWriter, 0);
  ssize_t n = read(reuse_fd, &value, sizeof value); // REUSE_READ_LINE
  pthread_join(t, 0);
  close(reuse_fd);
  return n == sizeof value ? 0 : -1;
}

// ---- openfifo
static char fifo_paths[2][4096];
static void *fifoOpener(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "opener");
  for (int i = 0; i < 2; ++i) {
    spinFor(20 * 1000 * 1000);
    int fd = open(fifo_paths[i], O_WRONLY);
    if (fd >= 0)
      close(fd);
  }
  return 0;
}
static int openFifoScene(const char *path) {
  for (int i = 0; i < 2; ++i) {
    snprintf(fifo_paths[i], sizeof fifo_paths[i], "%s.%d", path, i + 1);
    unlink(fifo_paths[i]);
    if (mkfifo(fifo_paths[i], 0600) != 0)
      return -1;
  }
  static volatile int read_only = O_RDONLY; // flags the compiler cannot see
  pthread_t t;
  pthread_create(&t, 0, fifoOpener, 0);
  int first = open(fifo_paths[0], read_only);                // OPEN_LINE
  int second = openat(AT_FDCWD, fifo_paths[1], read_only); // OPENAT_LINE
  pthread_join(t, 0);
  printf("opened %s\n", first >= 0 && second >= 0 ? "both" : "not both");
  close(first);
  close(second);
  unlink(fifo_paths[0]);
  unlink(fifo_paths[1]);
  return 0;
}

int main(int argc, char **argv) {
  const char *scene = argc > 1 ? argv[1] : "";
  pthread_t a, b, p[3];
  if (!strcmp(scene, "condvar")) {
    pthread_create(&a, 0, condWaiter, 0);
    pthread_create(&b, 0, condSignaler, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
  } else if (!strcmp(scene, "join")) {
    pthread_create(&a, 0, child, 0);
    pthread_join(a, 0); // JOIN_LINE
  } else if (!strcmp(scene, "sleep")) {
    usleep(20 * 1000); // SLEEP_LINE
  } else if (!strcmp(scene, "pipe")) {
    if (pipe(fds) != 0)
      return 1;
    pthread_create(&a, 0, pipeReader, 0);
    pthread_create(&b, 0, pipeWriter, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
  } else if (!strcmp(scene, "fsync")) {
    const char *path = argc > 2 ? argv[2] : "fsync.data";
    umask(022);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0640); // FILE_OPEN_LINE
    if (fd < 0)
      return 1;
    struct stat st; // open's variadic mode reached the kernel
    if (fstat(fd, &st) == 0)
      printf("created mode %o\n", (unsigned)(st.st_mode & 0777));
    static char block[1 << 20];
    memset(block, 'x', sizeof block);
    for (int i = 0; i < 10; ++i) {
      if (write(fd, block, sizeof block) != (ssize_t)sizeof block) // FILE_WRITE_LINE
        return 1;
      fsync(fd); // FSYNC_LINE
    }
    close(fd);
    unlink(path);
  } else if (!strcmp(scene, "barrier")) {
    pthread_barrier_init(&barrier, 0, 3);
    long lengths[3] = {5, 15, 30};
    for (int i = 0; i < 3; ++i)
      pthread_create(&p[i], 0, party, (void *)lengths[i]);
    for (int i = 0; i < 3; ++i)
      pthread_join(p[i], 0);
  } else if (!strcmp(scene, "spin")) {
    pthread_create(&a, 0, spinner, 0);
    pthread_create(&b, 0, releaser, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
  } else if (!strcmp(scene, "pingpong")) {
    sem_init(&ping_turn, 0, 0);
    sem_init(&pong_turn, 0, 0);
    pthread_create(&a, 0, ping, 0);
    pthread_create(&b, 0, pong, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
  } else if (!strcmp(scene, "channel")) {
    if (argc < 4 || openChannel(argv[2]) != 0)
      return 1;
    channel_style = argv[3];
    if (!strncmp(channel_style, "bulk", 4)) {
      static char bulk[65536];
      memset(bulk, 'x', sizeof bulk);
      if (write(channel_tx, bulk, sizeof bulk) != (ssize_t)sizeof bulk)
        return 1;
    }
    pthread_create(&a, 0, channelReceiver, 0);
    pthread_create(&b, 0, channelSender, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
  } else if (!strcmp(scene, "fork")) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
      usleep(20 * 1000); // CHILD_SLEEP_LINE
      exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    usleep(20 * 1000); // PARENT_SLEEP_LINE
  } else if (!strcmp(scene, "reuse")) {
    if (reuseScene() != 0)
      return 1;
  } else if (!strcmp(scene, "openfifo") && argc > 2) {
    if (openFifoScene(argv[2]) != 0)
      return 1;
  } else {
    fprintf(stderr, "unknown scene '%s'\n", scene);
    return 2;
  }
  printf("scene %s done\n", scene);
  return 5;
}
