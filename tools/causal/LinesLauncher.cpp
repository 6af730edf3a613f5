//===- LinesLauncher.cpp - `causal lines` runs libexec/causal/causal-lines -===//
//
// The line-table tools need LLVM's DWARF reader; keeping them in a program of
// their own keeps libLLVM out of `causal` (see CMakeLists.txt).
//
//===----------------------------------------------------------------------===//
#include "Commands.h"
#include "InstallLayout.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

int causal::linesCommand(const Args &args) {
  std::string prefix = layout::prefixOfThisExecutable();
  std::string program = prefix + "/" + layout::LibexecDir + "/causal-lines";
  std::vector<char *> argv;
  argv.push_back(const_cast<char *>(program.c_str()));
  for (const std::string &arg : args)
    argv.push_back(const_cast<char *>(arg.c_str()));
  argv.push_back(nullptr);
  execv(program.c_str(), argv.data());
  std::fprintf(stderr, "causal lines: error: cannot run %s: %s\n", program.c_str(),
               std::strerror(errno));
  return 1;
}
