// Network interface of a node: a full-duplex link of `bandwidth` each way
// and `latency`, shared by gradient traffic and remote data.
// Ignores: protocol overheads beyond what `bandwidth` states (give the
// measured goodput), congestion control dynamics, switch buffering.
#pragma once

#include "sim/core/base/units.hpp"

#include <string>

namespace mlsim {

struct NicSpec {
  std::string name = "nic";
  BytesPerSec bandwidth{0.0};
  Seconds latency{0.0};
  // A single node whose data is local or in RAM sends nothing over a NIC: `nic:` may be left out there.
  // The link still exists (routes are built for every node) but no traffic crosses it.
  bool present = true;
};

} // namespace mlsim
