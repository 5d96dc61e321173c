#include "sim/pipeline/step_graph/allocator_rounding.hpp"

#include <algorithm>
#include <cmath>

namespace mlsim {

namespace {
double round_up(double x, double unit) { return unit > 0 ? unit * std::ceil(x / unit) : x; }
} // namespace

Bytes AllocatorRounding::block_of(Bytes request) const {
  return Bytes(std::max(block.value(), round_up(request.value(), block.value())));
}

Bytes AllocatorRounding::reserved(const std::vector<Bytes>& tensors) const {
  const double g = segment.value();
  double small = 0, pooled = 0, own = 0;
  for (Bytes t : tensors) {
    if (t.value() <= 0)
      continue;
    const double b = block_of(t).value();
    if (g <= 0)
      own += b;
    else if (t.value() <= g / 2)
      small += b;
    else if (t.value() < 5 * g)
      pooled += b;
    else
      own += round_up(t.value(), g);
  }
  return Bytes(round_up(small, g) + round_up(pooled, 10 * g) + own);
}

} // namespace mlsim
