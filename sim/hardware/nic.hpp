// Network interface of a node: a full-duplex link of `bandwidth` each way
// and `latency`, shared by gradient traffic and remote data.
// Ignores: protocol overheads beyond what `bandwidth` states (give the
// measured goodput), congestion control dynamics, switch buffering.
#pragma once

#include "sim/core/base/config_node.hpp"
#include "sim/core/base/units.hpp"

#include <string>

namespace mlsim {

struct NicSpec {
  std::string name = "nic";
  BytesPerSec bandwidth{0.0};
  Seconds latency{0.0};
};

NicSpec parse_nic(const ConfigNode& node);

} // namespace mlsim
