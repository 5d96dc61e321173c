#include "sim/core/studies/cores_needed.hpp"

#include "sim/core/run/isolated.hpp"
#include "sim/core/run/report_json.hpp"

#include <fmt/format.h>

#include <map>

namespace mlsim {

CoresNeeded find_cores_needed(const std::string& file, const std::vector<std::string>& overrides,
                              const Scenario& sc, const RunMetrics& base, int max_factor) {
  CoresNeeded r;
  bool service = sc.pipeline.placement == PipelinePlacement::service;
  size_t group = 0;
  for (size_t i = 0; i < sc.nodes.size(); ++i)
    if (service ? sc.nodes[i].name == sc.pipeline.service_node : (sc.nodes[i].role == NodeRole::trainer &&
                                                                  sc.nodes[i].accelerator_count > 0))
      group = i;
  const NodeSpec& node = sc.nodes[group];
  r.varied = "hardware.nodes." + std::to_string(group) + (service ? ".count" : ".cpu.cores");
  int current = service ? node.count : node.cpu.cores;
  const NodeSpec& trainer = sc.trainer_node();
  double accelerators = service ? sc.total_accelerators() : trainer.accelerator_count;
  auto per_accelerator = [&](int v) {
    return service ? static_cast<double>(v) * node.cpu.cores / accelerators : static_cast<double>(v) / accelerators;
  };

  std::map<int, double> stall_of{{current, base.breakdown.input}};
  auto stall = [&](int v) {
    auto it = stall_of.find(v);
    if (it != stall_of.end())
      return it->second;
    auto point = overrides;
    point.push_back(r.varied + "=" + std::to_string(v));
    double s = metrics_from_json(simulate_file_in_child(file, point)).breakdown.input;
    ++r.simulations;
    stall_of[v] = s;
    return s;
  };

  int lo = 0, hi = current; // invariant: stall(hi) < target; lo fails or is 0
  if (stall(current) >= kStallTarget) {
    int top = std::min(current * max_factor, service ? 512 : 4096);
    if (stall(top) >= kStallTarget) {
      r.note = fmt::format("more cores alone do not remove the stall: with {} ({} per accelerator) it is still "
                           "{:.1f} %; the bottleneck is elsewhere",
                           top, per_accelerator(top), 100.0 * stall(top));
      return r;
    }
    lo = current;
    hi = top;
  }
  while (hi - lo > 1) {
    int mid = lo + (hi - lo) / 2;
    if (stall(mid) < kStallTarget)
      hi = mid;
    else
      lo = mid;
  }
  r.found = true;
  r.per_node = hi;
  r.per_accelerator = per_accelerator(hi);
  r.stall_at_answer = stall(hi);
  return r;
}

nlohmann::ordered_json cores_needed_to_json(const CoresNeeded& c) {
  nlohmann::ordered_json j;
  j["found"] = c.found;
  j["varied"] = c.varied;
  j["per_node"] = c.found ? nlohmann::ordered_json(c.per_node) : nlohmann::ordered_json(nullptr);
  j["per_accelerator"] = c.found ? nlohmann::ordered_json(c.per_accelerator) : nlohmann::ordered_json(nullptr);
  j["stall_target"] = kStallTarget;
  j["stall_at_answer"] = c.found ? nlohmann::ordered_json(c.stall_at_answer) : nlohmann::ordered_json(nullptr);
  j["simulations"] = c.simulations;
  if (!c.note.empty())
    j["note"] = c.note;
  return j;
}

} // namespace mlsim
