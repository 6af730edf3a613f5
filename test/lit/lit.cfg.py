# lit configuration for causal: IR tests of the pass, driver tests, link-step
# tests and end-to-end tests (programs built with causal-clang and run).
import os
import shutil

import lit.formats

config.name = "causal"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".ll", ".c", ".cpp", ".test"]
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py.in", "README.md"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.causal_obj_root, "test", "lit")

obj = config.causal_obj_root
bin_dir = os.path.join(obj, "bin")
llvm = config.llvm_tools_dir

# FileCheck, not, count, split-file, opt, llvm-* come from the LLVM we build
# against; our tools from the build tree.
config.environment["PATH"] = os.pathsep.join([bin_dir, llvm, config.environment.get("PATH", os.environ.get("PATH", ""))])
for var in ["HOME", "TMPDIR", "LANG", "LC_ALL"]:
    if var in os.environ:
        config.environment[var] = os.environ[var]
# A profile run from a test must never pick up the developer's settings.
for var in list(os.environ):
    if var.startswith("CAUSAL_"):
        config.environment.pop(var, None)

config.substitutions.append(("%causal-clangxx", os.path.join(bin_dir, "causal-clang++")))
config.substitutions.append(("%causal-clang", os.path.join(bin_dir, "causal-clang")))
config.substitutions.append(("%causal-ld", os.path.join(obj, "libexec", "causal", "ld")))
config.substitutions.append(("%causal", os.path.join(bin_dir, "causal")))
config.substitutions.append(("%plugin", os.path.join(obj, "lib", "causal", "CausalPlugin.so")))
config.substitutions.append(("%runtime_dir", os.path.join(obj, "lib")))
config.substitutions.append(("%config_file", os.path.join(obj, "share", "causal", "causal.cfg")))
config.substitutions.append(("%clangxx", config.real_clang + "++"))
config.substitutions.append(("%clang", config.real_clang))
config.substitutions.append(("%opt", os.path.join(llvm, "opt")))
config.substitutions.append(("%llvm_bin", llvm))
config.substitutions.append(("%src_root", config.causal_src_root))
config.substitutions.append(("%obj_root", config.causal_obj_root))
config.substitutions.append(("%python", shutil.which("python3") or "python3"))

config.available_features.add("llvm-%d" % config.llvm_version_major)
if os.path.exists(os.path.join(llvm, "ld.lld")):
    config.available_features.add("lld")
if shutil.which("dpkg") and shutil.which("dpkg-shlibdeps"):
    config.available_features.add("dpkg")
if os.path.exists(os.path.join(llvm, "..", "lib", "LLVMgold.so")):
    config.available_features.add("gold-plugin")

# Sanitizer runtimes of the clang we test with (Debian: libclang-rt-N-dev):
# the fault suite builds sanitized programs where they are installed.
import subprocess
try:
    _resource_dir = subprocess.run([config.real_clang, "-print-resource-dir"], capture_output=True,
                                   text=True, timeout=60).stdout.strip()
except (OSError, subprocess.SubprocessError):
    _resource_dir = ""
for _sanitizer in ["asan", "tsan", "ubsan_standalone"]:
    for _layout in ["lib/linux/libclang_rt.%s-x86_64.a", "lib/x86_64-pc-linux-gnu/libclang_rt.%s.a",
                    "lib/x86_64-unknown-linux-gnu/libclang_rt.%s.a"]:
        if _resource_dir and os.path.exists(os.path.join(_resource_dir, _layout % _sanitizer)):
            config.available_features.add(_sanitizer.split("_")[0] + "-runtime")
            break
