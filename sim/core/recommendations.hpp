// Recommendations: what-ifs that mlsim has simulated, ranked by predicted gain.
//
// Each candidate change (more cores, deeper prefetch, more parallel reads,
// augmentation on the accelerator, caching, mixed precision, a larger
// per-device batch, faster storage) is applied as scenario overrides and
// simulated in its own child process; only changes that help are kept, at
// most `max` of them, best first. Nothing is reported that was not simulated.
// `base` is the unchanged scenario's JSON report (see report_json.hpp). Call
// this before any simulation runs in this process: children are forked and
// SimGrid's engine must not have run in the parent.
#pragma once

#include "sim/core/scenario.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace mlsim {

struct Recommendation {
  std::string change;                  // "+16 cores per node (32 -> 48)"
  std::vector<std::string> overrides;  // the --set assignments that make it
  double step_before = 0, step_after = 0;
  double stall_before = 0, stall_after = 0;
  double throughput_before = 0, throughput_after = 0;
  double cost_per_million_before = 0, cost_per_million_after = 0; // USD per 1M samples
};

std::vector<Recommendation> simulate_recommendations(const std::string& scenario_file,
                                                     const std::vector<std::string>& overrides,
                                                     const Scenario& scenario, const nlohmann::ordered_json& base,
                                                     size_t max = 5);

nlohmann::ordered_json recommendations_to_json(const std::vector<Recommendation>& recs);

} // namespace mlsim
