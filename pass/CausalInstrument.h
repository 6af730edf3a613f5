//===- CausalInstrument.h - The causal instrumentation pass -----*- C++ -*-===//
//
// The module pass that prepares code for causal profiling. Everything it emits
// is named by include/causal/abi.h, the contract with the link step and the
// runtime. The pass is "required": it runs at every optimization level and on
// optnone functions, because a module without it is invisible to the profiler.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_PASS_CAUSALINSTRUMENT_H
#define CAUSAL_PASS_CAUSALINSTRUMENT_H

#include "ProgressSpec.h"

#include "llvm/IR/PassManager.h"

#include <vector>

namespace llvm {
class PassBuilder;
} // namespace llvm

namespace causal {

/// What the pass emits. The front-end plugin fills this from
/// -fplugin-arg-causal-<arg>; the cl::opt flags at the top of
/// CausalInstrument.cpp override it (opt, -mllvm).
struct CausalInstrumentOptions {
  /// Emit the module constructor/destructor that register the line table of
  /// the linked image with the runtime.
  bool RegisterModule = true;
  /// Rewrite direct calls of the CAUSAL_HOOK functions of causal/hooks.def
  /// into calls of their CAUSAL_HOOK_PREFIX hooks (when the runtime defines
  /// them).
  bool SyncHooks = true;
  /// Progress points named at build time (-fcausal-progress and friends).
  std::vector<ProgressPointSpec> ProgressPoints;
  /// Functions chosen for call-path profiling (-fcausal-paths,
  /// -fcausal-paths-file; pass/PathSpec.h): symbols, demangled names with or
  /// without parameters, or fnmatch globs of them, as written.
  std::vector<std::string> PathPatterns;
};

/// Which steps a run performs. Progress points and the entry and exits of
/// the functions chosen for call paths are placed before the optimizer runs
/// (PipelineStart), so function returns and source lines are those of the
/// source, not of inlined or merged code, and inlined copies carry them; the
/// rest (sync hooks, module registration, the inlined_at strings of the
/// call-path entries) at OptimizerLast. opt's causal-instrument does all.
enum class CausalInstrumentPhase { Early, Full };

class CausalInstrumentPass : public llvm::PassInfoMixin<CausalInstrumentPass> {
public:
  explicit CausalInstrumentPass(CausalInstrumentOptions Options = {},
                                CausalInstrumentPhase Phase = CausalInstrumentPhase::Full);

  llvm::PreservedAnalyses run(llvm::Module &M, llvm::ModuleAnalysisManager &MAM);

  /// Runs at -O0 and on optnone functions too.
  static bool isRequired() { return true; }

private:
  /// Malformed -causal-progress* command-line specs and unreadable
  /// -causal-paths-file files, reported when run.
  /// Declared first: the constructor fills it while initializing Options.
  std::vector<std::string> OptionErrors;
  CausalInstrumentOptions Options;
  CausalInstrumentPhase Phase;
};

/// The Early phase as a pass of its own name (in -fdebug-pass-manager
/// output): the pass's progress point steps, at PipelineStart.
class CausalProgressPointPass : public llvm::PassInfoMixin<CausalProgressPointPass> {
public:
  explicit CausalProgressPointPass(CausalInstrumentOptions Options = {})
      : Impl(std::move(Options), CausalInstrumentPhase::Early) {}
  llvm::PreservedAnalyses run(llvm::Module &M, llvm::ModuleAnalysisManager &MAM) {
    return Impl.run(M, MAM);
  }
  static bool isRequired() { return true; }

private:
  CausalInstrumentPass Impl;
};

/// Lets a pipeline text name the pass (`opt -passes=causal-instrument`).
void registerCausalInstrumentPipelineParsing(llvm::PassBuilder &PB);

/// Adds the pass at the PipelineStart (Early phase) and OptimizerLast (Full
/// phase) extension points, which every -O level and the pre-link step of
/// -flto and -flto=thin reach.
void registerCausalInstrumentPasses(llvm::PassBuilder &PB, CausalInstrumentOptions Options);

} // namespace causal

#endif // CAUSAL_PASS_CAUSALINSTRUMENT_H
