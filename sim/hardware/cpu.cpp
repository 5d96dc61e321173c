#include "sim/hardware/cpu.hpp"

#include <algorithm>

namespace mlsim {

namespace {
// A cost term: default 0, valid range [0, max] (a slower stage cannot be simulated in finite work).
Seconds cost_term(const ConfigNode& node, const std::string& key, double max, const char* max_text) {
  Seconds v = node.get_quantity<Seconds>(key, Seconds(0.0), false);
  if (!(v.value() <= max))
    node.child(key).fail(std::string("a cost between 0 and ") + max_text, node.child(key).quoted());
  return v;
}
} // namespace

StageCost parse_stage_cost(const ConfigNode& node) {
  node.allow_only({"per_sample", "per_byte", "per_pixel", "r2", "reps", "spread", "source"});
  StageCost c;
  c.per_sample = cost_term(node, "per_sample", 3600.0, "1 h per sample");
  c.per_byte = cost_term(node, "per_byte", 1.0, "1 s per byte");
  c.per_pixel = cost_term(node, "per_pixel", 1.0, "1 s per pixel");
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
