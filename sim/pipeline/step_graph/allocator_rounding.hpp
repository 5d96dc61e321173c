// What a framework's caching allocator reserves for the tensors it is asked
// for: the blocks are rounded and carved from segments, and the rest of a
// segment is held too (the memory `torch.cuda.memory_reserved` reports above
// `memory_allocated`).
//
// PyTorch's CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp), with
// b = the block rounding (kMinBlockSize, 512 B) and g = the segment
// granularity (kSmallBuffer = kRoundLarge = 2 MiB; kSmallSize = g/2 = 1 MiB,
// kMinLargeAlloc = 5g = 10 MiB, kLargeBuffer = 10g = 20 MiB):
//   block(s)    = max(b, b x ceil(s / b))
//   s <= g/2    small pool: blocks packed into segments of g
//   s <  5g     large pool: blocks packed into segments of 10g
//   s >= 5g     a segment of its own: g x ceil(s / g)
//   reserved    = g x ceil(sum small blocks / g) + 10g x ceil(sum pooled large blocks / 10g)
//                 + sum of the own segments
// So the fragmentation of a step that holds its tensors at once is derived
// from its tensor sizes, not picked: ResNet-50's ~100 MB activations waste
// under 2 MiB each. Ignores: freed blocks of one size left unused for a
// request of another (the caching allocator's reuse fragmentation, which
// `expandable_segments` removes), the unsplit remainder (<= 1 MiB) of a
// large-pool block, the CUDA context. g = 0 models an allocator without
// segments (XLA's BFC arena, allocated whole at start): blocks only.
#pragma once

#include "sim/core/base/units.hpp"

#include <vector>

namespace mlsim {

struct AllocatorRounding {
  Bytes block{512.0};              // every block a multiple of this
  Bytes segment{2.0 * 1024 * 1024}; // g above; 0: no segments

  Bytes block_of(Bytes request) const;
  // What the allocator reserves for tensors of these sizes, all alive at once.
  Bytes reserved(const std::vector<Bytes>& tensors) const;
};

} // namespace mlsim
