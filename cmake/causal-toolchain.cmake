# causal-toolchain.cmake: profile a whole, unmodified CMake project.
#
#   cmake -DCMAKE_TOOLCHAIN_FILE=<prefix>/share/causal/causal-toolchain.cmake ...
#
# Every C and C++ target is compiled and linked by causal-clang/causal-clang++
# with -fcausal-profile. Works with any generator and with
# CMAKE_<LANG>_COMPILER_LAUNCHER (e.g. ccache), which wraps the compiler set here.
#
# The flag is not put in CMAKE_<LANG>_FLAGS(_INIT): a user who sets
# -DCMAKE_C_FLAGS=... (the usual way to add a flag) would replace it and
# build, silently, a program that links the runtime but profiles nothing.
# Instead causal-project.cmake, included at the end of every project() call
# (CMAKE_PROJECT_INCLUDE), adds it as a directory option of the top-level
# project, which every target inherits whatever flags the user sets.
get_filename_component(_causal_prefix "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)

set(CMAKE_C_COMPILER "${_causal_prefix}/bin/causal-clang")
set(CMAKE_CXX_COMPILER "${_causal_prefix}/bin/causal-clang++")
# A project include of the user's own runs after ours (causal-project.cmake).
if(CMAKE_PROJECT_INCLUDE AND NOT CMAKE_PROJECT_INCLUDE STREQUAL
                             "${CMAKE_CURRENT_LIST_DIR}/causal-project.cmake")
  set(CAUSAL_USER_PROJECT_INCLUDE "${CMAKE_PROJECT_INCLUDE}")
endif()
set(CMAKE_PROJECT_INCLUDE "${CMAKE_CURRENT_LIST_DIR}/causal-project.cmake")
