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

#include "llvm/IR/PassManager.h"

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
};

class CausalInstrumentPass : public llvm::PassInfoMixin<CausalInstrumentPass> {
public:
  explicit CausalInstrumentPass(CausalInstrumentOptions Options = {});

  llvm::PreservedAnalyses run(llvm::Module &M, llvm::ModuleAnalysisManager &MAM);

  /// Runs at -O0 and on optnone functions too.
  static bool isRequired() { return true; }

private:
  CausalInstrumentOptions Options;
};

/// Lets a pipeline text name the pass (`opt -passes=causal-instrument`).
void registerCausalInstrumentPipelineParsing(llvm::PassBuilder &PB);

/// Adds the pass at the OptimizerLast extension point, which every -O level
/// and the pre-link step of -flto and -flto=thin reach.
void registerCausalInstrumentAtOptimizerLast(llvm::PassBuilder &PB,
                                             CausalInstrumentOptions Options);

} // namespace causal

#endif // CAUSAL_PASS_CAUSALINSTRUMENT_H
