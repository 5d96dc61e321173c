#include "sim/hardware/nvlink.hpp"

namespace mlsim {

NvlinkSpec parse_nvlink(const ConfigNode& node) {
  NvlinkSpec n;
  if (!node.defined())
    return n;
  node.allow_only({"preset", "name", "source", "topology", "bandwidth", "latency"});
  n.name = node.get_string("name", node.has("preset") ? node.get_string("preset") : "nvlink");
  n.topology = node.get_choice("topology", {"switch", "none"}, "switch");
  if (n.present())
    n.bandwidth = node.get_quantity<BytesPerSec>("bandwidth");
  n.latency = node.get_quantity<Seconds>("latency", Seconds(1e-6), false);
  return n;
}

} // namespace mlsim
