// Hardware presets are data.
//
// sim/hardware/presets/<category>.yaml maps a preset name to the same fields a
// scenario writes inline (category: accelerators, cpus, disks, nics, pcie,
// nvlink). A scenario picks one with `preset: <name>` (or writes the name
// alone as the value) and may override any field; its own values win.
// A calibrated profile is a YAML file with one section per category in the
// same schema (`cpu:`, `accelerator:`, ...): `preset: profiles/host.yaml`
// takes that section. An unknown name is answered with the valid names.
#pragma once

#include "sim/core/base/config_node.hpp"

#include <string>
#include <vector>

namespace mlsim {

// The folder holding the preset files, the first of: $MLSIM_PRESET_DIR; <dir of the executable>/../share/
// mlsim/presets (an installed copy, `cmake --install`); the source tree's sim/hardware/presets (a build
// tree). None there: InputError naming the places looked in.
std::string preset_dir();

// The names available in a category, sorted.
std::vector<std::string> preset_names(const std::string& category);

// `user` layered over the preset it names (if any). `profile_section` is the
// section of a profile file for this category (e.g. "accelerator").
ConfigNode resolve_preset(const ConfigNode& user, const std::string& category, const std::string& profile_section);

} // namespace mlsim
