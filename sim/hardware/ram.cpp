#include "sim/hardware/ram.hpp"

namespace mlsim {

RamSpec parse_ram(const ConfigNode& node) {
  node.allow_only({"preset", "source", "size", "bandwidth", "reserved", "measured"});
  RamSpec r;
  r.size = node.get_quantity<Bytes>("size");
  r.bandwidth = node.get_quantity<BytesPerSec>("bandwidth");
  r.reserved = node.get_quantity<Bytes>("reserved", Bytes(r.size.value() * 0.1), false);
  if (r.reserved >= r.size)
    node.child("reserved").fail("less than ram.size", node.child("reserved").quoted());
  return r;
}

} // namespace mlsim
