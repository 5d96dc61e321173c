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

} // namespace mlsim
