// cores_needed: the smallest number of CPU cores per accelerator for which the
// stall (input share of step time) is under 5 %, with this pipeline and
// hardware, found by re-simulating — together with the loader settings users
// change along with cores (workers, prefetch depth) when cores alone do not do it.
//
// The stall does not increase with cores, workers or prefetch depth (a
// property the tests check), so each search is a bisection. Phase 1 varies the
// cores of the node group that runs the pipeline (the trainer group with the
// fewest cores per node, or the
// data-service node group, whose node count is varied instead), the rest as
// written. When even `max_factor` times the cores leave a stall, the run at
// that point names its limiter (limiter.hpp) and phase 2 changes what it
// names: workers below the cores follow the cores (pytorch: per accelerator),
// and a `prefetch` limiter gets the smallest depth up to 32 that removes the
// stall at the most cores; then the cores are bisected again with those
// settings. Each probe is a full simulation in a child process. Whatever is
// not found is explained by the limiter of the last point tried.
#pragma once

#include "sim/core/run/metrics.hpp"
#include "sim/core/run/scenario.hpp"
#include "sim/core/studies/limiter.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mlsim {

struct CoresNeeded {
  bool found = false;
  int per_node = 0;              // cores (local) or service nodes (service placement)
  double per_accelerator = 0.0;  // CPU cores per accelerator
  double stall_at_answer = 0.0;
  int simulations = 0;
  std::string varied;            // the key that was varied
  std::vector<std::pair<std::string, std::string>> with; // loader settings changed with the cores (key, value)
  std::optional<Limiter> limiter; // what binds at the most cores of phase 1 (and of phase 2 if it failed)
  std::string note;              // why nothing was found, if so
};

inline constexpr double kStallTarget = 0.05;
inline constexpr int kMaxPrefetch = 32;

// The node group whose cores feed the pipeline, its `--set` key and its current value.
struct PipelineCores {
  size_t group = 0;
  bool service = false; // the data-service node count is the key
  std::string key;
  int current = 0;
};
PipelineCores pipeline_cores(const Scenario& scenario);

// Must run before any simulation in this process (children are forked).
CoresNeeded find_cores_needed(const std::string& file, const std::vector<std::string>& overrides,
                              const Scenario& scenario, const RunMetrics& base, int max_factor = 8);

nlohmann::ordered_json cores_needed_to_json(const CoresNeeded& c);

} // namespace mlsim
