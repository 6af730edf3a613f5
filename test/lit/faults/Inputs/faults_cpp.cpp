// The fault suite's C++ cases: exceptions thrown and caught across threads
// and through instrumented frames, std::atomic waits, condition variables.
#include <causal/causal.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

static volatile unsigned long sink;

__attribute__((noinline)) static int mayThrow(int i) {
  for (int k = 0; k < 5000; ++k)
    sink += k;
  if (i % 3 == 0)
    throw std::runtime_error("round " + std::to_string(i));
  return i;
}

int main() {
  std::atomic<int> caught{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&caught] {
      for (int i = 0; i < 3000; ++i) {
        try {
          mayThrow(i);
        } catch (const std::exception &) {
          caught.fetch_add(1);
        }
        CAUSAL_PROGRESS_NAMED("round");
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  std::printf("caught %d\n", caught.load());

  // An exception that leaves a thread's function is rethrown in main.
  std::exception_ptr error;
  std::thread([&error] {
    try {
      mayThrow(0);
    } catch (...) {
      error = std::current_exception();
    }
  }).join();
  try {
    std::rethrow_exception(error);
  } catch (const std::runtime_error &e) {
    std::printf("rethrown: %s\n", e.what());
  }

  // std::atomic wait/notify ping-pong and a condition variable hand-off.
  std::atomic<int> turn{0};
  std::thread ponger([&turn] {
    for (int i = 0; i < 2000; ++i) {
      turn.wait(0);
      turn.store(0);
      turn.notify_one();
    }
  });
  for (int i = 0; i < 2000; ++i) {
    turn.store(1);
    turn.notify_one();
    turn.wait(1);
  }
  ponger.join();
  std::mutex m;
  std::condition_variable cv;
  int handed = 0;
  std::thread receiver([&] {
    std::unique_lock<std::mutex> lock(m);
    cv.wait(lock, [&] { return handed == 1000; });
  });
  for (int i = 0; i < 1000; ++i) {
    std::lock_guard<std::mutex> lock(m);
    ++handed;
    cv.notify_one();
  }
  receiver.join();
  std::printf("ping-pong and hand-off done\n");
  // Uncaught: std::terminate, abort (SIGABRT), as without the profiler.
  mayThrow(3);
  return 0;
}
