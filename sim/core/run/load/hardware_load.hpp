// The loader of the `hardware:` section: YAML (presets resolved, preset_library.hpp) -> the typed specs
// of sim/hardware. Every key is checked (unknown keys are errors with a "did you mean"); an error names
// the key, what was expected and what was found, at file:line:col (InputError).
#pragma once

#include "sim/core/base/config_node.hpp"
#include "sim/hardware/node_spec.hpp"

#include <cstddef>
#include <string>

namespace mlsim {

// One entry of `hardware.nodes`, its parts' presets resolved.
NodeSpec parse_node(const ConfigNode& node, size_t index);
// `hardware.storage` (undefined: no remote storage).
StorageSpec parse_storage(const ConfigNode& node);

// The parts of a node, each after preset resolution.
AcceleratorSpec parse_accelerator(const ConfigNode& node);
// An accelerator's `kernels:` section (absent: no tile model, full fractions).
KernelParams parse_kernel_params(const ConfigNode& node);
CpuSpec parse_cpu(const ConfigNode& node);
StageCost parse_stage_cost(const ConfigNode& node, Seconds page_fault = Seconds(0.0));
RamSpec parse_ram(const ConfigNode& node);
DiskSpec parse_disk(const ConfigNode& node);
NicSpec parse_nic(const ConfigNode& node);
PcieSpec parse_pcie(const ConfigNode& node);
NvlinkSpec parse_nvlink(const ConfigNode& node); // undefined: no NVLink

// A named preset from sim/hardware/presets/accelerators.yaml (for tests and tools).
AcceleratorSpec accelerator_preset(const std::string& name);

} // namespace mlsim
