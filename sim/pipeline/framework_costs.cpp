#include "sim/pipeline/framework_costs.hpp"

namespace mlsim {

FrameworkCosts default_framework_costs(const std::string& framework) {
  FrameworkCosts c;
  if (framework == "pytorch") {
    c.receive_per_batch = Seconds(0.2e-3);
    c.receive_per_byte = Seconds(0.25e-9);
    c.worker_per_batch = Seconds(0.5e-3);
    c.worker_per_byte = Seconds(0.1e-9);
    c.pin_per_byte = Seconds(0.1e-9);
  }
  return c;
}

FrameworkCosts parse_framework_costs(const ConfigNode& node, const std::string& framework) {
  FrameworkCosts c = default_framework_costs(framework);
  if (!node.defined())
    return c;
  node.allow_only({"receive_per_batch", "receive_per_byte", "worker_per_batch", "worker_per_byte", "pin_per_byte",
                   "worker_startup"});
  auto get = [&](const char* key, Seconds& field) { field = node.get_quantity<Seconds>(key, field, false); };
  get("receive_per_batch", c.receive_per_batch);
  get("receive_per_byte", c.receive_per_byte);
  get("worker_per_batch", c.worker_per_batch);
  get("worker_per_byte", c.worker_per_byte);
  get("pin_per_byte", c.pin_per_byte);
  get("worker_startup", c.worker_startup);
  return c;
}

} // namespace mlsim
