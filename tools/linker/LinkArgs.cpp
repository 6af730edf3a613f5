//===- LinkArgs.cpp - Recognise the options causal-ld cares about ---------===//
#include "LinkArgs.h"

#include <cstring>
#include <set>

namespace causal {
namespace linker {

namespace {

// Options of GNU ld / gold / lld that take their value in the next argument
// (when not written as --opt=value or -Xvalue). Leading dashes removed; both
// -opt and --opt spellings are accepted by these linkers.
const std::set<std::string> &separateValueOptions() {
  static const std::set<std::string> Options = {
      // single letters
      "o", "L", "l", "m", "T", "e", "h", "u", "y", "F", "f", "A", "b", "c", "G", "R", "Y", "z",
      // long options
      "output", "library-path", "library", "script", "entry", "soname", "rpath", "rpath-link",
      "dynamic-linker", "undefined", "trace-symbol", "Map", "version-script", "dynamic-list",
      "plugin", "plugin-opt", "auxiliary", "filter", "format", "mri-script", "defsym", "wrap",
      "exclude-libs", "sysroot", "hash-style", "just-symbols", "init", "fini", "image-base",
      "section-start", "Ttext", "Tdata", "Tbss", "Ttext-segment", "Trodata-segment",
      "Tldata-segment", "retain-symbols-file", "out-implib", "dependency-file", "mllvm",
      "error-limit", "thinlto-cache-dir", "thinlto-cache-policy", "sort-section", "require-defined",
      "export-dynamic-symbol", "oformat", "architecture", "orphan-handling", "symbol-ordering-file",
      "call-graph-ordering-file", "remap-inputs-file", "why-extract", "package-metadata",
      "emulation", "dT", "default-script", "undefined-glob", "compress-debug-sections",
      "plugin-opt", "lto-O", "lto-cs-profile-file", "opt-remarks-filename", "opt-remarks-passes",
      "opt-remarks-format", "unresolved-symbols", "icf", "pack-dyn-relocs", "build-id", "defsym",
      "version-exports-section", "error-handling-script", "section-ordering-file", "soname",
      "Tsbss"};
  return Options;
}

// Options that take an optional value only after '=' (never the next arg),
// listed because their names are also prefixes or letters above.
bool onlyJoinedValue(const std::string &Name) {
  return Name == "build-id" || Name == "hash-style" || Name == "compress-debug-sections" ||
         Name == "icf" || Name == "pack-dyn-relocs" || Name == "unresolved-symbols" ||
         Name == "lto-O";
}

std::string stripDashes(const std::string &Arg) {
  size_t N = 0;
  while (N < Arg.size() && N < 2 && Arg[N] == '-')
    ++N;
  return Arg.substr(N);
}

} // namespace

LinkArgs analyzeLinkArgs(std::vector<std::string> Args) {
  LinkArgs L;
  L.Args = std::move(Args);
  const std::vector<std::string> &A = L.Args;
  for (size_t I = 0; I < A.size(); ++I) {
    const std::string &Arg = A[I];
    if (Arg.empty())
      continue;
    if (Arg[0] != '-' || Arg == "-") {
      L.HasInputs = true;
      continue;
    }
    std::string Name = stripDashes(Arg);
    std::string Value;
    bool HasValue = false;
    size_t Eq = Name.find('=');
    if (Eq != std::string::npos && Arg.compare(0, 2, "--") == 0) {
      Value = Name.substr(Eq + 1);
      Name = Name.substr(0, Eq);
      HasValue = true;
    } else if (Eq != std::string::npos && Name.size() > 1 &&
               separateValueOptions().count(Name.substr(0, Eq))) {
      // -plugin-opt=..., -soname=..., etc.
      Value = Name.substr(Eq + 1);
      Name = Name.substr(0, Eq);
      HasValue = true;
    }

    // The two single-dash options whose joined value matters: -o<file> and
    // -l<lib>. (Other joined forms, -L<dir>, -z<kw>, never take the next
    // argument, so they need no special case.)
    bool SingleDash = Arg.compare(0, 2, "--") != 0;
    auto StartsWith = [&](const char *Prefix) {
      return Name.compare(0, std::strlen(Prefix), Prefix) == 0;
    };
    if (!HasValue && SingleDash && Name.size() > 1 && Name[0] == 'o' && !StartsWith("output") &&
        !StartsWith("omagic") && !StartsWith("oformat") && !StartsWith("orphan") &&
        !StartsWith("opt")) {
      Value = Name.substr(1);
      Name = "o";
      HasValue = true;
    } else if (!HasValue && SingleDash && Name.size() > 1 && Name[0] == 'l' &&
               !StartsWith("library") && !StartsWith("lto")) {
      Value = Name.substr(1);
      Name = "l";
      HasValue = true;
    }
    if (!HasValue && separateValueOptions().count(Name) && !onlyJoinedValue(Name) &&
        I + 1 < A.size()) {
      Value = A[++I];
      HasValue = true;
    }

    if (Name == "o" || Name == "output") {
      if (HasValue)
        L.Output = Value;
    } else if (Name == "l" || Name == "library") {
      L.HasInputs = true;
    } else if (Name == "r" || Name == "relocatable" || Name == "i") {
      L.Relocatable = true;
    } else if (Name == "v" || Name == "V" || Name == "version" || Name == "help" ||
               Name == "target-help") {
      L.InfoOnly = true;
    } else if (Name == "static" || Name == "static-pie" || Name == "Bstatic-all") {
      L.Static = true;
    } else if (Name == "shared" || Name == "Bshareable") {
      L.Shared = true;
    } else if (Name == "s" || Name == "strip-all") {
      L.StripAll = true;
      L.StripOptionIndices.push_back(I);
    } else if (Name == "S" || Name == "strip-debug") {
      L.StripDebug = true;
      L.StripOptionIndices.push_back(I);
    } else if (Name == "plugin") {
      if (Value.find("LLVMgold") != std::string::npos)
        L.UsesPlugin = true;
    } else if (Name == "thinlto-cache-dir") {
      L.HasCacheDir = true;
    } else if (Name == "plugin-opt") {
      if (Value.compare(0, 10, "cache-dir=") == 0)
        L.HasCacheDir = true;
    }
  }
  if (!L.HasInputs)
    L.InfoOnly = true; // nothing to link (e.g. `ld -v`): let the linker answer
  return L;
}

std::vector<std::string> argsWithoutStrip(const LinkArgs &L) {
  std::vector<std::string> Out;
  size_t Next = 0;
  for (size_t I = 0; I < L.Args.size(); ++I) {
    if (Next < L.StripOptionIndices.size() && L.StripOptionIndices[Next] == I) {
      ++Next;
      continue;
    }
    Out.push_back(L.Args[I]);
  }
  return Out;
}

} // namespace linker
} // namespace causal
