//===- runtime/hooks/ProcessEnd.cpp - _exit, _Exit, quick_exit ------------===//
//
// _exit and _Exit, called by the program (or a library) through the C
// library, end the process without atexit handlers; the profile is written
// first all the same, as exit writes it, and the status is the program's.
// exit's own end, and posix_spawn's child, call the C library's internal
// _exit, which does not come here; a vfork child writes nothing (as for
// exec). None of them returns.
//
//===----------------------------------------------------------------------===//

#include "HookCore.h"

namespace causal::rt::hooks {
CAUSAL_FORWARD void _exitHook(uint64_t /*caller*/, int status) { exitProcessNow(status); }
CAUSAL_FORWARD void _ExitHook(uint64_t /*caller*/, int status) { exitProcessNow(status); }

// quick_exit runs the at_quick_exit handlers, then glibc's internal _exit:
// the profile is written first.
CAUSAL_FORWARD void quick_exitHook(uint64_t /*caller*/, int status) {
  flushProfileBeforeExec();
  if (auto real = REAL(quick_exit))
    real(status);
  exitProcessNow(status);
}

} // namespace causal::rt::hooks
