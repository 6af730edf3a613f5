//===- CausalPlugin.cpp - CausalPlugin.so: pass plugin and front-end loader ===//
//
// CausalPlugin.so is what users and the driver name:
//
//   clang -fplugin=CausalPlugin.so [-fplugin-arg-causal-<arg>]...
//   clang -fpass-plugin=CausalPlugin.so
//   opt -load-pass-plugin CausalPlugin.so -passes=causal-instrument
//
// It holds the pass and llvmGetPassPluginInfo() and links only libLLVM. The
// clang front-end action lives in CausalFrontend.so next to it, which links
// libclang-cpp and which this file loads only when clang's front end is in
// the process. One file cannot do both on Debian: loading libclang-cpp into
// opt aborts ("Option 'pgo-cold-func-opt' registered more than once", the
// option exists in both opt and clang's BackendUtil).
//
//===----------------------------------------------------------------------===//

#include "CausalInstrument.h"
#include "FrontendInterface.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/Passes/PassBuilder.h"

#if __has_include("llvm/Plugins/PassPlugin.h")
#include "llvm/Plugins/PassPlugin.h" // LLVM 22 and later
#else
#include "llvm/Passes/PassPlugin.h"
#endif

#include <cstdio>
#include <dlfcn.h>
#include <limits.h>
#include <string>
#include <unistd.h>

#ifndef CAUSAL_CLANG_CPP_SONAME
#error "CAUSAL_CLANG_CPP_SONAME (soname of the libclang-cpp built against) must be defined"
#endif

using namespace causal;

namespace {

std::string pathOfThisPlugin() {
  Dl_info Info;
  if (dladdr(reinterpret_cast<void *>(&pathOfThisPlugin), &Info) == 0 || !Info.dli_fname)
    return {};
  return Info.dli_fname;
}

std::string directoryOf(const std::string &Path) {
  size_t Slash = Path.find_last_of('/');
  return Slash == std::string::npos ? std::string(".") : Path.substr(0, Slash);
}

std::string nameOfThisExecutable() {
  char Buffer[PATH_MAX];
  ssize_t N = readlink("/proc/self/exe", Buffer, sizeof(Buffer) - 1);
  if (N <= 0)
    return {};
  std::string Path(Buffer, static_cast<size_t>(N));
  return Path.substr(Path.find_last_of('/') + 1);
}

// A plugin that cannot do its job must stop the compilation, or the program
// would silently be built without instrumentation. Nothing can be reported
// through clang's diagnostics this early, and exit() inside dlopen could run
// destructors under the loader's lock.
[[noreturn]] void failLoading(const std::string &Message) {
  std::fprintf(stderr, "CausalPlugin.so: error: %s\n", Message.c_str());
  _exit(1);
}

/// Runs when the file is loaded. Inside clang (the libclang-cpp this plugin
/// was built against is loaded), loads the front-end action.
struct FrontendLoader {
  FrontendLoader() {
    void *ClangCpp = dlopen(CAUSAL_CLANG_CPP_SONAME, RTLD_LAZY | RTLD_NOLOAD);
    if (!ClangCpp) {
      // opt, or another LLVM tool: the pass plugin half is all it needs.
      if (nameOfThisExecutable().compare(0, 5, "clang") == 0)
        failLoading("this clang does not use " CAUSAL_CLANG_CPP_SONAME
                    ", the clang library causal was built against; rebuild causal with "
                    "-DLLVM_DIR of this clang");
      return;
    }
    dlclose(ClangCpp); // RTLD_NOLOAD took a reference
    std::string Self = pathOfThisPlugin();
    std::string Frontend = directoryOf(Self) + "/" CAUSAL_FRONTEND_FILE_NAME;
    void *Handle = dlopen(Frontend.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!Handle)
      failLoading("cannot load the front-end action: " + std::string(dlerror()));
    auto *Attach =
        reinterpret_cast<CausalFrontendAttachFn *>(dlsym(Handle, CAUSAL_FRONTEND_ATTACH_FN));
    if (!Attach)
      failLoading(Frontend + " has no " CAUSAL_FRONTEND_ATTACH_FN);
    static std::string PassPluginPath = Self;
    static const FrontendServices Services = {PassPluginPath.c_str(),
                                              &registerCausalInstrumentPasses};
    Attach(&Services);
  }
};

const FrontendLoader LoadFrontendInsideClang;

} // namespace

extern "C" LLVM_ATTRIBUTE_WEAK ::llvm::PassPluginLibraryInfo llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "CausalInstrument", LLVM_VERSION_STRING,
          [](llvm::PassBuilder &PB) {
            registerCausalInstrumentPipelineParsing(PB);
            registerCausalInstrumentPasses(PB, CausalInstrumentOptions());
          }};
}
