# causal-toolchain.cmake: profile a whole, unmodified CMake project.
#
#   cmake -DCMAKE_TOOLCHAIN_FILE=<prefix>/share/causal/causal-toolchain.cmake ...
#
# Every C and C++ target is compiled and linked by causal-clang/causal-clang++
# with -fcausal-profile. Works with any generator and with
# CMAKE_<LANG>_COMPILER_LAUNCHER (e.g. ccache), which wraps the compiler set here.
get_filename_component(_causal_prefix "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)

set(CMAKE_C_COMPILER "${_causal_prefix}/bin/causal-clang")
set(CMAKE_CXX_COMPILER "${_causal_prefix}/bin/causal-clang++")
foreach(_causal_kind C CXX)
  set(CMAKE_${_causal_kind}_FLAGS_INIT "-fcausal-profile")
endforeach()
foreach(_causal_kind EXE SHARED MODULE)
  set(CMAKE_${_causal_kind}_LINKER_FLAGS_INIT "-fcausal-profile")
endforeach()
unset(_causal_kind)
