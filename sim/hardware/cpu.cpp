#include "sim/hardware/cpu.hpp"

#include <algorithm>

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
  node.allow_only({"preset", "name", "source", "cores", "core_speed", "fp16_emulation_factor", "all_cores_efficiency",
                   "core_flops", "stage_costs", "model", "measured", "scheduler", "balance_delay"});
  CpuSpec c;
  c.name = node.get_string("name", node.has("preset") ? node.get_string("preset") : "cpu");
  c.cores = static_cast<int>(node.get_integer("cores", std::nullopt, 1, 4096));
  c.core_speed = node.get_number("core_speed", 1.0, 1e-3, 1e3);
  c.fp16_emulation_factor = node.get_number("fp16_emulation_factor", 1.0, 1.0, 1e3);
  c.all_cores_efficiency = node.get_number("all_cores_efficiency", 1.0, 0.0, 1.0);
  if (!(c.all_cores_efficiency > 0.0)) // (0, 1]: zero would stop every core
    node.child("all_cores_efficiency").fail("a number in (0, 1]", node.child("all_cores_efficiency").quoted());
  c.core_flops = node.get_quantity<FlopsPerSec>("core_flops", FlopsPerSec(32e9));
  c.scheduling = node.get_choice("scheduler", {"per_core", "fair"}, "per_core") == "fair" ? CpuScheduling::fair
                                                                                      : CpuScheduling::per_core;
  c.balance_delay = node.get_quantity<Seconds>("balance_delay", Seconds(4e-3), false);
  if (ConfigNode costs = node.child("stage_costs"); costs.defined())
    for (const auto& k : costs.keys())
      c.stage_costs[k] = parse_stage_cost(costs.child(k));
  return c;
}

double corunning_efficiency(const CpuSpec& cpu, int busy) {
  if (cpu.cores <= 1)
    return 1.0;
  const int n = std::clamp(busy, 1, cpu.cores);
  return 1.0 - (1.0 - cpu.all_cores_efficiency) * (n - 1) / (cpu.cores - 1);
}

} // namespace mlsim
