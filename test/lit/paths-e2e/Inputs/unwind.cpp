// Chosen functions left without returning (issue 13, P3): by a C++ exception
// and by longjmp. Each entry is closed where the frame is left, and later
// paths do not nest under a frame that is gone.
#include <csetjmp>
#include <cstdio>
#include <stdexcept>

static volatile int sink;
static std::jmp_buf jump_target;

__attribute__((noinline)) void may_throw(int i) {
  sink = sink + i;
  if (i % 3 == 0)
    throw std::runtime_error("third");
}

__attribute__((noinline)) void jumps_out(int i) {
  sink = sink + i;
  if (i % 2 == 0)
    std::longjmp(jump_target, 1);
}

__attribute__((noinline)) void after_jump(int i) { sink = sink + i; }

__attribute__((noinline)) void throwing_loop(int n) {
  int caught = 0;
  for (int i = 0; i < n; ++i) {
    try {
      may_throw(i);
    } catch (const std::runtime_error &) {
      ++caught;
    }
  }
  std::printf("caught %d\n", caught);
}

__attribute__((noinline)) void jumping_loop(int n) {
  volatile int jumped = 0;
  for (volatile int i = 0; i < n; i = i + 1) {
    if (setjmp(jump_target) == 0)
      jumps_out(i);
    else
      jumped = jumped + 1;
    after_jump(i);
  }
  std::printf("jumped %d\n", (int)jumped);
}

int main() {
  throwing_loop(30);
  jumping_loop(40);
  return 0;
}
