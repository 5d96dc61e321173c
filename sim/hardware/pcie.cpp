#include "sim/hardware/pcie.hpp"

namespace mlsim {

BytesPerSec pcie_lane_rate(int generation) {
  // GT/s per lane x encoding efficiency / 8 bits: gen1/2 8b/10b, gen3+ 128b/130b.
  switch (generation) {
  case 1: return BytesPerSec(2.5e9 * 0.8 / 8);
  case 2: return BytesPerSec(5.0e9 * 0.8 / 8);
  case 3: return BytesPerSec(8.0e9 * 128.0 / 130.0 / 8);
  case 4: return BytesPerSec(16.0e9 * 128.0 / 130.0 / 8);
  case 5: return BytesPerSec(32.0e9 * 128.0 / 130.0 / 8);
  default: return BytesPerSec(0.0);
  }
}

BytesPerSec PcieSpec::bandwidth() const { return pcie_lane_rate(generation) * (lanes * protocol_efficiency); }

PcieSpec parse_pcie(const ConfigNode& node) {
  node.allow_only({"preset", "source", "generation", "lanes", "protocol_efficiency", "latency", "gpus_per_switch",
                   "pinned", "measured"});
  PcieSpec p;
  p.generation = static_cast<int>(node.get_integer("generation", std::nullopt, 1, 5));
  p.lanes = static_cast<int>(node.get_integer("lanes", 16));
  if (p.lanes != 1 && p.lanes != 2 && p.lanes != 4 && p.lanes != 8 && p.lanes != 16)
    node.child("lanes").fail("one of 1, 2, 4, 8, 16", node.child("lanes").quoted());
  p.protocol_efficiency = node.get_number("protocol_efficiency", 0.8, 0.05, 1.0);
  p.latency = node.get_quantity<Seconds>("latency", Seconds(1e-6), false);
  p.gpus_per_switch = static_cast<int>(node.get_integer("gpus_per_switch", 1, 1, 64));
  p.pinned = node.get_bool("pinned", true);
  return p;
}

} // namespace mlsim
