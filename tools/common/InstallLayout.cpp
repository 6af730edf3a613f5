#include "InstallLayout.h"

#include <climits>
#include <cstdlib>
#include <string>
#include <sys/stat.h>
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

bool isExecutableFile(const std::string &path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

std::string findInPath(const std::string &name, const char *defaultPath) {
  if (name.find('/') != std::string::npos)
    return name;
  const char *path = std::getenv("PATH");
  std::string dirs = path ? path : defaultPath;
  for (size_t start = 0; start <= dirs.size();) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos)
      end = dirs.size();
    std::string dir = end > start ? dirs.substr(start, end - start) : ".";
    if (isExecutableFile(dir + "/" + name))
      return dir + "/" + name;
    start = end + 1;
  }
  return {};
}
} // namespace causal
