// A small producer/consumer program: std::mutex, std::condition_variable,
// std::thread, progress points from causal/causal.h and from the command line.
#include "causal/causal.h"

#include <condition_variable>
#include <cstdio>
#include <deque>
#include <mutex>
#include <thread>

static std::mutex Lock;
static std::condition_variable Ready;
static std::deque<int> Queue;
static bool Done = false;

static long consume(int item) { return static_cast<long>(item) * item; }

CAUSAL_PROGRESS_FUNCTION static void produce(int n) {
  for (int i = 1; i <= n; ++i) {
    {
      std::lock_guard<std::mutex> Guard(Lock);
      Queue.push_back(i);
      CAUSAL_BEGIN("item");
    }
    Ready.notify_one();
  }
  std::lock_guard<std::mutex> Guard(Lock);
  Done = true;
  Ready.notify_all();
}

int main() {
  long total = 0;
  std::thread Consumer([&total] {
    for (;;) {
      std::unique_lock<std::mutex> Guard(Lock);
      Ready.wait(Guard, [] { return !Queue.empty() || Done; });
      if (Queue.empty())
        return;
      int item = Queue.front();
      Queue.pop_front();
      Guard.unlock();
      total += consume(item); // CONSUMED
      CAUSAL_END("item");
      CAUSAL_PROGRESS;
    }
  });
  produce(200);
  Consumer.join();
  std::printf("total=%ld\n", total);
  return 0;
}
