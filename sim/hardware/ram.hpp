// Host RAM: capacity and bandwidth.
//
// Capacity decides whether the dataset stays in the page cache after its
// first read (epoch 1 reads storage; later epochs read RAM when the dataset
// fits in `size - reserved`). Bandwidth is a SimGrid link shared by the
// memory traffic of cached reads and pageable host-to-device staging.
// Ignores: NUMA, per-channel limits, cache hierarchy.
#pragma once

#include "sim/core/base/units.hpp"

namespace mlsim {

struct RamSpec {
  Bytes size{0.0};
  BytesPerSec bandwidth{0.0};
  Bytes reserved{0.0}; // taken by the OS, the framework and the model on the host

  Bytes page_cache_capacity() const { return max(Bytes(0.0), size - reserved); }
};

} // namespace mlsim
