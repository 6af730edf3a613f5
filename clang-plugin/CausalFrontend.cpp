//===- CausalFrontend.cpp - CausalFrontend.so: the clang front-end action -===//
//
// Loaded by CausalPlugin.so when clang loads that with -fplugin (see
// CausalPlugin.cpp for why this is a separate file). The PluginASTAction runs
// before the main action of every compilation and
//
//   * raises debug info to at least line tables: the link step builds the
//     profiler's line table from them. A user's -g is never lowered;
//   * pushes a callback onto CodeGenOpts.PassBuilderCallbacks that adds the
//     causal pass at OptimizerLast (every -O level, and the pre-link compile
//     of -flto and -flto=thin) -- unless -fpass-plugin also names
//     CausalPlugin.so, whose llvmGetPassPluginInfo() then adds it: the pass is
//     added once.
//
// Arguments: -fplugin-arg-causal-<arg>, see KnownPluginArguments.
//
//===----------------------------------------------------------------------===//

#include "CausalInstrument.h"
#include "FrontendInterface.h"

#include "causal/abi.h"

#include "clang/AST/ASTConsumer.h"
#include "clang/Basic/CodeGenOptions.h"
#include "clang/Basic/Diagnostic.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendOptions.h"
#include "clang/Frontend/FrontendPluginRegistry.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"

#include <memory>
#include <string>
#include <vector>

using namespace clang;
using namespace causal;

namespace {

/// Set by CausalPlugin.so right after loading this file.
const FrontendServices *PassSide = nullptr;

/// One -fplugin-arg-causal-<Name> argument. New arguments go in this table.
struct PluginArgument {
  const char *Name;
  void (*Apply)(CausalInstrumentOptions &Options);
};

const PluginArgument KnownPluginArguments[] = {
    // Objects for a link that will not have the runtime nor the line table.
    {"no-register-module",
     [](CausalInstrumentOptions &Options) { Options.RegisterModule = false; }},
};

std::string listOfKnownArguments() {
  std::string List;
  for (const PluginArgument &Argument : KnownPluginArguments)
    List += (List.empty() ? "" : ", ") + std::string(Argument.Name);
  return List;
}

/// True if this compilation asked for CausalPlugin.so with -fplugin (cc1
/// -load). Once the file is loaded, the action is registered for the whole
/// process, also when only -fpass-plugin loaded it (during code generation):
/// a process that runs several compilations (clang's driver runs a lone cc1
/// job in-process; libclang users) must not change behaviour for later ones.
bool isLoadedAsFrontendPlugin(const FrontendOptions &FrontendOpts) {
  for (const std::string &Plugin : FrontendOpts.Plugins)
    if (llvm::sys::fs::equivalent(Plugin, PassSide->PassPluginPath))
      return true;
  return false;
}

bool isAlsoLoadedAsPassPlugin(const CodeGenOptions &CodeGenOpts) {
  for (const std::string &PassPlugin : CodeGenOpts.PassPlugins)
    if (llvm::sys::fs::equivalent(PassPlugin, PassSide->PassPluginPath))
      return true;
  return false;
}

// At least line-tables-only DWARF; more (a user's -g) is kept.
void raiseDebugInfoToLineTables(CodeGenOptions &CodeGenOpts) {
  if (CodeGenOpts.getDebugInfo() >= llvm::codegenoptions::DebugLineTablesOnly)
    return;
  CodeGenOpts.setDebugInfo(llvm::codegenoptions::DebugLineTablesOnly);
  // Without -g the driver passes no DWARF version; use what -g gives on the
  // (ELF) targets the profiler supports.
  if (CodeGenOpts.DwarfVersion == 0)
    CodeGenOpts.DwarfVersion = 5;
}

class CausalPluginAction : public PluginASTAction {
public:
  bool ParseArgs(const CompilerInstance &CI, const std::vector<std::string> &Args) override {
    DiagnosticsEngine &Diags = CI.getDiagnostics();
    if (!PassSide) {
      Diags.Report(Diags.getCustomDiagID(DiagnosticsEngine::Error,
                                         "load the causal plugin as -fplugin=<prefix>/lib/causal/"
                                         "CausalPlugin.so, not " CAUSAL_FRONTEND_FILE_NAME));
      return false;
    }
    if (!isLoadedAsFrontendPlugin(CI.getFrontendOpts()))
      return false; // not asked for: skip the action quietly
    bool AllKnown = true;
    for (const std::string &Arg : Args) {
      bool Known = false;
      for (const PluginArgument &Argument : KnownPluginArguments)
        if (Arg == Argument.Name) {
          Argument.Apply(Options);
          Known = true;
        }
      if (Known)
        continue;
      Diags.Report(Diags.getCustomDiagID(DiagnosticsEngine::Error,
                                         "unknown argument '-fplugin-arg-" CAUSAL_PLUGIN_NAME
                                         "-%0' for the " CAUSAL_PLUGIN_NAME " plugin (known: %1)"))
          << Arg << listOfKnownArguments();
      AllKnown = false;
    }
    return AllKnown;
  }

  ActionType getActionType() override { return AddBeforeMainAction; }

  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance &CI, llvm::StringRef) override {
    CodeGenOptions &CodeGenOpts = CI.getCodeGenOpts();
    raiseDebugInfoToLineTables(CodeGenOpts);
    if (!isAlsoLoadedAsPassPlugin(CodeGenOpts)) {
      auto Register = PassSide->RegisterAtOptimizerLast;
      CodeGenOpts.PassBuilderCallbacks.push_back(
          [Register, PassOptions = Options](llvm::PassBuilder &PB) { Register(PB, PassOptions); });
    }
    return std::make_unique<ASTConsumer>();
  }

private:
  CausalInstrumentOptions Options;
};

} // namespace

static FrontendPluginRegistry::Add<CausalPluginAction>
    RegisterCausalPlugin(CAUSAL_PLUGIN_NAME, "prepare code for causal profiling");

extern "C" __attribute__((visibility("default"))) void
causal_frontend_attach(const FrontendServices *Services) {
  PassSide = Services;
}
