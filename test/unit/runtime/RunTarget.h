//===- test/unit/runtime/RunTarget.h - Runs a profiled test program -------===//
//
// Shared by SamplingTest and ExperimentTest: runs a target program in a
// directory with a clean environment (the test's own CAUSAL_* variables
// removed, the given ones added) and collects its status and output.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_TEST_UNIT_RUNTIME_RUNTARGET_H
#define CAUSAL_TEST_UNIT_RUNTIME_RUNTARGET_H

#include "ProfileParse.h"
#include "Sanitizers.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

extern char **environ;

namespace causal::test {

/// Makes a new directory |prefix|-XXXXXX under the test's temporary
/// directory; returns its path, or "" on failure.
inline std::string makeTempDir(const std::string &base, const char *prefix) {
  std::string pattern = base;
  if (pattern.empty() || pattern.back() != '/')
    pattern += '/';
  pattern += std::string(prefix) + "-XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back(0);
  return mkdtemp(buffer.data()) ? std::string(buffer.data()) : std::string();
}

/// Removes |dir| and everything in it.
inline void removeTree(const std::string &dir) {
  if (!dir.empty())
    (void)!system(("rm -rf '" + dir + "'").c_str());
}

struct TargetResult {
  bool exited = false;
  int status = -1; // exit status, or -signal
  std::string out, err;
};

/// Runs |program| |args| with |dir| as working directory; stdout and stderr
/// go to dir/stdout and dir/stderr and are read back. |in_child| runs in
/// the child before exec (false: the child exits with 125).
inline TargetResult runTarget(const std::string &program, const std::vector<std::string> &args,
                              const std::map<std::string, std::string> &env, const std::string &dir,
                              const std::function<bool()> &in_child = {}) {
  std::vector<std::string> environment;
  for (char **e = environ; *e; ++e)
    if (strncmp(*e, "CAUSAL_", 7) != 0)
      environment.push_back(*e);
  std::map<std::string, std::string> settings = env;
  // Under TSan the runtime is preloaded, ahead of TSan's runtime (which the
  // compiler links first): the runtime's pthread_create then calls TSan's,
  // whose thread start sets up TSan's state for the thread before the
  // runtime's (instrumented) thread trampoline runs. Linked first as
  // causal-ld links it, behind TSan, the trampoline ran first and crashed in
  // TSan's function-entry hook.
  if (kThreadSanitizer) {
    std::string &preload = settings["LD_PRELOAD"];
    preload = std::string(CAUSAL_RT_LIBRARY) + (preload.empty() ? "" : ":" + preload);
  }
  for (const auto &[key, value] : settings)
    environment.push_back(key + "=" + value);
  std::vector<char *> envp;
  for (std::string &e : environment)
    envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> arguments = {program};
  arguments.insert(arguments.end(), args.begin(), args.end());
  std::vector<char *> argv;
  for (std::string &a : arguments)
    argv.push_back(a.data());
  argv.push_back(nullptr);

  std::string out_path = dir + "/stdout", err_path = dir + "/stderr";
  TargetResult result;
  pid_t child = fork();
  if (child < 0)
    return result;
  if (child == 0) {
    int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (chdir(dir.c_str()) != 0 || out < 0 || err < 0)
      _exit(126);
    if (in_child && !in_child())
      _exit(125);
    dup2(out, 1);
    dup2(err, 2);
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  int status = 0;
  if (waitpid(child, &status, 0) != child)
    return result;
  result.exited = WIFEXITED(status);
  result.status = result.exited ? WEXITSTATUS(status) : -WTERMSIG(status);
  result.out = readFile(out_path);
  result.err = readFile(err_path);
  return result;
}

/// "key=value" from a target's stdout (0 if absent).
inline unsigned long long outputValue(const std::string &out, const std::string &key) {
  size_t at = out.find(key + "=");
  if (at == std::string::npos)
    return 0;
  return strtoull(out.c_str() + at + key.size() + 1, nullptr, 0);
}

} // namespace causal::test

#endif // CAUSAL_TEST_UNIT_RUNTIME_RUNTARGET_H
