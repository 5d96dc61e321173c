# cmake -DROOT=<tree> -P run_check.cmake: the layer check of the top-level CMakeLists.txt over any tree
# and the models' rule that they never read YAML (the test suite runs it over the sources, which must
# pass, and over fixtures with an upward include or a model including config_node.hpp, which must fail).
include(${CMAKE_CURRENT_LIST_DIR}/layers.cmake)
mlsim_check_layers("${ROOT}" "${MLSIM_LAYERS}" violations)
if(violations)
  message(FATAL_ERROR "includes that run up the layers:\n${violations}")
endif()
mlsim_check_parse_free("${ROOT}" "${MLSIM_PARSE_FREE_LAYERS}" "${MLSIM_PARSE_HEADERS}" parsing)
if(parsing)
  message(FATAL_ERROR "models that read YAML:\n${parsing}")
endif()
message(STATUS "layers ok: ${ROOT}")
