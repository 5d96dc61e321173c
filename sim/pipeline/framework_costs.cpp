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
  }
  return c;
}

} // namespace mlsim
