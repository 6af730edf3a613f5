# causal-project.cmake: included at the end of every project() call of a build
# configured with causal-toolchain.cmake (CMAKE_PROJECT_INCLUDE). Adds
# -fcausal-profile to every C and C++ compile and link step, once, as options
# of the first project's directory: every target below inherits them, and they
# survive whatever CMAKE_<LANG>_FLAGS the user sets.
get_property(_causal_added GLOBAL PROPERTY CAUSAL_PROFILE_OPTIONS_ADDED)
if(NOT _causal_added)
  set_property(GLOBAL PROPERTY CAUSAL_PROFILE_OPTIONS_ADDED TRUE)
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:-fcausal-profile>")
  add_link_options("$<$<LINK_LANGUAGE:C,CXX>:-fcausal-profile>")
endif()
unset(_causal_added)
if(CAUSAL_USER_PROJECT_INCLUDE)
  include("${CAUSAL_USER_PROJECT_INCLUDE}")
endif()
