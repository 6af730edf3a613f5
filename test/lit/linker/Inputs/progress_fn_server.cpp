// Defines the function the progress options name (progress_fn_main.cpp calls it).
namespace ns {
struct Server {
  int handle(int x);
};
int Server::handle(int x) { return 2 * x; }
} // namespace ns
