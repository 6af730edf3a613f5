//===- FrontendInterface.h - CausalPlugin.so <-> CausalFrontend.so -------===//
//
// CausalPlugin.so (the pass, llvmGetPassPluginInfo, no clang code) loads
// CausalFrontend.so (the clang PluginASTAction) when it finds itself inside a
// clang front end, and hands it what it needs from the pass side through
// CAUSAL_FRONTEND_ATTACH_FN. The front end does not link the pass itself: one
// copy of the pass and its cl::opt flags per process.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_CLANG_PLUGIN_FRONTENDINTERFACE_H
#define CAUSAL_CLANG_PLUGIN_FRONTENDINTERFACE_H

#include "CausalInstrument.h"

namespace causal {

struct FrontendServices {
  /// Path of CausalPlugin.so, to recognise -fpass-plugin=<same file>.
  const char *PassPluginPath;
  /// causal::registerCausalInstrumentPasses.
  void (*RegisterPasses)(llvm::PassBuilder &PB, CausalInstrumentOptions Options);
};

} // namespace causal

/// extern "C" void causal_frontend_attach(const causal::FrontendServices *);
#define CAUSAL_FRONTEND_ATTACH_FN "causal_frontend_attach"
using CausalFrontendAttachFn = void(const causal::FrontendServices *);

/// File name of the front-end half, next to CausalPlugin.so.
#define CAUSAL_FRONTEND_FILE_NAME "CausalFrontend.so"

#endif // CAUSAL_CLANG_PLUGIN_FRONTENDINTERFACE_H
