//===- runtime/PathsControl.h - Live control of call paths -----------------===//
//
// `causal paths enable|disable|top --pid PID` (docs/paths.md, "Live
// control"): a process whose runtime is active and which registered a chosen
// function serves a control block (causal/paths_control.h) in a file of its
// own, mapped shared; its profiler thread (started for it when nothing else
// starts one) polls the block's command at every poll step and carries it
// out: enable or disable functions by name, write PROFILE.paths now.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_RUNTIME_PATHSCONTROL_H
#define CAUSAL_RUNTIME_PATHSCONTROL_H

namespace causal::rt {

/// Chosen functions were registered (the runtime's start-up, after it is
/// active; an image loaded later): creates the control block if there is
/// none, the runtime is active and CAUSAL_PATHS_CONTROL allows, and starts
/// the profiler thread to serve it. Not from signal handlers.
void pathsControlFunctionsRegistered();

/// Whether this process serves a control block (and wants a profiler thread).
bool pathsControlOpen();

/// The profiler thread's poll step: one relaxed load when nothing is asked;
/// else the command is carried out and acknowledged.
void pollPathsControl();

/// The profiler thread stops (the block is not served until another starts).
void pathsControlStopsServing();

/// Profiling ends (the last write of the paths): nothing more is served, the
/// file is removed. Only by the process that created it.
void pathsControlEnds();

/// Fork child: the parent's block is the parent's; the child makes its own.
void pathsControlForkChild();

} // namespace causal::rt

#endif // CAUSAL_RUNTIME_PATHSCONTROL_H
