#include "sim/hardware/nic.hpp"

namespace mlsim {

NicSpec parse_nic(const ConfigNode& node) {
  node.allow_only({"preset", "name", "source", "bandwidth", "latency"});
  NicSpec n;
  n.name = node.get_string("name", node.has("preset") ? node.get_string("preset") : "nic");
  n.bandwidth = node.get_quantity<BytesPerSec>("bandwidth");
  n.latency = node.get_quantity<Seconds>("latency", Seconds(5e-6), false);
  return n;
}

} // namespace mlsim
