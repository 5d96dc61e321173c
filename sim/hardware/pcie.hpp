// PCIe between the host and each accelerator.
//
// Bandwidth per direction = lanes x per-lane rate of the generation (after
// line encoding: gen3 0.985, gen4 1.969, gen5 3.938 GB/s; PCI-SIG base
// specifications) x protocol_efficiency (TLP/DLLP overhead, typically ~0.8
// for large DMA transfers). `gpus_per_switch` accelerators share one switch
// whose uplink to the root complex has the same bandwidth. Pageable host
// memory is staged through a pinned buffer by the driver: a host memcpy at
// RAM bandwidth precedes the DMA.
// Ignores: peer-to-peer through the switch, read-request size limits, IOMMU.
#pragma once

#include "sim/core/base/units.hpp"

namespace mlsim {

struct PcieSpec {
  int generation = 4;
  int lanes = 16;
  double protocol_efficiency = 0.8;
  Seconds latency{1e-6};
  int gpus_per_switch = 1; // 1: each accelerator has its own path to the root complex
  bool pinned = true;      // host buffers are pinned (page-locked)

  BytesPerSec bandwidth() const; // per direction
};

// Per-lane rate of a PCIe generation, per direction, after encoding.
BytesPerSec pcie_lane_rate(int generation);

} // namespace mlsim
