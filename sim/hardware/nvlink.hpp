// NVLink / NVSwitch between the accelerators of one node.
//
// Each accelerator has `bandwidth` per direction into the node's GPU fabric
// (the sum of its NVLink links), modelled as a full-duplex link to a
// non-blocking switch: any pair talks at min of their links, and a GPU
// talking to several peers shares its own link. With `topology: none` GPUs
// talk through PCIe and the host.
// Ignores: the hybrid cube-mesh of DGX-1 (P100/V100) where some pairs have
// no direct link (modelled as all-to-all at the per-GPU aggregate).
#pragma once

#include "sim/core/base/named_enum.hpp"
#include "sim/core/base/units.hpp"

#include <string>

namespace mlsim {

enum class NvlinkTopology { nvswitch, none };
template <> struct EnumNames<NvlinkTopology> {
  static constexpr std::array<std::pair<NvlinkTopology, std::string_view>, 2> table{{
      {NvlinkTopology::nvswitch, "switch"}, {NvlinkTopology::none, "none"}}};
};

struct NvlinkSpec {
  std::string name = "none";
  NvlinkTopology topology = NvlinkTopology::none;
  BytesPerSec bandwidth{0.0}; // per GPU, per direction
  Seconds latency{1e-6};

  bool present() const { return topology != NvlinkTopology::none; }
};

} // namespace mlsim
