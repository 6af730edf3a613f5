// C++ scenes for --waits, one per argument:
//   condition  "waiter" waits on a std::condition_variable (under a
//              std::mutex) that "notifier" notifies 20 ms later
//   atomic     "waiter" waits in std::atomic<int>::wait for a value that
//              "notifier" stores and notifies 20 ms later
// The condition variable's wait and notify run inside libstdc++ (no line
// table): the thread that woke is known, the lines are not. The notifier
// starts its 20 ms once the waiter sleeps in the kernel (its state in
// /proc is S): on a loaded machine the waiter may run late, and a wait that
// begins after the notification is no wait (or a futex wait that fails).
// Each prints what it did and exits with status 5.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <pthread.h>
#include <thread>
#include <unistd.h>

namespace {

void spinFor(std::chrono::milliseconds length) {
  auto end = std::chrono::steady_clock::now() + length;
  while (std::chrono::steady_clock::now() < end)
    ;
}

std::mutex mutex;
std::condition_variable condition;
bool ready = false;
std::atomic<int> flag{0};
std::atomic<pid_t> waiter_tid{0};

// The waiter's state letter in /proc (R, S, ...), '?' if unknown.
char stateOf(pid_t tid) {
  char path[64], text[512] = {};
  std::snprintf(path, sizeof path, "/proc/self/task/%d/stat", int(tid));
  FILE *f = std::fopen(path, "r");
  if (!f)
    return '?';
  size_t n = std::fread(text, 1, sizeof text - 1, f);
  std::fclose(f);
  text[n] = 0;
  const char *close = std::strrchr(text, ')'); // the name may hold spaces
  return close && close[1] == ' ' ? close[2] : '?';
}

// Until the waiter sleeps in the kernel (5 s at most), then 20 ms more.
void afterTheWaiterSleeps() {
  auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < give_up) {
    pid_t tid = waiter_tid.load();
    if (tid && stateOf(tid) == 'S')
      break;
    std::this_thread::yield();
  }
  spinFor(std::chrono::milliseconds(20));
}

} // namespace

int main(int argc, char **argv) {
  const char *scene = argc > 1 ? argv[1] : "";
  std::thread waiter, notifier;
  if (!std::strcmp(scene, "condition")) {
    waiter = std::thread([] {
      pthread_setname_np(pthread_self(), "waiter");
      waiter_tid.store(gettid());
      std::unique_lock<std::mutex> lock(mutex);
      condition.wait(lock, [] { return ready; });
    });
    notifier = std::thread([] {
      pthread_setname_np(pthread_self(), "notifier");
      afterTheWaiterSleeps();
      {
        std::lock_guard<std::mutex> lock(mutex);
        ready = true;
      }
      condition.notify_one();
    });
  } else if (!std::strcmp(scene, "atomic")) {
    waiter = std::thread([] {
      pthread_setname_np(pthread_self(), "waiter");
      waiter_tid.store(gettid());
      flag.wait(0);
    });
    notifier = std::thread([] {
      pthread_setname_np(pthread_self(), "notifier");
      afterTheWaiterSleeps();
      flag.store(1);
      flag.notify_one();
    });
  } else {
    std::fprintf(stderr, "unknown scene '%s'\n", scene);
    return 2;
  }
  waiter.join();
  notifier.join();
  std::printf("scene %s done\n", scene);
  return 5;
}
