#include "sim/hardware/cpu.hpp"

namespace mlsim {

StageCost parse_stage_cost(const ConfigNode& node) {
  node.allow_only({"per_sample", "per_byte", "per_pixel", "r2", "reps", "spread", "source"});
  StageCost c;
  c.per_sample = node.get_quantity<Seconds>("per_sample", Seconds(0.0), false);
  c.per_byte = node.get_quantity<Seconds>("per_byte", Seconds(0.0), false);
  c.per_pixel = node.get_quantity<Seconds>("per_pixel", Seconds(0.0), false);
  return c;
}

CpuSpec parse_cpu(const ConfigNode& node) {
  node.allow_only({"preset", "name", "source", "cores", "core_speed", "fp16_emulation_factor", "core_flops", "stage_costs", "model",
                   "measured"});
  CpuSpec c;
  c.name = node.get_string("name", node.has("preset") ? node.get_string("preset") : "cpu");
  c.cores = static_cast<int>(node.get_integer("cores", std::nullopt, 1, 4096));
  c.core_speed = node.get_number("core_speed", 1.0, 1e-3, 1e3);
  c.fp16_emulation_factor = node.get_number("fp16_emulation_factor", 1.0, 1.0, 1e3);
  c.core_flops = node.get_quantity<FlopsPerSec>("core_flops", FlopsPerSec(32e9));
  if (ConfigNode costs = node.child("stage_costs"); costs.defined())
    for (const auto& k : costs.keys())
      c.stage_costs[k] = parse_stage_cost(costs.child(k));
  return c;
}

} // namespace mlsim
