//===- CausalInstrument.cpp - The causal instrumentation pass -------------===//
//
// Emits into every module what the causal runtime needs to find it:
//
//   * a constructor CAUSAL_MODULE_CTOR_NAME (priority
//     CAUSAL_MODULE_CTOR_PRIORITY) that passes the bounds of the image's
//     CAUSAL_LINETAB_SECTION (hidden extern_weak __start_/__stop_ symbols, null
//     when the image has no such section) to CAUSAL_REGISTER_MODULE_FN, and
//   * a destructor CAUSAL_MODULE_DTOR_NAME that calls
//     CAUSAL_UNREGISTER_MODULE_FN.
//
// Each function is in a COMDAT group of its own name, and its
// llvm.global_ctors / llvm.global_dtors entry names the function as associated
// data, which puts the .init_array/.fini_array entry in that same group: the
// linker keeps exactly one function and one entry per linked image (the scheme
// SanitizerCoverage uses for its module constructor). The group must be named
// after the function because the backend names the entry's group after the
// associated symbol. The runtime
// functions are extern_weak and called only when their address is non-null,
// so an instrumented object also links and runs without the runtime.
//
// The pass is idempotent: a module that already has the constructor is left
// alone, so running it twice (e.g. -fplugin together with -fpass-plugin, or a
// ThinLTO backend compile of already instrumented bitcode) changes nothing.
//
//===----------------------------------------------------------------------===//

#include "CausalInstrument.h"

#include "causal/abi.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"

using namespace llvm;
using namespace causal;

// Command-line overrides of CausalInstrumentOptions (for opt and -mllvm). An
// option given on the command line wins over what the plugin asked for.
static cl::opt<bool> ClRegisterModule(
    "causal-register-module",
    cl::desc("Emit the module constructor/destructor that register the image's line "
             "table (section " CAUSAL_LINETAB_SECTION ") with the causal runtime"),
    cl::Hidden, cl::init(true));

static CausalInstrumentOptions overrideFromCommandLine(CausalInstrumentOptions Options) {
  if (ClRegisterModule.getNumOccurrences())
    Options.RegisterModule = ClRegisterModule;
  return Options;
}

namespace {

/// Instruments one module. instrument() runs each step in turn; a step is a
/// small member function that returns whether it changed the module.
class ModuleInstrumenter {
public:
  ModuleInstrumenter(Module &M, const CausalInstrumentOptions &Options)
      : M(M), Options(Options), TargetTriple(M.getTargetTriple()), Ctx(M.getContext()),
        PtrTy(PointerType::getUnqual(Ctx)), VoidTy(Type::getVoidTy(Ctx)) {}

  bool instrument() {
    bool Changed = false;
    if (Options.RegisterModule)
      Changed |= emitModuleRegistration();
    return Changed;
  }

private:
  bool emitModuleRegistration();

  GlobalVariable *getOrInsertLineTableBound(StringRef SymbolName);
  FunctionCallee getOrInsertWeakRuntimeFunction(StringRef Name, ArrayRef<Type *> Params);
  Function *createModuleInitFunction(StringRef Name);
  void emitCallIfDefined(Function *Caller, FunctionCallee Callee, ArrayRef<Value *> Args);

  Module &M;
  const CausalInstrumentOptions &Options;
  Triple TargetTriple;
  LLVMContext &Ctx;
  PointerType *PtrTy;
  Type *VoidTy;
};

} // namespace

bool ModuleInstrumenter::emitModuleRegistration() {
  // The section bounds come from the ELF linker's __start_/__stop_ symbols.
  if (!TargetTriple.isOSBinFormatELF())
    return false;
  // Idempotent: the constructor exists once the pass has run on this module.
  if (M.getNamedValue(CAUSAL_MODULE_CTOR_NAME))
    return false;

  GlobalVariable *Start = getOrInsertLineTableBound(CAUSAL_LINETAB_START_SYMBOL);
  GlobalVariable *Stop = getOrInsertLineTableBound(CAUSAL_LINETAB_STOP_SYMBOL);

  Function *Ctor = createModuleInitFunction(CAUSAL_MODULE_CTOR_NAME);
  emitCallIfDefined(Ctor, getOrInsertWeakRuntimeFunction(CAUSAL_REGISTER_MODULE_FN, {PtrTy, PtrTy}),
                    {Start, Stop});
  appendToGlobalCtors(M, Ctor, CAUSAL_MODULE_CTOR_PRIORITY, /*Data=*/Ctor);

  Function *Dtor = createModuleInitFunction(CAUSAL_MODULE_DTOR_NAME);
  emitCallIfDefined(Dtor, getOrInsertWeakRuntimeFunction(CAUSAL_UNREGISTER_MODULE_FN, {PtrTy}),
                    {Start});
  appendToGlobalDtors(M, Dtor, CAUSAL_MODULE_CTOR_PRIORITY, /*Data=*/Dtor);
  return true;
}

// A hidden extern_weak reference to a linker-defined section bound. Hidden:
// each image registers its own section, never another image's. Weak: an image
// linked without the section resolves it to null.
GlobalVariable *ModuleInstrumenter::getOrInsertLineTableBound(StringRef SymbolName) {
  if (GlobalVariable *Existing = M.getGlobalVariable(SymbolName))
    return Existing;
  auto *Bound =
      new GlobalVariable(M, Type::getInt8Ty(Ctx), /*isConstant=*/true,
                         GlobalValue::ExternalWeakLinkage, /*Initializer=*/nullptr, SymbolName);
  Bound->setVisibility(GlobalValue::HiddenVisibility);
  return Bound;
}

// A runtime entry point as an extern_weak declaration, so the object links
// without the runtime; callers test its address before calling it.
FunctionCallee ModuleInstrumenter::getOrInsertWeakRuntimeFunction(StringRef Name,
                                                                  ArrayRef<Type *> Params) {
  FunctionCallee Callee = M.getOrInsertFunction(Name, FunctionType::get(VoidTy, Params, false));
  if (auto *F = dyn_cast<Function>(Callee.getCallee()))
    if (F->isDeclaration())
      F->setLinkage(GlobalValue::ExternalWeakLinkage);
  return Callee;
}

// An empty function in a COMDAT group of its own name. linkonce_odr, not
// internal: LTO resolves COMDATs through the symbol table, where internal
// symbols are absent, so internal copies from several modules would all
// survive a -flto link. Hidden: one per image (executable or DSO).
Function *ModuleInstrumenter::createModuleInitFunction(StringRef Name) {
  Function *F = Function::createWithDefaultAttr(
      FunctionType::get(VoidTy, false), GlobalValue::LinkOnceODRLinkage,
      M.getDataLayout().getProgramAddressSpace(), Name, &M);
  F->setVisibility(GlobalValue::HiddenVisibility);
  F->addFnAttr(Attribute::NoUnwind);
  F->setComdat(M.getOrInsertComdat(Name));
  return F;
}

// Emits into the empty function Caller:
//   if (&Callee != null) Callee(Args...);
//   return;
void ModuleInstrumenter::emitCallIfDefined(Function *Caller, FunctionCallee Callee,
                                           ArrayRef<Value *> Args) {
  BasicBlock *Entry = BasicBlock::Create(Ctx, "entry", Caller);
  BasicBlock *Call = BasicBlock::Create(Ctx, "call", Caller);
  BasicBlock *Return = BasicBlock::Create(Ctx, "return", Caller);

  IRBuilder<> IRB(Entry);
  Value *IsDefined = IRB.CreateICmpNE(
      Callee.getCallee(), Constant::getNullValue(Callee.getCallee()->getType()), "runtime.present");
  IRB.CreateCondBr(IsDefined, Call, Return);

  IRB.SetInsertPoint(Call);
  IRB.CreateCall(Callee, Args);
  IRB.CreateBr(Return);

  IRB.SetInsertPoint(Return);
  IRB.CreateRetVoid();
}

CausalInstrumentPass::CausalInstrumentPass(CausalInstrumentOptions Options)
    : Options(overrideFromCommandLine(Options)) {}

PreservedAnalyses CausalInstrumentPass::run(Module &M, ModuleAnalysisManager &) {
  if (!ModuleInstrumenter(M, Options).instrument())
    return PreservedAnalyses::all();
  return PreservedAnalyses::none();
}

void causal::registerCausalInstrumentPipelineParsing(PassBuilder &PB) {
  PB.registerPipelineParsingCallback(
      [](StringRef Name, ModulePassManager &MPM, ArrayRef<PassBuilder::PipelineElement>) {
        if (Name != CAUSAL_PASS_NAME)
          return false;
        MPM.addPass(CausalInstrumentPass());
        return true;
      });
}

void causal::registerCausalInstrumentAtOptimizerLast(PassBuilder &PB,
                                                     CausalInstrumentOptions Options) {
  // LLVM 20 added the (Thin)LTO phase to the callback. The pass runs in every
  // phase: it is idempotent, so a post-link run after the pre-link one adds
  // nothing.
#if LLVM_VERSION_MAJOR >= 20
  PB.registerOptimizerLastEPCallback(
      [Options](ModulePassManager &MPM, OptimizationLevel, ThinOrFullLTOPhase) {
        MPM.addPass(CausalInstrumentPass(Options));
      });
#else
  PB.registerOptimizerLastEPCallback([Options](ModulePassManager &MPM, OptimizationLevel) {
    MPM.addPass(CausalInstrumentPass(Options));
  });
#endif
}
