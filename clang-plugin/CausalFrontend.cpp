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
//     added once (and then with default options: the plugin arguments below
//     need the pass added by this action);
//   * registers the function attributes [[causal::progress]] (also
//     __attribute__((causal_progress))), [[causal::path]] (also
//     __attribute__((causal_path))) and
//     __attribute__((causal_transaction("name"))); causal/causal.h wraps them
//     in CAUSAL_PROGRESS_FUNCTION, CAUSAL_PATH and CAUSAL_TRANSACTION("name"), defined to
//     nothing unless this plugin predefines __CAUSAL_ATTRIBUTES__. They reach
//     the IR as annotations (llvm.global.annotations "causal.progress",
//     "causal.path" and "causal.transaction=<name>"), which the pass lowers
//     to progress points and to the call-path entry and exits.
//
// Arguments: -fplugin-arg-causal-<arg>, see KnownPluginArguments, and the
// progress point specs progress=, progress-fn=, latency= (pass/ProgressSpec.h),
// and the functions chosen for call paths paths=NAME,... and paths-file=FILE
// (pass/PathSpec.h; the file is read here, an unreadable one is an error).
//
//===----------------------------------------------------------------------===//

#include "CausalInstrument.h"
#include "FrontendInterface.h"
#include "PathSpec.h"

#include "causal/abi.h"

#include "clang/AST/ASTConsumer.h"
#include "clang/AST/Attr.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/Basic/CodeGenOptions.h"
#include "clang/Basic/Diagnostic.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendOptions.h"
#include "clang/Frontend/FrontendPluginRegistry.h"
#include "clang/Lex/Preprocessor.h"
#include "clang/Sema/ParsedAttr.h"
#include "clang/Sema/Sema.h"
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

/// Predefined while the plugin is active; causal/causal.h tests it.
#define CAUSAL_ATTRIBUTES_MACRO "__CAUSAL_ATTRIBUTES__"

const PluginArgument KnownPluginArguments[] = {
    // Objects for a link that will not have the runtime nor the line table.
    {"no-register-module",
     [](CausalInstrumentOptions &Options) { Options.RegisterModule = false; }},
    // Keep direct calls of pthread & co. as they are.
    {"no-sync-hooks", [](CausalInstrumentOptions &Options) { Options.SyncHooks = false; }},
};

/// Names of the progress point arguments, which take a value.
std::string listOfProgressArguments() {
  std::string List;
  size_t Count = 0;
  const ProgressOptionParser *Parsers = progressOptionParsers(Count);
  for (size_t I = 0; I < Count; ++I)
    List += ", " + std::string(Parsers[I].Name) + "=...";
  return List + ", paths=..., paths-file=...";
}

std::string listOfKnownArguments() {
  std::string List;
  for (const PluginArgument &Argument : KnownPluginArguments)
    List += (List.empty() ? "" : ", ") + std::string(Argument.Name);
  return List + listOfProgressArguments();
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

/// paths=NAME,... and paths-file=FILE (pass/PathSpec.h): true when Arg is one
/// and is valid; false with Error set when it is one and is not, false with
/// Error empty when it is not one.
bool parsePathsArgument(const std::string &Arg, std::vector<std::string> &Out, std::string &Error) {
  const std::string List = "paths=", File = "paths-file=";
  if (Arg.compare(0, List.size(), List) == 0)
    return splitPathPatterns(Arg.substr(List.size()), Out, Error);
  if (Arg.compare(0, File.size(), File) == 0)
    return readPathPatternsFile(Arg.substr(File.size()), Out, Error);
  return false;
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
      std::string Error;
      if (parseProgressOption(Arg, Options.ProgressPoints, Error) ||
          parsePathsArgument(Arg, Options.PathPatterns, Error))
        continue;
      if (!Error.empty()) {
        Diags.Report(Diags.getCustomDiagID(DiagnosticsEngine::Error,
                                           "-fplugin-arg-" CAUSAL_PLUGIN_NAME "-%0: %1"))
            << Arg << Error;
        AllKnown = false;
        continue;
      }
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
    // Tells causal/causal.h that the attributes exist (clang's
    // __has_cpp_attribute does not see plugin attributes). The predefines are
    // read when the main file is entered, after this.
    if (CI.hasPreprocessor()) {
      Preprocessor &PP = CI.getPreprocessor();
      PP.setPredefines(PP.getPredefines() + "#define " CAUSAL_ATTRIBUTES_MACRO " 1\n");
    }
    if (!isAlsoLoadedAsPassPlugin(CodeGenOpts)) {
      auto Register = PassSide->RegisterPasses;
      CodeGenOpts.PassBuilderCallbacks.push_back(
          [Register, PassOptions = Options](llvm::PassBuilder &PB) { Register(PB, PassOptions); });
    }
    return std::make_unique<ASTConsumer>();
  }

private:
  CausalInstrumentOptions Options;
};

// ---- Attributes -------------------------------------------------------------

/// Attaches Annotation to a function definition or declaration, as
/// __attribute__((annotate(Annotation))) would: clang emits it into
/// llvm.global.annotations for the definition.
void annotateFunction(Sema &S, Decl *D, const ParsedAttr &Attr, llvm::StringRef Annotation) {
  D->addAttr(AnnotateAttr::Create(S.Context, Annotation, nullptr, 0, Attr.getRange()));
}

bool appertainsToFunction(Sema &S, const ParsedAttr &Attr, const Decl *D) {
  if (isa<FunctionDecl>(D))
    return true;
  S.Diag(Attr.getLoc(), S.getDiagnostics().getCustomDiagID(
                            DiagnosticsEngine::Error, "'%0' attribute only applies to functions"))
      << Attr.getAttrName()->getName();
  return false;
}

/// [[causal::progress]]: each return of the function is a visit of a
/// throughput point named after it.
struct ProgressAttrInfo : public ParsedAttrInfo {
  ProgressAttrInfo() {
    static constexpr Spelling Spellings[] = {{ParsedAttr::AS_GNU, "causal_progress"},
                                             {ParsedAttr::AS_CXX11, "causal::progress"},
                                             {ParsedAttr::AS_C23, "causal::progress"}};
    this->Spellings = Spellings;
  }
  bool diagAppertainsToDecl(Sema &S, const ParsedAttr &Attr, const Decl *D) const override {
    return appertainsToFunction(S, Attr, D);
  }
  AttrHandling handleDeclAttribute(Sema &S, Decl *D, const ParsedAttr &Attr) const override {
    if (Attr.getNumArgs() != 0) {
      S.Diag(Attr.getLoc(),
             S.getDiagnostics().getCustomDiagID(DiagnosticsEngine::Error,
                                                "'progress' attribute takes no arguments"));
      return AttributeNotApplied;
    }
    annotateFunction(S, D, Attr, "causal.progress");
    return AttributeApplied;
  }
};

/// [[causal::path]]: the call paths of the function are collected
/// (docs/paths.md).
struct PathAttrInfo : public ParsedAttrInfo {
  PathAttrInfo() {
    static constexpr Spelling Spellings[] = {{ParsedAttr::AS_GNU, "causal_path"},
                                             {ParsedAttr::AS_CXX11, "causal::path"},
                                             {ParsedAttr::AS_C23, "causal::path"}};
    this->Spellings = Spellings;
  }
  bool diagAppertainsToDecl(Sema &S, const ParsedAttr &Attr, const Decl *D) const override {
    return appertainsToFunction(S, Attr, D);
  }
  AttrHandling handleDeclAttribute(Sema &S, Decl *D, const ParsedAttr &Attr) const override {
    if (Attr.getNumArgs() != 0) {
      S.Diag(Attr.getLoc(), S.getDiagnostics().getCustomDiagID(
                                DiagnosticsEngine::Error, "'path' attribute takes no arguments"));
      return AttributeNotApplied;
    }
    annotateFunction(S, D, Attr, "causal.path");
    return AttributeApplied;
  }
};

/// __attribute__((causal_transaction("name"))): entry begins and each return
/// ends a transaction of latency point "name". The [[causal::transaction]]
/// spellings are registered but cannot get the name: clang 19 and 22 parse
/// the arguments of a [[scope::name]] attribute only when hasAttribute()
/// knows it, which ignores plugins (as does __has_cpp_attribute). They are
/// reported as an error that says which spelling to use.
struct TransactionAttrInfo : public ParsedAttrInfo {
  TransactionAttrInfo() {
    OptArgs = 1; // checked in handleDeclAttribute, with a clearer message
    static constexpr Spelling Spellings[] = {{ParsedAttr::AS_GNU, "causal_transaction"},
                                             {ParsedAttr::AS_CXX11, "causal::transaction"},
                                             {ParsedAttr::AS_C23, "causal::transaction"}};
    this->Spellings = Spellings;
  }
  bool diagAppertainsToDecl(Sema &S, const ParsedAttr &Attr, const Decl *D) const override {
    return appertainsToFunction(S, Attr, D);
  }
  AttrHandling handleDeclAttribute(Sema &S, Decl *D, const ParsedAttr &Attr) const override {
    const StringLiteral *Name = nullptr;
    if (Attr.getNumArgs() == 1 && Attr.isArgExpr(0))
      Name = dyn_cast<StringLiteral>(Attr.getArgAsExpr(0)->IgnoreParenCasts());
    if (!Name || Name->getLength() == 0 || !Name->isOrdinary()) {
      S.Diag(Attr.getLoc(), S.getDiagnostics().getCustomDiagID(
                                DiagnosticsEngine::Error,
                                "'transaction' attribute takes one argument: the transaction "
                                "name, a non-empty string literal (clang drops the arguments "
                                "of a plugin's [[...]] attribute: write "
                                "__attribute__((causal_transaction(\"name\"))) or "
                                "CAUSAL_TRANSACTION(\"name\") of causal/causal.h)"));
      return AttributeNotApplied;
    }
    annotateFunction(S, D, Attr, ("causal.transaction=" + Name->getString()).str());
    return AttributeApplied;
  }
};

} // namespace

static ParsedAttrInfoRegistry::Add<ProgressAttrInfo> RegisterProgressAttr("causal_progress",
                                                                          "[[causal::progress]]");
static ParsedAttrInfoRegistry::Add<PathAttrInfo> RegisterPathAttr("causal_path",
                                                                  "[[causal::path]]");
static ParsedAttrInfoRegistry::Add<TransactionAttrInfo>
    RegisterTransactionAttr("causal_transaction", "[[causal::transaction(\"name\")]]");

static FrontendPluginRegistry::Add<CausalPluginAction>
    RegisterCausalPlugin(CAUSAL_PLUGIN_NAME, "prepare code for causal profiling");

extern "C" __attribute__((visibility("default"))) void
causal_frontend_attach(const FrontendServices *Services) {
  PassSide = Services;
}
