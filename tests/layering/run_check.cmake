# cmake -DROOT=<tree> -P run_check.cmake: the layer check of the top-level CMakeLists.txt over any tree
# (the test suite runs it over the sources, which must pass, and over a fixture with an upward include,
# which must fail).
include(${CMAKE_CURRENT_LIST_DIR}/layers.cmake)
mlsim_check_layers("${ROOT}" "${MLSIM_LAYERS}" violations)
if(violations)
  message(FATAL_ERROR "includes that run up the layers:\n${violations}")
endif()
message(STATUS "layers ok: ${ROOT}")
