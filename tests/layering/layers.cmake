# mlsim's layers, lowest first, and the folder of each. A layer may include its own headers and those of
# the layers below it, never those of a layer above.
#   base      units, config access and errors, CSV, atomic files, recorder, engine
#   hardware  CPU, RAM, disk, NIC, PCIe, NVLink, accelerator models, the platform builder
#   pipeline  input pipeline, step graph, trainer, collectives
#   run       scenario loading, simulation, metrics, JSON report, trace
#   studies   sweeps, child pool, right-sizing, recommendations, cores needed
#   validate  calibration and validation on the real machine
#   app       main and the commands
set(MLSIM_LAYERS base hardware pipeline run studies validate app)
set(MLSIM_LAYER_DIR_base sim/core/base)
set(MLSIM_LAYER_DIR_hardware sim/hardware)
set(MLSIM_LAYER_DIR_pipeline sim/pipeline)
set(MLSIM_LAYER_DIR_run sim/core/run)
set(MLSIM_LAYER_DIR_studies sim/core/studies)
set(MLSIM_LAYER_DIR_validate sim/validate)
set(MLSIM_LAYER_DIR_app sim/core/app)
# Layers whose files never read YAML (the models), and the headers that would.
set(MLSIM_PARSE_FREE_LAYERS hardware pipeline)
set(MLSIM_PARSE_HEADERS "sim/core/base/config_node.hpp;yaml-cpp/")
include(${CMAKE_CURRENT_LIST_DIR}/check_layers.cmake)
