#include "InstallLayout.h"

#include <climits>
#include <string>
#include <unistd.h>

namespace causal {
namespace layout {

std::string prefixOfThisExecutable() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0)
    return {};
  std::string path(buf, static_cast<size_t>(n));
  auto parent = [](const std::string &p) {
    size_t slash = p.find_last_of('/');
    return slash == std::string::npos ? std::string(".") : p.substr(0, slash);
  };
  std::string dir = parent(path);
  // libexec/causal/<tool> -> two levels up; bin/<tool> -> one level up.
  if (dir.size() >= 15 && dir.compare(dir.size() - 15, 15, "/libexec/causal") == 0)
    return dir.substr(0, dir.size() - 15);
  return parent(dir);
}

} // namespace layout
} // namespace causal
