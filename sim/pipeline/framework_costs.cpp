#include "sim/pipeline/framework_costs.hpp"

namespace mlsim {

FrameworkCosts default_framework_costs(Framework framework) {
  FrameworkCosts c;
  if (framework == Framework::pytorch) {
    c.receive_per_batch = Seconds(0.2e-3);
    c.receive_per_byte = Seconds(0.25e-9);
    c.worker_per_batch = Seconds(0.5e-3);
    c.worker_per_byte = Seconds(0.1e-9);
    c.pin_per_byte = Seconds(0.1e-9);
    c.worker_fresh_pages_per_byte = 1.0 / 4096.0; // each batch's shared-memory tensor, one fault a page
  }
  return c;
}

} // namespace mlsim
