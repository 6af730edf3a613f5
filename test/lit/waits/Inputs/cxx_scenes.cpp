// C++ scenes for --waits, one per argument:
//   condition  "waiter" waits on a std::condition_variable (under a
//              std::mutex) that "notifier" notifies 20 ms later
//   atomic     "waiter" waits in std::atomic<int>::wait for a value that
//              "notifier" stores and notifies 20 ms later
// The condition variable's wait and notify run inside libstdc++ (no line
// table): the thread that woke is known, the lines are not.
// Each prints what it did and exits with status 5.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <pthread.h>
#include <thread>

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

} // namespace

int main(int argc, char **argv) {
  const char *scene = argc > 1 ? argv[1] : "";
  std::thread waiter, notifier;
  if (!std::strcmp(scene, "condition")) {
    waiter = std::thread([] {
      pthread_setname_np(pthread_self(), "waiter");
      std::unique_lock<std::mutex> lock(mutex);
      condition.wait(lock, [] { return ready; });
    });
    notifier = std::thread([] {
      pthread_setname_np(pthread_self(), "notifier");
      spinFor(std::chrono::milliseconds(20));
      {
        std::lock_guard<std::mutex> lock(mutex);
        ready = true;
      }
      condition.notify_one();
    });
  } else if (!std::strcmp(scene, "atomic")) {
    waiter = std::thread([] {
      pthread_setname_np(pthread_self(), "waiter");
      flag.wait(0);
    });
    notifier = std::thread([] {
      pthread_setname_np(pthread_self(), "notifier");
      spinFor(std::chrono::milliseconds(20));
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
