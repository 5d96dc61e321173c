// cores_needed: the smallest number of CPU cores per accelerator for which the
// stall (input share of step time) is under 5 %, with this pipeline and
// hardware, found by re-simulating.
//
// The stall does not increase with cores (a property the tests check), so the
// search is a bisection on the cores of the node group that runs the pipeline
// (the trainer node, or the data-service node group, whose node count is
// varied instead). Each probe is a full simulation in a child process. When
// even `max_factor` times the cores leave a stall, more cores alone do not
// help (the bottleneck is elsewhere) and the result says so.
#pragma once

#include "sim/core/run/metrics.hpp"
#include "sim/core/run/scenario.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace mlsim {

struct CoresNeeded {
  bool found = false;
  int per_node = 0;              // cores (local) or service nodes (service placement)
  double per_accelerator = 0.0;  // CPU cores per accelerator
  double stall_at_answer = 0.0;
  int simulations = 0;
  std::string varied;            // the key that was varied
  std::string note;              // why nothing was found, if so
};

inline constexpr double kStallTarget = 0.05;

// Must run before any simulation in this process (children are forked).
CoresNeeded find_cores_needed(const std::string& file, const std::vector<std::string>& overrides,
                              const Scenario& scenario, const RunMetrics& base, int max_factor = 8);

nlohmann::ordered_json cores_needed_to_json(const CoresNeeded& c);

} // namespace mlsim
