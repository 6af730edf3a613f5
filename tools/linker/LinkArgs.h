//===- LinkArgs.h - What causal-ld needs to know about a linker command line -===//
//
// causal-ld does not reimplement a linker's option parser; it recognises the
// few options that change what it does (output, -r, strip, -static, help and
// version, an LTO plugin, an existing ThinLTO cache) and the options of GNU ld
// and lld that take their value in the next argument, so a value is never
// mistaken for an option.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_TOOLS_LINKER_LINKARGS_H
#define CAUSAL_TOOLS_LINKER_LINKARGS_H

#include <string>
#include <vector>

namespace causal {
namespace linker {

struct LinkArgs {
  std::vector<std::string> Args; // without argv[0], response files expanded
  std::string Output = "a.out";
  bool Relocatable = false;               // -r: pass through, no table, no runtime
  bool InfoOnly = false;                  // --version, -v, --help: pass through
  bool Static = false;                    // -static / -static-pie: no shared runtime
  bool Shared = false;                    // -shared
  bool StripAll = false;                  // -s / --strip-all (removed from the links)
  bool StripDebug = false;                // -S / --strip-debug (removed from the links)
  bool UsesPlugin = false;                // -plugin <LLVMgold.so>: LTO through the gold plugin
  bool HasCacheDir = false;               // the user gave a ThinLTO cache directory
  bool HasInputs = false;                 // at least one input file or -l
  std::vector<size_t> StripOptionIndices; // positions of -s/-S/--strip-* in Args
};

/// Classifies Args (response files already expanded).
LinkArgs analyzeLinkArgs(std::vector<std::string> Args);

/// Args for the links: the user's minus the strip options.
std::vector<std::string> argsWithoutStrip(const LinkArgs &L);

} // namespace linker
} // namespace causal

#endif
