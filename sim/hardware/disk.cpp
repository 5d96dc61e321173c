#include "sim/hardware/disk.hpp"

namespace mlsim {

DiskSpec parse_disk(const ConfigNode& node) {
  node.allow_only({"preset", "name", "source", "kind", "sequential_read", "random_read_iops", "latency", "measured"});
  DiskSpec d;
  d.name = node.get_string("name", node.has("preset") ? node.get_string("preset") : "disk");
  d.kind = node.get_choice("kind", {"hdd", "sata-ssd", "nvme", "network"}, "sata-ssd");
  d.sequential_read = node.get_quantity<BytesPerSec>("sequential_read");
  d.random_read_iops = node.get_number("random_read_iops", std::nullopt, 1e-3);
  d.latency = node.get_quantity<Seconds>("latency", Seconds(0.0), false);
  return d;
}

} // namespace mlsim
