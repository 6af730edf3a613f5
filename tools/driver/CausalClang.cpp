//===- CausalClang.cpp - causal-clang and causal-clang++ ------------------===//
//
// A thin front for the real clang (CMake cache var CAUSAL_CLANG, or env
// CAUSAL_CLANG). argv[0] ending in "++" selects the C++ driver.
//
// Without -fcausal-profile the real clang runs with the arguments exactly as
// given. With it (the last of -fcausal-profile / -fno-causal-profile wins):
//
//   compiling C-family sources  adds -fplugin=<prefix>/lib/causal/CausalPlugin.so
//                                    -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer
//   linking                     adds --ld-path=<prefix>/libexec/causal/ld, or
//                                    .../ld.lld when the user asked for lld
//                                    (clang picks lld-style LTO options only when
//                                    the linker's file name is ld.lld)
//
// and, when compiling, the progress points and options named on the command
// line as plugin arguments (docs/progress-points.md):
//
//   -fcausal-progress=FILE:LINE[=NAME]  -> -fplugin-arg-causal-progress=...
//   -fcausal-progress-fn=FUNC           -> -fplugin-arg-causal-progress-fn=...
//   -fcausal-latency=NAME:BEGIN:END     -> -fplugin-arg-causal-latency=...
//   -fno-causal-sync-hooks              -> -fplugin-arg-causal-no-sync-hooks
//   -fcausal-paths=NAME,...             -> -fplugin-arg-causal-paths=...
//   -fcausal-paths-file=FILE            -> -fplugin-arg-causal-paths-file=FILE
//
// Malformed specs and unreadable -fcausal-paths-file files are an error
// here, with or without -fcausal-profile (the rules are those of
// pass/ProgressSpec.h and pass/PathSpec.h, shared with the plugin).
//
// Each group is added only when that step runs, so clang never warns about an
// unused argument. Our own -fcausal-* flags are removed; any other -fcausal-*
// flag is an error. <prefix> is found from this executable's location
// (tools/common/InstallLayout.h).
//
//===----------------------------------------------------------------------===//

#include "InstallLayout.h"
#include "PathSpec.h"
#include "ProgressSpec.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#ifndef CAUSAL_CLANG_PATH
#error "CAUSAL_CLANG_PATH (the clang to wrap) must be defined by the build"
#endif

namespace {

std::string ProgramName = "causal-clang";

[[noreturn]] void fail(const std::string &Message) {
  std::fprintf(stderr, "%s: error: %s\n", ProgramName.c_str(), Message.c_str());
  std::exit(1);
}

bool startsWith(const std::string &S, const char *Prefix) {
  return S.compare(0, std::strlen(Prefix), Prefix) == 0;
}

bool endsWith(const std::string &S, const char *Suffix) {
  size_t N = std::strlen(Suffix);
  return S.size() >= N && S.compare(S.size() - N, N, Suffix) == 0;
}

std::string baseName(const std::string &Path) {
  size_t Slash = Path.find_last_of('/');
  return Slash == std::string::npos ? Path : Path.substr(Slash + 1);
}

using causal::isExecutableFile;

// ---- Our flags ----------------------------------------------------------

struct CausalSettings {
  bool Profile = false;
  bool SyncHooks = true;
  /// Plugin arguments with a value, "progress=...", "paths=...", in
  /// command-line order.
  std::vector<std::string> PluginArguments;
};

/// Checks a progress point spec (fails with the spec's error) and keeps it
/// for the plugin as "<Option>=<Value>".
void addProgressArgument(CausalSettings &Settings, const char *Option, const std::string &Value) {
  std::vector<causal::ProgressPointSpec> Parsed;
  std::string Error;
  std::string Argument = std::string(Option) + "=" + Value;
  if (!causal::parseProgressOption(Argument, Parsed, Error))
    fail("-fcausal-" + Argument + ": " + Error);
  Settings.PluginArguments.push_back(Argument);
}

/// -fcausal-paths=NAME,...: checks the list (fails with its error) and keeps
/// it for the plugin as "paths=<Value>".
void addPathsArgument(CausalSettings &Settings, const std::string &Value) {
  std::vector<std::string> Names;
  std::string Error;
  if (!causal::splitPathPatterns(Value, Names, Error))
    fail("-fcausal-paths=" + Value + ": " + Error);
  Settings.PluginArguments.push_back("paths=" + Value);
}

/// -fcausal-paths-file=FILE: fails now if the file cannot be read (the
/// plugin reads it again, in the same working directory).
void addPathsFileArgument(CausalSettings &Settings, const std::string &Value) {
  std::vector<std::string> Names;
  std::string Error;
  if (Value.empty() || !causal::readPathPatternsFile(Value, Names, Error))
    fail("-fcausal-paths-file=" + Value + ": " +
         (Value.empty() ? std::string("expected a file name") : Error));
  Settings.PluginArguments.push_back("paths-file=" + Value);
}

/// One flag of ours. A spelling ending in '=' takes a joined value. New
/// -fcausal-* flags go in this table.
struct CausalFlag {
  const char *Spelling;
  void (*Apply)(CausalSettings &Settings, const std::string &Value);
};

const CausalFlag KnownCausalFlags[] = {
    {"-fcausal-profile", [](CausalSettings &S, const std::string &) { S.Profile = true; }},
    {"-fno-causal-profile", [](CausalSettings &S, const std::string &) { S.Profile = false; }},
    {"-fcausal-progress=",
     [](CausalSettings &S, const std::string &V) { addProgressArgument(S, "progress", V); }},
    {"-fcausal-progress-fn=",
     [](CausalSettings &S, const std::string &V) { addProgressArgument(S, "progress-fn", V); }},
    {"-fcausal-latency=",
     [](CausalSettings &S, const std::string &V) { addProgressArgument(S, "latency", V); }},
    {"-fcausal-paths=", [](CausalSettings &S, const std::string &V) { addPathsArgument(S, V); }},
    {"-fcausal-paths-file=",
     [](CausalSettings &S, const std::string &V) { addPathsFileArgument(S, V); }},
    {"-fcausal-sync-hooks", [](CausalSettings &S, const std::string &) { S.SyncHooks = true; }},
    {"-fno-causal-sync-hooks", [](CausalSettings &S, const std::string &) { S.SyncHooks = false; }},
};

bool isCausalFlag(const std::string &Arg) {
  return startsWith(Arg, "-fcausal-") || startsWith(Arg, "-fno-causal-");
}

/// Applies Arg (one of ours) to Settings; an unknown -fcausal-* is an error.
void applyCausalFlag(const std::string &Arg, CausalSettings &Settings) {
  for (const CausalFlag &Flag : KnownCausalFlags) {
    std::string Spelling = Flag.Spelling;
    if (endsWith(Spelling, "=") ? startsWith(Arg, Flag.Spelling) : Arg == Spelling) {
      Flag.Apply(Settings, Arg.substr(Spelling.size())); // the value after '=', if any
      return;
    }
  }
  fail("unknown argument '" + Arg + "'");
}

// ---- What the clang invocation does ---------------------------------------

/// Splits a response file the way clang does on Linux (GNU rules: blanks
/// separate, quotes group, backslash escapes).
std::vector<std::string> tokenizeResponseFile(const std::string &Text) {
  std::vector<std::string> Tokens;
  std::string Token;
  bool InToken = false;
  char Quote = 0;
  for (size_t I = 0; I < Text.size(); ++I) {
    char C = Text[I];
    if (Quote) {
      if (C == Quote)
        Quote = 0;
      else if (C == '\\' && Quote == '"' && I + 1 < Text.size())
        Token += Text[++I];
      else
        Token += C;
    } else if (C == '\'' || C == '"') {
      Quote = C;
      InToken = true;
    } else if (C == '\\' && I + 1 < Text.size()) {
      Token += Text[++I];
      InToken = true;
    } else if (C == ' ' || C == '\t' || C == '\n' || C == '\r') {
      if (InToken)
        Tokens.push_back(Token);
      Token.clear();
      InToken = false;
    } else {
      Token += C;
      InToken = true;
    }
  }
  if (InToken)
    Tokens.push_back(Token);
  return Tokens;
}

/// Appends Arg to Out, replacing @file by the file's arguments (recursively),
/// as clang will. An unreadable @file stays as it is, as in clang.
void expandResponseFiles(const std::string &Arg, std::vector<std::string> &Out, int Depth) {
  if (Arg.size() > 1 && Arg[0] == '@' && Depth < 16) {
    std::ifstream File(Arg.substr(1));
    if (File) {
      std::stringstream Text;
      Text << File.rdbuf();
      for (const std::string &Inner : tokenizeResponseFile(Text.str())) {
        if (isCausalFlag(Inner))
          fail("'" + Inner + "' in response file '" + Arg +
               "' is not supported: pass it on the command line");
        expandResponseFiles(Inner, Out, Depth + 1);
      }
      return;
    }
  }
  Out.push_back(Arg);
}

/// True if Word is one of the blank-separated words of List.
bool isOneOf(const std::string &Word, const char *List) {
  std::string Padded = std::string(" ") + List + " ";
  return !Word.empty() && Word.find(' ') == std::string::npos &&
         Padded.find(" " + Word + " ") != std::string::npos;
}

/// Driver options whose value is the next argument when written alone
/// (e.g. "-o file"). Their values must not be taken for input files.
bool takesSeparateValue(const std::string &Arg) {
  return isOneOf(Arg, "-o -x -I -L -D -U -F -B -T -u -e -z -l -G -rpath -arch -target -mllvm "
                      "-include -imacros -include-pch -isystem -isystem-after -iquote -idirafter "
                      "-iprefix -iwithprefix -iwithprefixbefore -isysroot -iframework -imultilib "
                      "-ivfsoverlay -MF -MT -MQ -MJ -Xlinker -Xclang -Xassembler -Xpreprocessor "
                      "-Xanalyzer -Xopenmp-target -Xoffload-linker -Xcuda-fatbinary -Xcuda-ptxas "
                      "-framework -dependency-file -dependency-dot -serialize-diagnostics "
                      "-working-directory -aux-target -ccc-install-dir -ccc-gcc-name "
                      "-gcc-toolchain -fmodules-user-build-path --sysroot --param --target "
                      "--include-directory --library-directory --output --language "
                      "--define-macro --undefine-macro --include --config --gcc-toolchain "
                      "--prefix");
}

/// Options that stop clang before the link step.
bool stopsBeforeLink(const std::string &Arg) {
  return Arg == "-c" || Arg == "-S" || Arg == "-E" || Arg == "-M" || Arg == "-MM" ||
         Arg == "-fsyntax-only" || Arg == "-emit-ast" || Arg == "--precompile";
}

bool onlyPreprocesses(const std::string &Arg) { return Arg == "-E" || Arg == "-M" || Arg == "-MM"; }

/// Languages (-x values) the front-end plugin applies to.
bool isCFamilyLanguage(const std::string &Language) {
  return isOneOf(Language, "c c++ objective-c objective-c++ c-header c++-header "
                           "objective-c-header objective-c++-header cpp-output c++-cpp-output "
                           "objective-c-cpp-output objc-cpp-output objective-c++-cpp-output "
                           "c++-module c++-system-header c++-user-header");
}

/// File-name suffixes clang compiles as C, C++ or Objective-C.
bool hasCFamilySourceSuffix(const std::string &Path) {
  std::string Name = baseName(Path);
  size_t Dot = Name.find_last_of('.');
  if (Dot == std::string::npos || Dot == 0)
    return false;
  return isOneOf(Name.substr(Dot), ".c .i .cc .cp .cxx .cpp .CPP .c++ .C .ii .m .mi .mm .M .mii "
                                   ".h .hh .hpp .hxx .H .cppm .ccm .cxxm .c++m");
}

/// A header compiles to a precompiled header, never to something linked.
bool isHeader(const std::string &Path, const std::string &Language) {
  if (!Language.empty())
    return Language.find("header") != std::string::npos;
  size_t Dot = Path.find_last_of('.');
  return Dot != std::string::npos && isOneOf(Path.substr(Dot), ".h .hh .hpp .hxx .H");
}

struct InvocationSummary {
  bool StopsBeforeLink = false;
  bool OnlyPreprocesses = false;
  bool HasLinkInputs = false; // inputs other than headers, -l libraries
  bool CompilesCFamilySource = false;
  std::string UseLd;  // last -fuse-ld= value
  std::string LdPath; // last --ld-path= value

  bool compiles() const { return CompilesCFamilySource && !OnlyPreprocesses; }
  bool links() const { return HasLinkInputs && !StopsBeforeLink; }
};

InvocationSummary summarize(const std::vector<std::string> &Args) {
  InvocationSummary Summary;
  std::string Language; // current -x, empty for "by suffix"
  auto addInput = [&](const std::string &Input) {
    if (!isHeader(Input, Language))
      Summary.HasLinkInputs = true;
    if (Language.empty() ? hasCFamilySourceSuffix(Input) : isCFamilyLanguage(Language))
      Summary.CompilesCFamilySource = true;
  };
  for (size_t I = 0; I < Args.size(); ++I) {
    const std::string &Arg = Args[I];
    if (Arg == "--") { // the rest are inputs
      for (++I; I < Args.size(); ++I)
        addInput(Args[I]);
      break;
    }
    if (Arg.empty() || Arg[0] != '-' || Arg == "-") {
      addInput(Arg);
      continue;
    }
    if (stopsBeforeLink(Arg))
      Summary.StopsBeforeLink = true;
    if (onlyPreprocesses(Arg))
      Summary.OnlyPreprocesses = true;
    if (startsWith(Arg, "-fuse-ld="))
      Summary.UseLd = Arg.substr(9);
    else if (startsWith(Arg, "--ld-path="))
      Summary.LdPath = Arg.substr(10);
    else if (startsWith(Arg, "-l"))
      Summary.HasLinkInputs = true; // -lfoo or -l foo
    if (Arg == "-x" && I + 1 < Args.size())
      Language = Args[I + 1];
    else if (startsWith(Arg, "-x") && Arg.size() > 2)
      Language = Arg.substr(2);
    if (Language == "none")
      Language.clear();
    if (takesSeparateValue(Arg))
      ++I;
  }
  return Summary;
}

/// A program name without '/' is looked up in PATH, as a shell would.
std::string findProgram(const std::string &Name) {
  std::string Found = causal::findInPath(Name, "");
  return Found.empty() ? Name : Found;
}

// ---- Putting it together ----------------------------------------------------

/// The clang driver for C++ next to the C one: .../clang -> .../clang++,
/// .../clang-19 -> .../clang++-19. Empty if there is none.
std::string cxxDriverNextTo(const std::string &CDriver) {
  size_t NameStart = CDriver.find_last_of('/');
  NameStart = NameStart == std::string::npos ? 0 : NameStart + 1;
  size_t Clang = CDriver.rfind("clang");
  if (Clang == std::string::npos || Clang < NameStart)
    return {};
  std::string Candidate = CDriver.substr(0, Clang + 5) + "++" + CDriver.substr(Clang + 5);
  return isExecutableFile(Candidate) ? Candidate : std::string();
}

bool wantsLld(const InvocationSummary &Summary) {
  if (!Summary.LdPath.empty())
    return baseName(Summary.LdPath) == "ld.lld";
  return Summary.UseLd == "lld" || baseName(Summary.UseLd) == "ld.lld";
}

/// The linker the user asked for, for the link step to run: a path
/// (--ld-path=/path, -fuse-ld=/path), or ld.<name> for -fuse-ld=bfd|gold|mold
/// (which clang itself would run). Empty for the default linker and for lld,
/// which the link step finds itself.
std::string userLinker(const InvocationSummary &Summary) {
  const std::string &Named = Summary.LdPath.empty() ? Summary.UseLd : Summary.LdPath;
  if (Named.find('/') != std::string::npos)
    return Named;
  if (Summary.LdPath.empty() && (Named == "bfd" || Named == "gold" || Named == "mold"))
    return "ld." + Named;
  return {};
}

/// Fails if the arguments ask for a sanitizer the profiler cannot run with
/// (docs/usage.md, "Sanitizers"). The sanitizers in effect are those the
/// -fsanitize= lists add and no later -fno-sanitize= list removes.
void refuseUnsupportedSanitizers(const std::vector<std::string> &Args) {
  bool Thread = false;
  for (const std::string &Arg : Args) {
    bool Add = startsWith(Arg, "-fsanitize=");
    if (!Add && !startsWith(Arg, "-fno-sanitize="))
      continue;
    std::string List = Arg.substr(Arg.find('=') + 1);
    for (size_t Begin = 0; Begin <= List.size();) {
      size_t End = List.find(',', Begin);
      if (End == std::string::npos)
        End = List.size();
      std::string Name = List.substr(Begin, End - Begin);
      if (Name == "thread" || (!Add && Name == "all"))
        Thread = Add;
      Begin = End + 1;
    }
  }
  if (Thread)
    fail("-fsanitize=thread cannot be used with -fcausal-profile: ThreadSanitizer delays the "
         "profiler's sample signals to its own safe points and must set up each thread before "
         "the profiler's thread start runs (see docs/usage.md, \"Sanitizers\"); profile a build "
         "with -fsanitize=address or -fsanitize=undefined, or without a sanitizer");
}

} // namespace

int main(int argc, char **argv) {
  std::string Argv0 = argc > 0 ? argv[0] : "causal-clang";
  ProgramName = baseName(Argv0);
  const bool IsCxx = endsWith(ProgramName, "++");

  // Our flags out, everything else in order and untouched.
  CausalSettings Settings;
  std::vector<std::string> ClangArgs;
  for (int I = 1; I < argc; ++I) {
    std::string Arg = argv[I];
    if (isCausalFlag(Arg))
      applyCausalFlag(Arg, Settings);
    else
      ClangArgs.push_back(Arg);
  }

  const char *ClangFromEnv = std::getenv("CAUSAL_CLANG");
  std::string CDriver =
      findProgram(ClangFromEnv && *ClangFromEnv ? ClangFromEnv : CAUSAL_CLANG_PATH);
  std::string Executable = CDriver;
  std::vector<std::string> Prepended;
  if (IsCxx) {
    std::string CxxDriver = cxxDriverNextTo(CDriver);
    if (!CxxDriver.empty())
      Executable = CxxDriver;
    else
      Prepended.push_back("--driver-mode=g++");
  }

  std::vector<std::string> Added;
  if (Settings.Profile) {
    std::vector<std::string> Expanded;
    for (const std::string &Arg : ClangArgs)
      expandResponseFiles(Arg, Expanded, 0);
    InvocationSummary Summary = summarize(Expanded);
    refuseUnsupportedSanitizers(Expanded);
    if (Summary.compiles() || Summary.links()) {
      std::string Prefix = causal::layout::prefixOfThisExecutable();
      if (Prefix.empty())
        fail("cannot find the causal installation: /proc/self/exe is unreadable");
      if (Summary.compiles()) {
        Added.push_back("-fplugin=" + Prefix + "/" + causal::layout::PluginPath);
        Added.push_back("-fno-omit-frame-pointer");
        Added.push_back("-mno-omit-leaf-frame-pointer");
        const std::string PluginArg = "-fplugin-arg-" CAUSAL_PLUGIN_NAME "-";
        if (!Settings.SyncHooks)
          Added.push_back(PluginArg + "no-sync-hooks");
        for (const std::string &Argument : Settings.PluginArguments)
          Added.push_back(PluginArg + Argument);
      }
      if (Summary.links()) {
        Added.push_back("--ld-path=" + Prefix + "/" + causal::layout::LibexecDir +
                        (wantsLld(Summary) ? "/ld.lld" : "/ld"));
        // Our link step runs the linker the user named by path.
        std::string UserLinker = userLinker(Summary);
        if (!UserLinker.empty() && !std::getenv("CAUSAL_REAL_LD"))
          setenv("CAUSAL_REAL_LD", UserLinker.c_str(), 1);
      }
    }
  }

  // Added flags go last (so they win) but before a "--" that ends options.
  std::vector<std::string> Final = Prepended;
  size_t DashDash = ClangArgs.size();
  for (size_t I = 0; I < ClangArgs.size(); ++I)
    if (ClangArgs[I] == "--") {
      DashDash = I;
      break;
    }
  Final.insert(Final.end(), ClangArgs.begin(), ClangArgs.begin() + DashDash);
  Final.insert(Final.end(), Added.begin(), Added.end());
  Final.insert(Final.end(), ClangArgs.begin() + DashDash, ClangArgs.end());

  // argv[0] is the real driver's path: clang takes its mode (C or C++) from
  // it, and with -no-canonical-prefixes also its own location.
  std::vector<char *> ExecArgv;
  ExecArgv.push_back(const_cast<char *>(Executable.c_str()));
  for (std::string &Arg : Final)
    ExecArgv.push_back(Arg.data());
  ExecArgv.push_back(nullptr);
  execv(Executable.c_str(), ExecArgv.data());
  fail("cannot run '" + Executable + "': " + std::strerror(errno));
}
