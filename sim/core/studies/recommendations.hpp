// Recommendations: what-ifs that mlsim has simulated, ranked by predicted gain.
//
// Each candidate change (more cores, more workers, deeper prefetch, more
// parallel reads, augmentation on the accelerator, caching the dataset in RAM,
// faster storage, mixed precision, a larger per-device batch) is a list of
// scenario overrides, simulated in its own child process (all of them at once,
// see child_pool.hpp). Only changes that raise throughput by at least 1 % are
// kept, at most `max`, best first. Then the best change is tried together
// with each other candidate (fixing one bottleneck exposes the next); a pair
// is kept when it beats the best change alone by 1 %. The gain is the throughput ratio; when a
// change also changes the price per hour, the ratio of costs per sample.
// Input-side changes are tried when the input share of the step is >= 2 %,
// device-side ones (precision, batch) when device compute is >= 20 %.
//
// Assumption made visible in the change text: augmentation moved to the
// accelerator costs its host core-seconds divided by the ratio of the
// accelerator's fp32 vector peak to one host core (32 GFLOP/s), applied to
// the stored image's pixels (an over-estimate after a crop).
//
// `base` is the unchanged scenario's JSON report (see report_json.hpp). Call
// this before any simulation runs in this process: children are forked and
// SimGrid's engine must not have run in the parent.
#pragma once

#include "sim/core/run/metrics.hpp"
#include "sim/core/run/scenario.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace mlsim {

struct Recommendation {
  std::string change;                  // "+32 cores per node (32 -> 64)"
  std::vector<std::string> overrides;  // the --set assignments that make it (besides the run's own)
  double step_before = 0, step_after = 0;
  double stall_before = 0, stall_after = 0;
  double throughput_before = 0, throughput_after = 0;
  double cost_per_million_before = 0, cost_per_million_after = 0; // USD per 1M samples
  double gain = 1.0; // throughput ratio after/before (cost-per-sample ratio before/after when the price changes)
};

std::vector<Recommendation> simulate_recommendations(const std::string& scenario_file,
                                                     const std::vector<std::string>& overrides,
                                                     const Scenario& scenario, const RunMetrics& base,
                                                     size_t max = 5);

nlohmann::ordered_json recommendations_to_json(const std::vector<Recommendation>& recs);

} // namespace mlsim
