//===- CausalInstrument.cpp - The causal instrumentation pass -------------===//
//
// Emits into every module what the causal runtime needs to find it and to
// run experiments (names and layouts: include/causal/abi.h):
//
//   * Progress points (abi.h "Progress points"). Each call of the weak marker
//     CAUSAL_PROGRESS_MARKER_FN (what the macros of causal/causal.h expand
//     to) becomes an inline relaxed atomic add of 1 on the counter of its
//     (kind, name), and the null check that guards it is folded away. The
//     same increment is placed for progress points named at build time:
//     source lines (each entry of the line), function returns and entries,
//     from the options (-fcausal-progress...) and from the [[causal::...]]
//     attributes of the front-end plugin, which reach the IR as
//     llvm.global.annotations "causal.progress" / "causal.transaction=NAME".
//     A counter is a linkonce_odr hidden global in a COMDAT of its own name
//     and in section CAUSAL_COUNTER_SECTION: one per (kind, name) and image.
//     Before each increment, the visit check of abi.h: a load of the
//     runtime's CAUSAL_DELAYS_ACTIVE_VAR and, while an experiment runs, a call
//     of CAUSAL_PROGRESS_VISIT_FN with the counter, so the thread pays what
//     it owes before it is counted and a latency visit records its time. The
//     same check goes before the inline increments of Coz's coz.h macros
//     (recognized by the _call_coz_get_counter call that fills the counter
//     pointer, before inlining).
//   * Call paths of chosen functions (abi.h "Call paths of chosen functions").
//     Each defined function that a -fcausal-paths name or glob matches, or
//     that has the plugin's [[causal::path]] attribute (annotation
//     "causal.path"), gets a descriptor (linkonce_odr hidden, COMDAT of its
//     own name, section CAUSAL_PATH_FN_SECTION), an entry check of the
//     descriptor's `enabled` byte that calls CAUSAL_PATH_ENTER_FN when it is
//     set, and at every way out (returns, and a cleanup landing pad for the
//     calls that may throw, made by EscapeEnumerator) a call of
//     CAUSAL_PATH_EXIT_FN when the entry returned a token. Placed before
//     inlining, so inlined copies carry it; at OptimizerLast each inlined
//     copy's entry call gets the string of the frames inlining removed.
//   * Sync hooks (abi.h "Hooks"). Each direct call of a declared function X
//     of a CAUSAL_HOOK line of causal/hooks.def calls instead
//     `&HOOK != null ? HOOK : X` with HOOK the extern_weak
//     CAUSAL_HOOK_PREFIX X, so a program without the runtime runs unchanged.
//     Functions named __causal* (the runtime's own) are left alone.
//   * Module registration: a constructor CAUSAL_MODULE_CTOR_NAME (priority
//     CAUSAL_MODULE_CTOR_PRIORITY) that passes the bounds of the image's
//     CAUSAL_LINETAB_SECTION to CAUSAL_REGISTER_MODULE_FN and then the bounds
//     of its CAUSAL_COUNTER_SECTION to CAUSAL_REGISTER_COUNTERS_FN and of its
//     CAUSAL_PATH_FN_SECTION to CAUSAL_REGISTER_PATH_FNS_FN (hidden
//     extern_weak __start_/__stop_ symbols, null when the image has no such
//     section), and a destructor CAUSAL_MODULE_DTOR_NAME that calls
//     CAUSAL_UNREGISTER_MODULE_FN. The constructor is the same in every
//     module (it is one COMDAT per image), so it registers the counter
//     section whether or not this module has counters.
//
// Each constructor/destructor is in a COMDAT group of its own name, and its
// llvm.global_ctors / llvm.global_dtors entry names the function as associated
// data, which puts the .init_array/.fini_array entry in that same group: the
// linker keeps exactly one function and one entry per linked image (the scheme
// SanitizerCoverage uses for its module constructor). The group must be named
// after the function because the backend names the entry's group after the
// associated symbol. The runtime functions are extern_weak and called only
// when their address is non-null, so an instrumented object also links and
// runs without the runtime.
//
// Phases: progress points are placed at PipelineStart (before inlining, so a
// function's returns and a line's entries are those of the source, at every
// -O level); hooks and registration at OptimizerLast. opt's
// causal-instrument does both. Every step is idempotent: the constructor is
// emitted once, markers and sync calls are gone once rewritten, and the
// build-time points mark the module (named metadata causal.progress_placed),
// as do the call-path instrumentation (causal.paths_placed) and the
// inlined_at strings (an entry call's argument is rewritten only while null).
//
//===----------------------------------------------------------------------===//

#include "CausalInstrument.h"
#include "PathSpec.h"

#include "causal/abi.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Demangle/Demangle.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Path.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/EscapeEnumerator.h"
#include "llvm/Transforms/Utils/Local.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"

#include <cstdlib>
#include <fnmatch.h>

using namespace llvm;
using namespace causal;

// Command-line overrides of CausalInstrumentOptions (for opt and -mllvm). An
// option given on the command line wins over what the plugin asked for; the
// progress point lists add to the plugin's.
static cl::opt<bool> ClRegisterModule(
    "causal-register-module",
    cl::desc("Emit the module constructor/destructor that register the image's line "
             "table (section " CAUSAL_LINETAB_SECTION ") with the causal runtime"),
    cl::Hidden, cl::init(true));

static cl::opt<bool> ClSyncHooks(
    "causal-sync-hooks",
    cl::desc("Rewrite direct calls of pthread/semaphore/signal wait and wake functions into "
             "calls of the causal runtime's " CAUSAL_HOOK_PREFIX "* hooks, when defined"),
    cl::Hidden, cl::init(true));

static cl::opt<bool> ClSettleAtProgress(
    "causal-settle-at-progress",
    cl::desc("Before each progress point increment, call the runtime's " CAUSAL_PROGRESS_VISIT_FN
             " while an experiment runs (" CAUSAL_DELAYS_ACTIVE_VAR " != 0)"),
    cl::Hidden, cl::init(true));

static cl::list<std::string>
    ClProgress("causal-progress", cl::desc("Throughput point at each entry of FILE:LINE[=NAME]"),
               cl::Hidden);
static cl::list<std::string>
    ClProgressFn("causal-progress-fn", cl::desc("Throughput point at each return of function FUNC"),
                 cl::Hidden);
static cl::list<std::string>
    ClLatency("causal-latency",
              cl::desc("Latency point NAME:BEGIN:END (FILE:LINE or fn:FUNC each)"), cl::Hidden);

static cl::list<std::string>
    ClPaths("causal-paths",
            cl::desc("Collect the call paths of the functions NAME,... (symbols, demangled names "
                     "with or without parameters, or fnmatch globs of them)"),
            cl::Hidden);
static cl::list<std::string>
    ClPathsFile("causal-paths-file",
                cl::desc("Collect the call paths of the functions named in FILE (one a line, "
                         "'#' comments)"),
                cl::Hidden);

static CausalInstrumentOptions overrideFromCommandLine(CausalInstrumentOptions Options,
                                                       std::vector<std::string> &Errors) {
  if (ClRegisterModule.getNumOccurrences())
    Options.RegisterModule = ClRegisterModule;
  if (ClSyncHooks.getNumOccurrences())
    Options.SyncHooks = ClSyncHooks;
  auto Add = [&](const cl::list<std::string> &List, auto Parse) {
    for (const std::string &Value : List) {
      std::string Error;
      if (!Parse(Value, Options.ProgressPoints, Error))
        Errors.push_back(Error);
    }
  };
  Add(ClProgress, parseProgressLineSpec);
  Add(ClProgressFn, parseProgressFunctionSpec);
  Add(ClLatency, parseLatencySpec);
  for (const std::string &List : ClPaths) {
    std::string Error;
    if (!splitPathPatterns(List, Options.PathPatterns, Error))
      Errors.push_back("-causal-paths=" + List + ": " + Error);
  }
  for (const std::string &File : ClPathsFile) {
    std::string Error;
    if (!readPathPatternsFile(File, Options.PathPatterns, Error))
      Errors.push_back("-causal-paths-file=" + File + ": " + Error);
  }
  return Options;
}

namespace {

/// The functions whose direct calls go through hooks (the CAUSAL_HOOK lines
/// of causal/hooks.def).
const char *const SyncFunctionNames[] = {
#define CAUSAL_HOOK(Kind, Outcome, Ret, Name, Params, Args, Version) #Name,
#include "causal/hooks.def"
};

/// Named metadata that marks a module whose build-time progress points are
/// placed.
const char *const ProgressPlacedMetadata = "causal.progress_placed";
/// Annotation strings of the front-end plugin's attributes.
const char *const ProgressAnnotation = "causal.progress";
const char *const TransactionAnnotationPrefix = "causal.transaction=";
const char *const PathAnnotation = "causal.path";
/// Named metadata that marks a module whose chosen functions are
/// instrumented for call paths.
const char *const PathsPlacedMetadata = "causal.paths_placed";

/// An error without a source location (a malformed option, a line without
/// code): printed as "causal: <message>", fails the compilation.
class CausalError : public DiagnosticInfo {
public:
  explicit CausalError(std::string Message)
      : DiagnosticInfo(kind(), DS_Error), Message(std::move(Message)) {}
  void print(DiagnosticPrinter &DP) const override { DP << "causal: " << Message; }
  static int kind() {
    static const int Kind = getNextAvailablePluginDiagnosticKind();
    return Kind;
  }

private:
  std::string Message;
};

/// The source path of a location's file, with "." and ".." removed.
std::string pathOf(const DIFile *File) {
  SmallString<256> Path;
  StringRef Name = File->getFilename();
  if (sys::path::is_absolute(Name) || File->getDirectory().empty())
    Path = Name;
  else
    sys::path::append(Path, File->getDirectory(), Name);
  sys::path::remove_dots(Path, /*remove_dot_dot=*/true);
  return std::string(Path.str());
}

/// FILE of a spec matches a path equal to it or ending in "/FILE".
bool fileMatches(StringRef Path, const std::string &SpecFile) {
  SmallString<256> Wanted(SpecFile);
  sys::path::remove_dots(Wanted, /*remove_dot_dot=*/true);
  StringRef W = Wanted.str();
  if (W.empty())
    return false;
  if (Path == W)
    return true;
  return Path.size() > W.size() && Path.ends_with(W) && Path[Path.size() - W.size() - 1] == '/';
}

bool sameLine(const DILocation *A, const DILocation *B) {
  if (A->getLine() != B->getLine())
    return false;
  const DIFile *FA = A->getFile(), *FB = B->getFile();
  return FA == FB || (FA && FB && FA->getFilename() == FB->getFilename() &&
                      FA->getDirectory() == FB->getDirectory());
}

/// The qualified name without parameters of a C++ function symbol
/// ("ns::Class::method"), or the symbol itself when it is not mangled.
std::string functionNameOf(StringRef Symbol) {
  std::string Mangled = Symbol.str();
  ItaniumPartialDemangler Demangler;
  if (Demangler.partialDemangle(Mangled.c_str()) || !Demangler.isFunction())
    return Mangled;
  size_t Size = 0;
  char *Name = Demangler.getFunctionName(nullptr, &Size);
  std::string Result = Name ? std::string(Name) : Mangled;
  std::free(Name);
  return Result;
}

/// Instruments one module. instrument() runs each step in turn; a step is a
/// small member function that returns whether it changed the module.
class ModuleInstrumenter {
public:
  ModuleInstrumenter(Module &M, const CausalInstrumentOptions &Options)
      : M(M), Options(Options), TargetTriple(M.getTargetTriple()), Ctx(M.getContext()),
        PtrTy(PointerType::getUnqual(Ctx)), VoidTy(Type::getVoidTy(Ctx)),
        Int8Ty(Type::getInt8Ty(Ctx)), Int32Ty(Type::getInt32Ty(Ctx)),
        Int64Ty(Type::getInt64Ty(Ctx)) {}

  bool instrument(CausalInstrumentPhase Phase) {
    // Counters and hooks rely on ELF section bounds and weak undefined
    // symbols; registration as well.
    if (!TargetTriple.isOSBinFormatELF())
      return false;
    bool Changed = false;
    Changed |= lowerProgressMarkers();
    Changed |= placeBuildTimeProgressPoints();
    Changed |= settleAtCozProgressPoints();
    Changed |= instrumentPathFunctions();
    if (Phase == CausalInstrumentPhase::Early)
      return Changed;
    Changed |= nameInlinedPathEntries();
    if (Options.SyncHooks)
      Changed |= rewriteSyncCalls();
    if (Options.RegisterModule)
      Changed |= emitModuleRegistration();
    return Changed;
  }

private:
  // Progress points.
  bool lowerProgressMarkers();
  bool placeBuildTimeProgressPoints();
  void placeAtFunction(Function &F, uint32_t Kind, StringRef Name);
  bool placeAtLines(ArrayRef<const ProgressPointSpec *> Specs);
  void recordRequests(const char *Section, StringRef Name, ArrayRef<std::string> Requests,
                      const std::vector<bool> &Matched);
  GlobalVariable *getOrCreateCounter(uint32_t Kind, StringRef Name);
  void emitIncrement(Instruction *Before, uint32_t Kind, StringRef Name, DebugLoc Loc);
  void emitVisitCheck(AtomicRMWInst *Increment);
  bool settleAtCozProgressPoints();
  void forEachAnnotatedFunction(function_ref<void(Function &, StringRef)> Visit);
  // Call paths.
  bool instrumentPathFunctions();
  GlobalVariable *getOrCreatePathDescriptor(Function &F);
  Function *getOrCreatePathCounter();
  void instrumentPathFunction(Function &F);
  bool nameInlinedPathEntries();
  void
  collectAttributePoints(SmallVectorImpl<std::tuple<Function *, uint32_t, std::string>> &Points);

  // Sync hooks.
  bool rewriteSyncCalls();

  // Registration.
  bool emitModuleRegistration();
  GlobalVariable *getOrInsertSectionBound(StringRef SymbolName);
  FunctionCallee getOrInsertWeakRuntimeFunction(StringRef Name, ArrayRef<Type *> Params,
                                                Type *Result = nullptr);
  Function *createModuleInitFunction(StringRef Name);
  BasicBlock *appendCallIfDefined(BasicBlock *At, FunctionCallee Callee, ArrayRef<Value *> Args);

  Module &M;
  const CausalInstrumentOptions &Options;
  Triple TargetTriple;
  LLVMContext &Ctx;
  PointerType *PtrTy;
  Type *VoidTy;
  IntegerType *Int8Ty;
  IntegerType *Int32Ty;
  IntegerType *Int64Ty;
};

} // namespace

// ---- Progress points ---------------------------------------------------------

// The counter of (Kind, Name): { i64 count, ptr name, i32 kind, i32 flags }
// as struct causal_counter, linkonce_odr hidden in a COMDAT of its own name
// (with its name string), so the linker keeps one per image.
GlobalVariable *ModuleInstrumenter::getOrCreateCounter(uint32_t Kind, StringRef Name) {
  std::string Symbol = (Twine(CAUSAL_COUNTER_SYMBOL_PREFIX) + Twine(Kind) + "." + Name).str();
  if (GlobalVariable *Existing = M.getGlobalVariable(Symbol, /*AllowInternal=*/true))
    return Existing;
  Comdat *Group = M.getOrInsertComdat(Symbol);
  Constant *NameData = ConstantDataArray::getString(Ctx, Name, /*AddNull=*/true);
  auto *NameString = new GlobalVariable(M, NameData->getType(), /*isConstant=*/true,
                                        GlobalValue::PrivateLinkage, NameData, Symbol + ".name");
  NameString->setAlignment(Align(1));
  NameString->setComdat(Group);

  StructType *CounterTy = StructType::get(Int64Ty, PtrTy, Int32Ty, Int32Ty);
  Constant *Init = ConstantStruct::get(CounterTy, {ConstantInt::get(Int64Ty, 0), NameString,
                                                   ConstantInt::get(Int32Ty, Kind),
                                                   ConstantInt::get(Int32Ty, 0)});
  auto *Counter = new GlobalVariable(M, CounterTy, /*isConstant=*/false,
                                     GlobalValue::LinkOnceODRLinkage, Init, Symbol);
  Counter->setVisibility(GlobalValue::HiddenVisibility);
  Counter->setSection(CAUSAL_COUNTER_SECTION);
  Counter->setAlignment(Align(8));
  Counter->setComdat(Group);
  return Counter;
}

// atomicrmw add ptr @counter, i64 1 monotonic: the count is the first field.
// Nothing may come between a musttail call and its return: an increment for
// that return goes before the call.
void ModuleInstrumenter::emitIncrement(Instruction *Before, uint32_t Kind, StringRef Name,
                                       DebugLoc Loc) {
  if (CallInst *MustTail = Before->getParent()->getTerminatingMustTailCall())
    if (MustTail->comesBefore(Before))
      Before = MustTail;
  IRBuilder<> IRB(Before);
  if (Loc)
    IRB.SetCurrentDebugLocation(Loc);
  AtomicRMWInst *Increment =
      IRB.CreateAtomicRMW(AtomicRMWInst::Add, getOrCreateCounter(Kind, Name),
                          ConstantInt::get(Int64Ty, 1), MaybeAlign(8), AtomicOrdering::Monotonic);
  emitVisitCheck(Increment);
}

// Before |Increment| (abi.h, "Visits during experiments"):
//   %flag = select (icmp ne @active, null), @active, @causal.no_delays
//   if (load atomic monotonic %flag != 0) call @visit(%counter)   ; unlikely
// The load is atomic so that no pass hoists it out of a loop: the flag
// changes under the loop's feet when an experiment starts. The select (not
// a branch) keeps the path without experiments to one predictable branch.
void ModuleInstrumenter::emitVisitCheck(AtomicRMWInst *Increment) {
  if (!ClSettleAtProgress)
    return;
  GlobalVariable *Active = M.getGlobalVariable(CAUSAL_DELAYS_ACTIVE_VAR);
  if (!Active) {
    Active = new GlobalVariable(M, Int32Ty, /*isConstant=*/false, GlobalValue::ExternalWeakLinkage,
                                /*Initializer=*/nullptr, CAUSAL_DELAYS_ACTIVE_VAR);
    Active->setAlignment(Align(4));
  }
  const char *NoDelaysName = "causal.no_delays";
  GlobalVariable *NoDelays = M.getGlobalVariable(NoDelaysName, /*AllowInternal=*/true);
  if (!NoDelays) {
    NoDelays = new GlobalVariable(M, Int32Ty, /*isConstant=*/true, GlobalValue::PrivateLinkage,
                                  ConstantInt::get(Int32Ty, 0), NoDelaysName);
    NoDelays->setAlignment(Align(4));
  }
  FunctionCallee Visit = getOrInsertWeakRuntimeFunction(CAUSAL_PROGRESS_VISIT_FN, {PtrTy});

  IRBuilder<> IRB(Increment);
  Value *Present = IRB.CreateICmpNE(Active, ConstantPointerNull::get(PtrTy), "causal.rt.present");
  Value *Flag = IRB.CreateSelect(Present, Active, NoDelays, "causal.delays.flag");
  LoadInst *Loaded = IRB.CreateAlignedLoad(Int32Ty, Flag, Align(4), "causal.delays.active");
  Loaded->setAtomic(AtomicOrdering::Monotonic);
  Instruction *Then = SplitBlockAndInsertIfThen(
      IRB.CreateICmpNE(Loaded, ConstantInt::get(Int32Ty, 0), "causal.delays.owed"),
      Increment->getIterator(), /*Unreachable=*/false,
      MDBuilder(Ctx).createBranchWeights(1, 1 << 20));
  Then->getParent()->setName("causal.visit");
  Increment->getParent()->setName("causal.count");
  IRBuilder<> Call(Then);
  Call.SetCurrentDebugLocation(Increment->getDebugLoc());
  Call.CreateCall(Visit, {Increment->getPointerOperand()});
}

// Replaces `if (&marker) marker(kind, "name");` by the increment: calls
// become increments, null checks of the marker become constants, and the
// branches on them are folded, so neither a call nor the marker's address
// is left in the code at any -O level.
bool ModuleInstrumenter::lowerProgressMarkers() {
  Function *Marker = M.getFunction(CAUSAL_PROGRESS_MARKER_FN);
  if (!Marker)
    return false;
  SmallPtrSet<Function *, 8> Touched;
  bool Failed = false;
  for (User *U : make_early_inc_range(Marker->users())) {
    if (auto *Check = dyn_cast<ICmpInst>(U)) {
      Value *Other = Check->getOperand(0) == Marker ? Check->getOperand(1) : Check->getOperand(0);
      if (!Check->isEquality() || !isa<ConstantPointerNull>(Other))
        continue;
      // With the pass, the marker is "present": its calls are increments.
      bool Present = Check->getPredicate() == ICmpInst::ICMP_NE;
      Check->replaceAllUsesWith(ConstantInt::getBool(Ctx, Present));
      Touched.insert(Check->getFunction());
      Check->eraseFromParent();
      continue;
    }
    auto *Call = dyn_cast<CallBase>(U);
    if (!Call || Call->getCalledOperand() != Marker || !isa<CallInst, InvokeInst>(Call))
      continue;
    Function &Caller = *Call->getFunction();
    // Reported once: the call is removed (the compilation fails anyway).
    auto Fail = [&](const Twine &Why) {
      Ctx.diagnose(DiagnosticInfoUnsupported(Caller, "causal: invalid progress point: " + Why,
                                             DiagnosticLocation(Call->getDebugLoc())));
      Failed = true;
      if (auto *Invoke = dyn_cast<InvokeInst>(Call))
        Call = changeToCall(Invoke);
      Call->eraseFromParent();
    };
    auto *KindArg = Call->arg_size() == 2 ? dyn_cast<ConstantInt>(Call->getArgOperand(0)) : nullptr;
    StringRef Name;
    if (!KindArg || KindArg->getValue().getActiveBits() > 32 ||
        (KindArg->getZExtValue() != CAUSAL_COUNTER_THROUGHPUT &&
         KindArg->getZExtValue() != CAUSAL_COUNTER_BEGIN &&
         KindArg->getZExtValue() != CAUSAL_COUNTER_END)) {
      Fail("the kind must be a constant CAUSAL_COUNTER_THROUGHPUT, _BEGIN or _END");
      continue;
    }
    if (!getConstantStringInfo(Call->getArgOperand(1), Name) || Name.empty()) {
      Fail("the name must be a non-empty constant string (a string literal)");
      continue;
    }
    // Every other byte is escaped in the profile (causal/profile_text.h);
    // a NUL ends the name the runtime reads, which would merge the point
    // with the one named by the bytes before it.
    StringRef Whole;
    if (getConstantStringInfo(Call->getArgOperand(1), Whole, /*TrimAtNul=*/false) &&
        Whole.drop_back(Whole.ends_with(StringRef("\0", 1)) ? 1 : 0).size() > Name.size()) {
      Fail("the name \"" + Name +
           "\" is followed by a NUL byte and more characters; a name "
           "ends at its first NUL, so this point would merge with \"" +
           Name + "\"");
      continue;
    }
    emitIncrement(Call, static_cast<uint32_t>(KindArg->getZExtValue()), Name, Call->getDebugLoc());
    Touched.insert(&Caller);
    if (auto *Invoke = dyn_cast<InvokeInst>(Call))
      Call = changeToCall(Invoke); // the increment cannot throw
    Call->eraseFromParent();
  }
  if (Failed)
    return false;
  for (Function *F : Touched) {
    for (BasicBlock &BB : *F)
      ConstantFoldTerminator(&BB, /*DeleteDeadConditions=*/true);
    removeUnreachableBlocks(*F);
  }
  if (Marker->use_empty())
    Marker->eraseFromParent();
  return !Touched.empty();
}

// Coz's coz.h increments a counter it got from the profiler, inline in the
// program's code:
//   static coz_counter_t *_counter;  ... _counter = _call_coz_get_counter(type, name);
//   if (_counter) __atomic_add_fetch(&_counter->count, 1, __ATOMIC_RELAXED);
// where _call_coz_get_counter is a static function of coz.h. Before
// inlining, the counter pointers are the globals that calls of it are stored
// to, and the visits are the atomic adds to the first field of a pointer
// loaded from one of them: each gets the settling check (once: the add is
// marked). After inlining (or in code built without the pass) the pattern is
// gone and the visit is counted without settling (docs/progress-points.md).
bool ModuleInstrumenter::settleAtCozProgressPoints() {
  if (!ClSettleAtProgress)
    return false;
  Function *GetCounter = M.getFunction("_call_coz_get_counter");
  if (!GetCounter)
    return false;
  const char *SettledMetadata = "causal.settled";
  SmallPtrSet<GlobalVariable *, 8> CounterSlots;
  for (User *U : GetCounter->users()) {
    auto *Call = dyn_cast<CallInst>(U);
    if (!Call || Call->getCalledOperand() != GetCounter)
      continue;
    for (User *CallUser : Call->users())
      if (auto *Store = dyn_cast<StoreInst>(CallUser))
        if (Store->getValueOperand() == Call)
          if (auto *Slot = dyn_cast<GlobalVariable>(Store->getPointerOperand()))
            CounterSlots.insert(Slot);
  }
  SmallVector<AtomicRMWInst *, 8> Visits;
  for (GlobalVariable *Slot : CounterSlots)
    for (User *U : Slot->users()) {
      auto *Load = dyn_cast<LoadInst>(U);
      if (!Load || Load->getPointerOperand() != Slot)
        continue;
      // The count is the first field: the add's address is the loaded
      // pointer, through zero-offset GEPs.
      SmallVector<Value *, 4> Addresses = {Load};
      while (!Addresses.empty()) {
        Value *Address = Addresses.pop_back_val();
        for (User *AddressUser : Address->users()) {
          if (auto *GEP = dyn_cast<GetElementPtrInst>(AddressUser)) {
            if (GEP->getPointerOperand() == Address && GEP->hasAllZeroIndices())
              Addresses.push_back(GEP);
          } else if (auto *RMW = dyn_cast<AtomicRMWInst>(AddressUser)) {
            if (RMW->getOperation() == AtomicRMWInst::Add && RMW->getPointerOperand() == Address &&
                !RMW->getMetadata(SettledMetadata))
              Visits.push_back(RMW);
          }
        }
      }
    }
  for (AtomicRMWInst *Visit : Visits) {
    emitVisitCheck(Visit);
    Visit->setMetadata(SettledMetadata, MDNode::get(Ctx, {}));
  }
  return !Visits.empty();
}

// Calls Visit(function, annotation) for each entry of llvm.global.annotations
// that annotates a function definition (the front-end plugin's attributes).
void ModuleInstrumenter::forEachAnnotatedFunction(function_ref<void(Function &, StringRef)> Visit) {
  GlobalVariable *Annotations = M.getGlobalVariable("llvm.global.annotations");
  if (!Annotations || !Annotations->hasInitializer())
    return;
  auto *Entries = dyn_cast<ConstantArray>(Annotations->getInitializer());
  if (!Entries)
    return;
  for (const Use &EntryUse : Entries->operands()) {
    auto *Entry = dyn_cast<ConstantStruct>(EntryUse.get());
    if (!Entry || Entry->getNumOperands() < 2)
      continue;
    auto *F = dyn_cast<Function>(Entry->getOperand(0)->stripPointerCasts());
    StringRef Annotation;
    if (!F || F->isDeclaration() || !getConstantStringInfo(Entry->getOperand(1), Annotation))
      continue;
    Visit(*F, Annotation);
  }
}

// Functions with the progress attributes: (function, kind, name); a
// transaction gives a begin and an end entry.
void ModuleInstrumenter::collectAttributePoints(
    SmallVectorImpl<std::tuple<Function *, uint32_t, std::string>> &Points) {
  forEachAnnotatedFunction([&](Function &F, StringRef Annotation) {
    if (Annotation == ProgressAnnotation) {
      Points.emplace_back(&F, CAUSAL_COUNTER_THROUGHPUT, functionNameOf(F.getName()));
    } else if (Annotation.starts_with(TransactionAnnotationPrefix)) {
      std::string Name = Annotation.drop_front(strlen(TransactionAnnotationPrefix)).str();
      Points.emplace_back(&F, CAUSAL_COUNTER_BEGIN, Name);
      Points.emplace_back(&F, CAUSAL_COUNTER_END, Name);
    }
  });
}

// Begin points at the function's entry, the others before each return.
void ModuleInstrumenter::placeAtFunction(Function &F, uint32_t Kind, StringRef Name) {
  if (Kind == CAUSAL_COUNTER_BEGIN) {
    BasicBlock &Entry = F.getEntryBlock();
    auto At = Entry.getFirstNonPHIOrDbgOrAlloca();
    DebugLoc Loc;
    for (Instruction &I : Entry)
      if (I.getDebugLoc() && I.getDebugLoc().getLine()) {
        Loc = I.getDebugLoc();
        break;
      }
    if (!Loc)
      if (DISubprogram *SP = F.getSubprogram())
        Loc = DILocation::get(Ctx, SP->getScopeLine() ? SP->getScopeLine() : SP->getLine(), 0, SP);
    emitIncrement(&*At, Kind, Name, Loc);
    return;
  }
  SmallVector<ReturnInst *, 4> Returns;
  for (BasicBlock &BB : F)
    if (auto *Ret = dyn_cast<ReturnInst>(BB.getTerminator()))
      Returns.push_back(Ret);
  for (ReturnInst *Ret : Returns)
    emitIncrement(Ret, Kind, Name, Ret->getDebugLoc());
}

// A line is entered where its first instruction in a block follows an
// instruction of another line, or starts the block and not every predecessor
// ends on that same line (then the block continues the line: a condition
// split over blocks, a loop on one line). Instructions without a line are
// ignored. At most one increment per block and spec.
bool ModuleInstrumenter::placeAtLines(ArrayRef<const ProgressPointSpec *> Specs) {
  std::vector<bool> HasCode(Specs.size(), false);
  DenseMap<const DIFile *, SmallVector<unsigned, 2>> SpecsOfFile;
  auto specsOf = [&](const DIFile *File) -> const SmallVector<unsigned, 2> & {
    auto [It, Inserted] = SpecsOfFile.try_emplace(File);
    if (Inserted && File) {
      std::string Path = pathOf(File);
      for (unsigned I = 0; I < Specs.size(); ++I)
        if (fileMatches(Path, Specs[I]->Where.File))
          It->second.push_back(I);
    }
    return It->second;
  };
  auto continuesFromAllPredecessors = [](BasicBlock &BB, const DILocation *Loc) {
    bool Any = false;
    for (BasicBlock *Pred : predecessors(&BB)) {
      const DILocation *End = Pred->getTerminator()->getDebugLoc().get();
      if (!End || !sameLine(End, Loc))
        return false;
      Any = true;
    }
    return Any;
  };

  SmallVector<std::pair<Instruction *, unsigned>, 16> Sites;
  for (Function &F : M) {
    if (F.isDeclaration() || F.getName().starts_with("__causal"))
      continue;
    for (BasicBlock &BB : F) {
      SmallVector<unsigned, 4> SeenInBlock;
      const DILocation *Prev = nullptr;
      for (Instruction &I : BB) {
        const DILocation *Loc = I.getDebugLoc().get();
        if (!Loc || Loc->getLine() == 0 || I.isDebugOrPseudoInst())
          continue;
        for (unsigned Index : specsOf(Loc->getFile())) {
          if (Specs[Index]->Where.Line != Loc->getLine() || is_contained(SeenInBlock, Index))
            continue;
          SeenInBlock.push_back(Index);
          HasCode[Index] = true;
          bool Enters = Prev ? !sameLine(Prev, Loc) : !continuesFromAllPredecessors(BB, Loc);
          if (!Enters)
            continue;
          Instruction *At = &I;
          if (isa<PHINode>(I) || I.isEHPad()) {
            auto First = BB.getFirstInsertionPt();
            if (First == BB.end())
              continue;
            At = &*First;
          }
          Sites.emplace_back(At, Index);
        }
        Prev = Loc;
      }
    }
  }
  for (auto [At, Index] : Sites)
    emitIncrement(At, Specs[Index]->Kind, Specs[Index]->Name, At->getDebugLoc());

  // A line of this translation unit's own source file without code is a
  // mistake (a wrong line number). Headers are not checked: a header line may
  // have code only in the translation units that use it.
  for (unsigned I = 0; I < Specs.size(); ++I) {
    if (HasCode[I])
      continue;
    for (DICompileUnit *CU : M.debug_compile_units()) {
      if (!CU->getFile() || !fileMatches(pathOf(CU->getFile()), Specs[I]->Where.File))
        continue;
      Ctx.diagnose(CausalError("progress point '" + Specs[I]->Origin + "': line " +
                               std::to_string(Specs[I]->Where.Line) + " of " +
                               pathOf(CU->getFile()) + " has no code"));
      break;
    }
  }
  return !Sites.empty();
}

bool ModuleInstrumenter::placeBuildTimeProgressPoints() {
  if (M.getNamedMetadata(ProgressPlacedMetadata))
    return false;
  SmallVector<std::tuple<Function *, uint32_t, std::string>, 8> FunctionPoints;
  collectAttributePoints(FunctionPoints);
  SmallVector<const ProgressPointSpec *, 8> LineSpecs;
  SmallVector<const ProgressPointSpec *, 8> FunctionSpecs;
  for (const ProgressPointSpec &Spec : Options.ProgressPoints)
    (Spec.Where.isFunction() ? FunctionSpecs : LineSpecs).push_back(&Spec);
  if (FunctionPoints.empty() && LineSpecs.empty() && FunctionSpecs.empty())
    return false;

  // Lines first: the function increments add instructions with lines.
  bool Changed = !LineSpecs.empty() && placeAtLines(LineSpecs);
  if (!FunctionSpecs.empty()) {
    std::vector<bool> Matched(FunctionSpecs.size(), false);
    for (Function &F : M) {
      if (F.isDeclaration() || F.getName().starts_with("__causal"))
        continue;
      std::string Qualified = functionNameOf(F.getName());
      for (unsigned I = 0; I < FunctionSpecs.size(); ++I)
        if (FunctionSpecs[I]->Where.Function == F.getName() ||
            FunctionSpecs[I]->Where.Function == Qualified) {
          FunctionPoints.emplace_back(&F, FunctionSpecs[I]->Kind, FunctionSpecs[I]->Name);
          Matched[I] = true;
        }
    }
    std::vector<std::string> Origins;
    for (const ProgressPointSpec *Spec : FunctionSpecs)
      Origins.push_back(Spec->Origin);
    recordRequests(CAUSAL_PROGRESS_REQUESTS_SECTION, "causal.progress_requests", Origins, Matched);
  }
  for (auto &[F, Kind, Name] : FunctionPoints) {
    placeAtFunction(*F, Kind, Name);
    Changed = true;
  }
  M.getOrInsertNamedMetadata(ProgressPlacedMetadata);
  return true;
}

// The function names the build asked for and whether each matched a function
// of this module, for causal-ld's warning about names that match no function
// anywhere: one record "1\tREQUEST\n" or "0\tREQUEST\n" each, in Section
// (causal/abi.h, CAUSAL_PROGRESS_REQUESTS_SECTION and
// CAUSAL_PATH_REQUESTS_SECTION).
void ModuleInstrumenter::recordRequests(const char *Section, StringRef Name,
                                        ArrayRef<std::string> Requests,
                                        const std::vector<bool> &Matched) {
  std::string Records;
  for (unsigned I = 0; I < Requests.size(); ++I)
    Records += (Matched[I] ? "1\t" : "0\t") + Requests[I] + "\n";
  Constant *Data = ConstantDataArray::getString(Ctx, Records, /*AddNull=*/false);
  auto *RequestsVar = new GlobalVariable(M, Data->getType(), /*isConstant=*/true,
                                         GlobalValue::PrivateLinkage, Data, Name);
  RequestsVar->setSection(Section);
  RequestsVar->setAlignment(Align(1));
  appendToUsed(M, {RequestsVar});
}

// ---- Call paths ------------------------------------------------------------------

/// Text for the strings of the call-path records: tabs and newlines (the
/// separators of the inlined_at string) and other control characters dropped.
static std::string withoutControlCharacters(StringRef Text) {
  std::string Result;
  for (char C : Text)
    if (static_cast<unsigned char>(C) >= 0x20 && C != 0x7f)
      Result += C;
  return Result;
}

/// Whether a function can carry the call-path entry and exits: defined here
/// (not available_externally: its code is not emitted), not the runtime's
/// own, not naked (no code may be added around its assembly).
static bool canCollectPaths(const Function &F) {
  return !F.isDeclaration() && !F.hasAvailableExternallyLinkage() &&
         !F.getName().starts_with("__causal") && !F.hasFnAttribute(Attribute::Naked);
}

/// Whether Pattern, as written by the user, names one of Names (the symbol,
/// its demangled name, the demangled name without parameters): equal to it,
/// or an fnmatch glob that matches it.
static bool pathPatternMatches(const std::string &Pattern, ArrayRef<std::string> Names) {
  for (const std::string &Name : Names)
    if (Name == Pattern || fnmatch(Pattern.c_str(), Name.c_str(), 0) == 0)
      return true;
  return false;
}

// The chosen functions: those a -fcausal-paths name or glob matches and
// those with [[causal::path]]. Each matched name leaves a request record for
// causal-ld (CAUSAL_PATH_REQUESTS_SECTION). Once per module.
bool ModuleInstrumenter::instrumentPathFunctions() {
  if (M.getNamedMetadata(PathsPlacedMetadata))
    return false;
  SetVector<Function *> Chosen;
  forEachAnnotatedFunction([&](Function &F, StringRef Annotation) {
    if (Annotation == PathAnnotation)
      Chosen.insert(&F);
  });
  const std::vector<std::string> &Patterns = Options.PathPatterns;
  if (Chosen.empty() && Patterns.empty())
    return false;
  if (!Patterns.empty()) {
    std::vector<bool> Matched(Patterns.size(), false);
    for (Function &F : M) {
      if (!canCollectPaths(F))
        continue;
      const std::string Names[] = {F.getName().str(), demangle(F.getName().str()),
                                   functionNameOf(F.getName())};
      for (unsigned I = 0; I < Patterns.size(); ++I)
        if (pathPatternMatches(Patterns[I], Names)) {
          Matched[I] = true;
          Chosen.insert(&F);
        }
    }
    recordRequests(CAUSAL_PATH_REQUESTS_SECTION, "causal.path_requests", Patterns, Matched);
  }
  for (Function *F : Chosen)
    if (canCollectPaths(*F))
      instrumentPathFunction(*F);
  M.getOrInsertNamedMetadata(PathsPlacedMetadata);
  return true;
}

// The descriptor of F, struct causal_path_fn:
//   { i8 enabled, [3 x i8] reserved, i32 id, ptr symbol, ptr name }
// linkonce_odr hidden in a COMDAT of its own name (with its two strings), in
// the writable section CAUSAL_PATH_FN_SECTION: one per symbol and image.
GlobalVariable *ModuleInstrumenter::getOrCreatePathDescriptor(Function &F) {
  std::string Symbol = (Twine(CAUSAL_PATH_FN_SYMBOL_PREFIX) + F.getName()).str();
  if (GlobalVariable *Existing = M.getGlobalVariable(Symbol, /*AllowInternal=*/true))
    return Existing;
  Comdat *Group = M.getOrInsertComdat(Symbol);
  auto makeString = [&](StringRef Text, StringRef Suffix) {
    Constant *Data = ConstantDataArray::getString(Ctx, Text, /*AddNull=*/true);
    auto *String = new GlobalVariable(M, Data->getType(), /*isConstant=*/true,
                                      GlobalValue::PrivateLinkage, Data, Symbol + Suffix);
    String->setAlignment(Align(1));
    String->setComdat(Group);
    return String;
  };
  ArrayType *ReservedTy = ArrayType::get(Int8Ty, 3);
  StructType *DescriptorTy = StructType::get(Int8Ty, ReservedTy, Int32Ty, PtrTy, PtrTy);
  Constant *Init = ConstantStruct::get(
      DescriptorTy, {ConstantInt::get(Int8Ty, 0), ConstantAggregateZero::get(ReservedTy),
                     ConstantInt::get(Int32Ty, 0), makeString(F.getName(), ".symbol"),
                     makeString(withoutControlCharacters(demangle(F.getName().str())), ".name")});
  auto *Descriptor = new GlobalVariable(M, DescriptorTy, /*isConstant=*/false,
                                        GlobalValue::LinkOnceODRLinkage, Init, Symbol);
  Descriptor->setVisibility(GlobalValue::HiddenVisibility);
  Descriptor->setSection(CAUSAL_PATH_FN_SECTION);
  Descriptor->setAlignment(Align(8));
  Descriptor->setComdat(Group);
  return Descriptor;
}

// The module's counter of entries (abi.h, "What the pass emits"), called by
// every chosen function's entry while its descriptor is enabled:
//
//   define linkonce_odr hidden i32 @causal.path.count(ptr %fn, ptr %inlined_at)
//       noinline nounwind cold comdat {
//     %enabled = load atomic i8, ptr %fn monotonic
//     br (icmp eq %enabled, CAUSAL_PATH_FN_COUNTED), %countdowns, %enter
//   countdowns:
//     %c = load ptr, ptr (threadlocal.address @__causal_path_countdowns)
//     br (icmp eq %c, null), %enter, %countdown
//   countdown:
//     %slot = getelementptr inbounds i32, ptr %c, i64 (zext (load atomic i32 (%fn + 4)))
//     %left = add (load atomic i32 %slot monotonic), -1
//     store atomic %left, %slot monotonic
//     br (icmp slt %left, 0), %enter, %skip
//   skip:
//     ret i32 0
//   enter:
//     %t = musttail call i32 @__causal_path_enter(ptr %fn, ptr %inlined_at)
//     ret i32 %t
//
// The musttail call leaves no frame of its own between the runtime and the
// chosen function: __causal_path_enter finds the return address into F and
// F's frame pointer as if F had called it. @__causal_path_countdowns is the
// runtime's thread-local (extern_weak, initial-exec: the runtime is loaded
// with the program, so its TLS block is static and any image reaches it at a
// fixed offset from the thread pointer); the countdown's load and store are
// relaxed atomics only so that a writer in another thread reading them is no
// data race (plain moves on x86-64).
Function *ModuleInstrumenter::getOrCreatePathCounter() {
  if (Function *Existing = M.getFunction("causal.path.count"))
    return Existing;
  FunctionCallee Enter =
      getOrInsertWeakRuntimeFunction(CAUSAL_PATH_ENTER_FN, {PtrTy, PtrTy}, Int32Ty);
  if (auto *Declared = dyn_cast<Function>(Enter.getCallee()))
    Declared->setDoesNotThrow();
  GlobalVariable *Countdowns = M.getNamedGlobal(CAUSAL_PATH_COUNTDOWNS_SYMBOL);
  if (!Countdowns) {
    Countdowns = new GlobalVariable(
        M, PtrTy, /*isConstant=*/false, GlobalValue::ExternalWeakLinkage, nullptr,
        CAUSAL_PATH_COUNTDOWNS_SYMBOL, nullptr, GlobalValue::InitialExecTLSModel);
    Countdowns->setAlignment(Align(8));
  }
  // linkonce_odr hidden: one per image, and not local, so that no
  // interprocedural pass specializes it for its callers' arguments (the
  // inlined_at strings are set after the optimizer).
  auto *Counter = Function::Create(FunctionType::get(Int32Ty, {PtrTy, PtrTy}, false),
                                   GlobalValue::LinkOnceODRLinkage, "causal.path.count", M);
  Counter->setVisibility(GlobalValue::HiddenVisibility);
  Counter->setComdat(M.getOrInsertComdat(Counter->getName()));
  Counter->addFnAttr(Attribute::NoInline);
  Counter->addFnAttr(Attribute::Cold);
  Counter->setDoesNotThrow();
  Counter->addFnAttr("frame-pointer", "all");
  Argument *Fn = Counter->getArg(0), *InlinedAt = Counter->getArg(1);
  Fn->setName("fn");
  InlinedAt->setName("inlined_at");
  BasicBlock *Entry = BasicBlock::Create(Ctx, "entry", Counter);
  BasicBlock *CountdownsBlock = BasicBlock::Create(Ctx, "countdowns", Counter);
  BasicBlock *Down = BasicBlock::Create(Ctx, "countdown", Counter);
  BasicBlock *Skip = BasicBlock::Create(Ctx, "skip", Counter);
  BasicBlock *EnterBlock = BasicBlock::Create(Ctx, "enter", Counter);

  // Only a runtime that defines the countdowns stores CAUSAL_PATH_FN_COUNTED
  // (an undefined weak thread-local does not read as null): other values
  // call at once.
  IRBuilder<> IRB(Entry);
  LoadInst *Enabled = IRB.CreateAlignedLoad(Int8Ty, Fn, Align(8), "enabled");
  Enabled->setAtomic(AtomicOrdering::Monotonic);
  IRB.CreateCondBr(
      IRB.CreateICmpEQ(Enabled, ConstantInt::get(Int8Ty, CAUSAL_PATH_FN_COUNTED), "counted"),
      CountdownsBlock, EnterBlock);

  // The thread's countdowns (null: call, the runtime has not given the
  // thread its countdowns yet).
  IRB.SetInsertPoint(CountdownsBlock);
  Value *Array = IRB.CreateAlignedLoad(PtrTy, IRB.CreateThreadLocalAddress(Countdowns), Align(8),
                                       "countdowns");
  IRB.CreateCondBr(IRB.CreateIsNull(Array, "uncounted"), EnterBlock, Down);

  // This function's countdown: one entry less; below zero, the runtime's turn.
  IRB.SetInsertPoint(Down);
  LoadInst *Id =
      IRB.CreateAlignedLoad(Int32Ty, IRB.CreateConstInBoundsGEP1_64(Int8Ty, Fn, 4), Align(4), "id");
  Id->setAtomic(AtomicOrdering::Monotonic);
  Value *Slot = IRB.CreateInBoundsGEP(Int32Ty, Array, IRB.CreateZExt(Id, Int64Ty), "slot");
  LoadInst *Count = IRB.CreateAlignedLoad(Int32Ty, Slot, Align(4), "count");
  Count->setAtomic(AtomicOrdering::Monotonic);
  Value *Left = IRB.CreateAdd(Count, ConstantInt::getSigned(Int32Ty, -1), "left");
  IRB.CreateAlignedStore(Left, Slot, Align(4))->setAtomic(AtomicOrdering::Monotonic);
  IRB.CreateCondBr(IRB.CreateICmpSLT(Left, ConstantInt::get(Int32Ty, 0), "due"), EnterBlock, Skip,
                   MDBuilder(Ctx).createBranchWeights(1, 15));

  IRB.SetInsertPoint(Skip);
  IRB.CreateRet(ConstantInt::get(Int32Ty, 0));

  IRB.SetInsertPoint(EnterBlock);
  CallInst *Call = IRB.CreateCall(Enter, {Fn, InlinedAt}, "token");
  Call->setTailCallKind(CallInst::TCK_MustTail);
  Call->setDoesNotThrow();
  IRB.CreateRet(Call);
  return Counter;
}

// abi.h, "What the pass emits in a chosen function":
//
//   entry:               (after the entry block's allocas)
//     %causal.path.enabled = load atomic i8, ptr @desc monotonic, align 8
//     br (icmp ne %enabled, 0), %causal.path.enter, %rest      ; unlikely
//   causal.path.enter:
//     %t = call i32 @causal.path.count(ptr @desc, ptr null)    ; nounwind
//   rest:
//     %causal.path.token = phi i32 [ 0, %entry ], [ %t, %causal.path.enter ]
//   before each ret / resume (and musttail call), and in a cleanup landing
//   pad that EscapeEnumerator adds for the calls that may throw:
//     br (icmp ne %causal.path.token, 0), %causal.path.exit, %next ; unlikely
//   causal.path.exit:
//     call void @__causal_path_exit(ptr @desc, i32 %causal.path.token)
//
// The inserted code has a location on the function's line (when it has a
// DISubprogram), so an inlined copy of the entry call says where it was
// inlined (nameInlinedPathEntries). The load is atomic so that no pass
// hoists or merges it: the runtime flips the byte while the program runs.
// The countdown (abi.h) is in causal.path.count, out of line, so that the
// chosen function is as small as before for the inliner.
void ModuleInstrumenter::instrumentPathFunction(Function &F) {
  GlobalVariable *Descriptor = getOrCreatePathDescriptor(F);
  Function *Enter = getOrCreatePathCounter();
  FunctionCallee Exit = getOrInsertWeakRuntimeFunction(CAUSAL_PATH_EXIT_FN, {PtrTy, Int32Ty});
  if (auto *Declared = dyn_cast<Function>(Exit.getCallee()))
    Declared->setDoesNotThrow();
  MDNode *Unlikely = MDBuilder(Ctx).createBranchWeights(1, 1 << 20);
  DebugLoc FunctionLoc;
  if (DISubprogram *SP = F.getSubprogram())
    FunctionLoc = DILocation::get(Ctx, SP->getLine(), 0, SP);
  Constant *Zero = ConstantInt::get(Int32Ty, 0);

  BasicBlock &Entry = F.getEntryBlock();
  Instruction *Start = &*Entry.getFirstNonPHIOrDbgOrAlloca();
  IRBuilder<> IRB(Start);
  IRB.SetCurrentDebugLocation(FunctionLoc);
  LoadInst *Enabled = IRB.CreateAlignedLoad(Int8Ty, Descriptor, Align(8), "causal.path.enabled");
  Enabled->setAtomic(AtomicOrdering::Monotonic);
  Value *IsEnabled = IRB.CreateICmpNE(Enabled, ConstantInt::get(Int8Ty, 0), "causal.path.on");
  Instruction *EnterAt =
      SplitBlockAndInsertIfThen(IsEnabled, Start->getIterator(), /*Unreachable=*/false, Unlikely);
  BasicBlock *EnterBlock = EnterAt->getParent();
  EnterBlock->setName("causal.path.enter");
  // The branches take the location of the code they were split from.
  Entry.getTerminator()->setDebugLoc(FunctionLoc);
  EnterAt->setDebugLoc(FunctionLoc);
  IRBuilder<> EnterIRB(EnterAt);
  EnterIRB.SetCurrentDebugLocation(FunctionLoc);
  CallInst *Entered = EnterIRB.CreateCall(Enter, {Descriptor, ConstantPointerNull::get(PtrTy)},
                                          "causal.path.entered");
  Entered->setDoesNotThrow();
  BasicBlock *Rest = Start->getParent();
  Rest->setName("causal.path.body");
  IRBuilder<> PhiIRB(Rest, Rest->begin());
  PhiIRB.SetCurrentDebugLocation(FunctionLoc);
  PHINode *Token = PhiIRB.CreatePHI(Int32Ty, 2, "causal.path.token");
  Token->addIncoming(Zero, &Entry);
  Token->addIncoming(Entered, EnterBlock);

  // Every way out first, then the code at each: EscapeEnumerator walks the
  // blocks, which the splits below would add to.
  SmallVector<Instruction *, 8> Exits;
  // The cleanup landing pad of a C++ function without one uses the C++
  // personality of the module, rather than EscapeEnumerator's default (C's).
  if (!F.hasPersonalityFn())
    if (Function *CxxPersonality = M.getFunction("__gxx_personality_v0"))
      F.setPersonalityFn(CxxPersonality);
  EscapeEnumerator Escapes(F, "causal.path.cleanup", /*HandleExceptions=*/true);
  while (IRBuilder<> *At = Escapes.Next())
    Exits.push_back(&*At->GetInsertPoint());
  for (Instruction *At : Exits) {
    DebugLoc Loc = At->getDebugLoc() ? At->getDebugLoc() : FunctionLoc;
    IRBuilder<> ExitIRB(At);
    ExitIRB.SetCurrentDebugLocation(Loc);
    Value *HasToken = ExitIRB.CreateICmpNE(Token, Zero, "causal.path.recorded");
    Instruction *ExitAt =
        SplitBlockAndInsertIfThen(HasToken, At->getIterator(), /*Unreachable=*/false, Unlikely);
    ExitAt->getParent()->setName("causal.path.exit");
    At->getParent()->setName("causal.path.out");
    IRBuilder<> CallIRB(ExitAt);
    CallIRB.SetCurrentDebugLocation(Loc);
    CallIRB.CreateCall(Exit, {Descriptor, Token})->setDoesNotThrow();
  }
}

// An entry call inlined into other functions gets, instead of its null
// inlined_at, the frames the inlining removed, innermost first:
// "FUNCTION\tFILE:LINE\n" each, FUNCTION the demangled name of the function
// that inlined the call, FILE:LINE where it did (abi.h), FILE as the DWARF
// line table's absolute path with "." and ".." removed. Equal strings are
// one constant.
bool ModuleInstrumenter::nameInlinedPathEntries() {
  Function *Enter = M.getFunction("causal.path.count");
  if (!Enter)
    return false;
  StringMap<GlobalVariable *> Strings;
  bool Changed = false;
  for (User *U : Enter->users()) {
    auto *Call = dyn_cast<CallBase>(U);
    if (!Call || Call->getCalledOperand() != Enter || Call->arg_size() != 2 ||
        !isa<ConstantPointerNull>(Call->getArgOperand(1)))
      continue;
    const DILocation *Loc = Call->getDebugLoc().get();
    if (!Loc || !Loc->getInlinedAt())
      continue;
    std::string Frames;
    for (const DILocation *At = Loc->getInlinedAt(); At; At = At->getInlinedAt()) {
      // Its linkage name demangled. Line-tables-only DWARF has none: then
      // the symbol of the function the call is in, if this is its
      // subprogram (the name causal-ld's line table gives that code), else
      // the DWARF name.
      std::string Function;
      if (const DISubprogram *SP = At->getScope()->getSubprogram()) {
        if (!SP->getLinkageName().empty())
          Function = demangle(SP->getLinkageName().str());
        else if (SP == Call->getFunction()->getSubprogram())
          Function = demangle(Call->getFunction()->getName().str());
        else
          Function = SP->getName().str();
      }
      std::string File = At->getFile() ? pathOf(At->getFile()) : std::string();
      Frames += withoutControlCharacters(Function) + "\t" + withoutControlCharacters(File) + ":" +
                std::to_string(At->getLine()) + "\n";
    }
    GlobalVariable *&String = Strings[Frames];
    if (!String) {
      Constant *Data = ConstantDataArray::getString(Ctx, Frames, /*AddNull=*/true);
      String = new GlobalVariable(M, Data->getType(), /*isConstant=*/true,
                                  GlobalValue::PrivateLinkage, Data, "causal.inlined_at");
      String->setUnnamedAddr(GlobalValue::UnnamedAddr::Global);
      String->setAlignment(Align(1));
    }
    Call->setArgOperand(1, String);
    Changed = true;
  }
  return Changed;
}

// ---- Sync hooks ----------------------------------------------------------------

// call X(args) -> call (&HOOK != null ? HOOK : X)(args), for direct calls and
// invokes of a declared X, outside the runtime's own __causal* functions.
/// A function built with a sanitizer that intercepts pthread & co. (ASan,
/// TSan, MSan, HWASan): its calls must reach the sanitizer's interceptor,
/// which then reaches the runtime's interposer (the sanitizer resolves the
/// next definition). A call redirected to the hook would reach the C library
/// past the interceptor: ASan would not know the threads it creates
/// (pthread_join/detach then fail its CHECKs), TSan would miss the locks.
static bool underInterceptingSanitizer(const Function &F) {
  return F.hasFnAttribute(Attribute::SanitizeAddress) ||
         F.hasFnAttribute(Attribute::SanitizeThread) ||
         F.hasFnAttribute(Attribute::SanitizeMemory) ||
         F.hasFnAttribute(Attribute::SanitizeHWAddress);
}

bool ModuleInstrumenter::rewriteSyncCalls() {
  bool Changed = false;
  for (const char *Name : SyncFunctionNames) {
    Function *Sync = M.getFunction(Name);
    if (!Sync || !Sync->isDeclaration())
      continue;
    SmallVector<CallBase *, 8> Calls;
    for (User *U : Sync->users()) {
      auto *Call = dyn_cast<CallBase>(U);
      if (Call && isa<CallInst, InvokeInst>(Call) && Call->getCalledOperand() == Sync &&
          !Call->getFunction()->getName().starts_with("__causal") &&
          !underInterceptingSanitizer(*Call->getFunction()))
        Calls.push_back(Call);
    }
    if (Calls.empty())
      continue;
    std::string HookName = std::string(CAUSAL_HOOK_PREFIX) + Name;
    Function *Hook = M.getFunction(HookName);
    if (!Hook) {
      Hook = Function::Create(Sync->getFunctionType(), GlobalValue::ExternalWeakLinkage,
                              Sync->getAddressSpace(), HookName, &M);
      Hook->copyAttributesFrom(Sync);
      Hook->setLinkage(GlobalValue::ExternalWeakLinkage);
      Hook->setDLLStorageClass(GlobalValue::DefaultStorageClass);
    }
    for (CallBase *Call : Calls) {
      IRBuilder<> IRB(Call);
      Value *Present =
          IRB.CreateICmpNE(Hook, ConstantPointerNull::get(Hook->getType()), "causal.hook.present");
      Value *Target = IRB.CreateSelect(Present, Hook, Sync, "causal.hook.target");
      Call->setCalledOperand(Target);
    }
    Changed = true;
  }
  return Changed;
}

// ---- Registration ----------------------------------------------------------------

bool ModuleInstrumenter::emitModuleRegistration() {
  // Idempotent: the constructor exists once the pass has run on this module.
  if (M.getNamedValue(CAUSAL_MODULE_CTOR_NAME))
    return false;

  GlobalVariable *Start = getOrInsertSectionBound(CAUSAL_LINETAB_START_SYMBOL);
  GlobalVariable *Stop = getOrInsertSectionBound(CAUSAL_LINETAB_STOP_SYMBOL);
  GlobalVariable *CountersStart = getOrInsertSectionBound(CAUSAL_COUNTER_START_SYMBOL);
  GlobalVariable *CountersStop = getOrInsertSectionBound(CAUSAL_COUNTER_STOP_SYMBOL);
  GlobalVariable *PathFnsStart = getOrInsertSectionBound(CAUSAL_PATH_FN_START_SYMBOL);
  GlobalVariable *PathFnsStop = getOrInsertSectionBound(CAUSAL_PATH_FN_STOP_SYMBOL);

  Function *Ctor = createModuleInitFunction(CAUSAL_MODULE_CTOR_NAME);
  BasicBlock *Next = BasicBlock::Create(Ctx, "entry", Ctor);
  Next = appendCallIfDefined(
      Next, getOrInsertWeakRuntimeFunction(CAUSAL_REGISTER_MODULE_FN, {PtrTy, PtrTy}),
      {Start, Stop});
  Next = appendCallIfDefined(
      Next, getOrInsertWeakRuntimeFunction(CAUSAL_REGISTER_COUNTERS_FN, {PtrTy, PtrTy}),
      {CountersStart, CountersStop});
  Next = appendCallIfDefined(
      Next, getOrInsertWeakRuntimeFunction(CAUSAL_REGISTER_PATH_FNS_FN, {PtrTy, PtrTy}),
      {PathFnsStart, PathFnsStop});
  ReturnInst::Create(Ctx, Next);
  appendToGlobalCtors(M, Ctor, CAUSAL_MODULE_CTOR_PRIORITY, /*Data=*/Ctor);

  Function *Dtor = createModuleInitFunction(CAUSAL_MODULE_DTOR_NAME);
  Next = BasicBlock::Create(Ctx, "entry", Dtor);
  Next = appendCallIfDefined(
      Next, getOrInsertWeakRuntimeFunction(CAUSAL_UNREGISTER_MODULE_FN, {PtrTy}), {Start});
  ReturnInst::Create(Ctx, Next);
  appendToGlobalDtors(M, Dtor, CAUSAL_MODULE_CTOR_PRIORITY, /*Data=*/Dtor);
  return true;
}

// A hidden extern_weak reference to a linker-defined section bound. Hidden:
// each image registers its own section, never another image's. Weak: an image
// linked without the section resolves it to null.
GlobalVariable *ModuleInstrumenter::getOrInsertSectionBound(StringRef SymbolName) {
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
                                                                  ArrayRef<Type *> Params,
                                                                  Type *Result) {
  FunctionCallee Callee =
      M.getOrInsertFunction(Name, FunctionType::get(Result ? Result : VoidTy, Params, false));
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

// Appends to the unterminated block At:
//   if (&Callee != null) Callee(Args...);
// and returns the (unterminated) block that follows.
BasicBlock *ModuleInstrumenter::appendCallIfDefined(BasicBlock *At, FunctionCallee Callee,
                                                    ArrayRef<Value *> Args) {
  Function *Caller = At->getParent();
  BasicBlock *Call = BasicBlock::Create(Ctx, "call", Caller);
  BasicBlock *Next = BasicBlock::Create(Ctx, "next", Caller);

  IRBuilder<> IRB(At);
  Value *IsDefined = IRB.CreateICmpNE(
      Callee.getCallee(), Constant::getNullValue(Callee.getCallee()->getType()), "runtime.present");
  IRB.CreateCondBr(IsDefined, Call, Next);

  IRB.SetInsertPoint(Call);
  IRB.CreateCall(Callee, Args);
  IRB.CreateBr(Next);
  return Next;
}

CausalInstrumentPass::CausalInstrumentPass(CausalInstrumentOptions Options,
                                           CausalInstrumentPhase Phase)
    : Options(overrideFromCommandLine(std::move(Options), OptionErrors)), Phase(Phase) {}

PreservedAnalyses CausalInstrumentPass::run(Module &M, ModuleAnalysisManager &) {
  if (Phase == CausalInstrumentPhase::Full) // once per compilation
    for (const std::string &Error : OptionErrors)
      M.getContext().diagnose(CausalError(Error));
  if (!ModuleInstrumenter(M, Options).instrument(Phase))
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

void causal::registerCausalInstrumentPasses(PassBuilder &PB, CausalInstrumentOptions Options) {
  PB.registerPipelineStartEPCallback([Options](ModulePassManager &MPM, OptimizationLevel) {
    MPM.addPass(CausalProgressPointPass(Options));
  });
  // LLVM 20 added the (Thin)LTO phase to the callback. The pass runs in every
  // phase: it is idempotent, so a post-link run after the pre-link one adds
  // nothing.
#if LLVM_VERSION_MAJOR >= 20
  PB.registerOptimizerLastEPCallback(
      [Options](ModulePassManager &MPM, OptimizationLevel, ThinOrFullLTOPhase) {
        MPM.addPass(CausalInstrumentPass(Options, CausalInstrumentPhase::Full));
      });
#else
  PB.registerOptimizerLastEPCallback([Options](ModulePassManager &MPM, OptimizationLevel) {
    MPM.addPass(CausalInstrumentPass(Options, CausalInstrumentPhase::Full));
  });
#endif
}
