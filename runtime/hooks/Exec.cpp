//===- runtime/hooks/Exec.cpp - The execl family --------------------------===//
//
// exec writes the pending profile block before the process image is
// replaced: the exec functions with an argument vector are lines of kind Exec
// in causal/hooks.def. The variadic ones (execl, execlp, execle) collect
// their arguments and do what the hook of the vector variant does.
//
//===----------------------------------------------------------------------===//

#include "HookCore.h"

#include <stdarg.h>

using namespace causal::rt;

namespace {
// Collects the variadic arguments of the execl family (NULL-terminated),
// then |envp| for execle.
#define CAUSAL_COLLECT_ARGS(first, with_env)                                                       \
  size_t count = 1;                                                                                \
  va_list args;                                                                                    \
  va_start(args, first);                                                                           \
  while (va_arg(args, const char *))                                                               \
    ++count;                                                                                       \
  va_end(args);                                                                                    \
  const char *argv[count + 1];                                                                     \
  argv[0] = first;                                                                                 \
  va_start(args, first);                                                                           \
  for (size_t i = 1; i <= count; ++i)                                                              \
    argv[i] = va_arg(args, const char *);                                                          \
  char *const *envp = with_env ? va_arg(args, char *const *) : nullptr;                            \
  va_end(args);                                                                                    \
  (void)envp;
} // namespace

extern "C" CAUSAL_RT_EXPORT CAUSAL_FORWARD int execl(const char *path, const char *arg, ...) {
  CAUSAL_COLLECT_ARGS(arg, false)
  return hooks::Exec::call<hooks::real_execv>(path, const_cast<char *const *>(argv));
}
extern "C" CAUSAL_RT_EXPORT CAUSAL_FORWARD int execlp(const char *file, const char *arg, ...) {
  CAUSAL_COLLECT_ARGS(arg, false)
  return hooks::Exec::call<hooks::real_execvp>(file, const_cast<char *const *>(argv));
}
extern "C" CAUSAL_RT_EXPORT CAUSAL_FORWARD int execle(const char *path, const char *arg, ...) {
  CAUSAL_COLLECT_ARGS(arg, true)
  return hooks::Exec::call<hooks::real_execve>(path, const_cast<char *const *>(argv), envp);
}
