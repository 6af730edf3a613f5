//===- InstallLayout.h - Where the parts of causal live, relative to each other -===//
//
// The build tree and the install tree have the same layout, and every tool
// finds its siblings relative to the directory of its own executable, so a
// prefix can be copied anywhere (no absolute build paths are baked in).
//
//   <prefix>/bin/causal, causal-clang, causal-clang++
//   <prefix>/lib/libcausal_rt.so            the runtime
//   <prefix>/lib/causal/CausalPlugin.so     front-end plugin + pass
//   <prefix>/libexec/causal/ld, ld.lld      the link step (causal-ld)
//   <prefix>/libexec/causal/causal-lines    `causal lines` (needs libLLVM)
//   <prefix>/share/causal/causal.cfg        clang --config file
//   <prefix>/include/causal/*.h
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_TOOLS_INSTALLLAYOUT_H
#define CAUSAL_TOOLS_INSTALLLAYOUT_H

#include <string>

namespace causal {
namespace layout {

// Relative to <prefix>.
inline constexpr const char *BinDir = "bin";
inline constexpr const char *LibDir = "lib";
inline constexpr const char *RuntimeLibName = "causal_rt"; // -lcausal_rt
inline constexpr const char *PluginPath = "lib/causal/CausalPlugin.so";
inline constexpr const char *LibexecDir = "libexec/causal";
inline constexpr const char *ConfigFilePath = "share/causal/causal.cfg";

// <prefix> of the running executable: the parent of the directory holding
// /proc/self/exe (bin/ or libexec/causal/ -> prefix). Empty on failure.
std::string prefixOfThisExecutable();

} // namespace layout

/// True for a regular file we may execute.
bool isExecutableFile(const std::string &path);

/// Where execvp would find \p name: \p name itself if it has a '/', else the
/// first executable file of that name in $PATH (\p defaultPath if PATH is
/// unset; an empty entry is the current directory). "" if none.
std::string findInPath(const std::string &name, const char *defaultPath);
} // namespace causal

#endif
