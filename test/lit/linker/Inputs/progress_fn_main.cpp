// Calls a function defined in the other module (progress_fn_server.cpp).
#include <cstdio>
namespace ns {
struct Server {
  int handle(int x);
};
} // namespace ns
int main() {
  ns::Server s;
  int sum = 0;
  for (int i = 0; i < 10; ++i)
    sum += s.handle(i);
  std::printf("%d\n", sum);
  return 0;
}
