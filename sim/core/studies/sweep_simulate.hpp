// Simulating many variants of one scenario file, several at a time.
//
// Each variant is a list of overrides on the file (like `mlsim run --set`);
// each runs `load_scenario_file` + simulate + compute_metrics in its own child
// (see child_pool.hpp), so the JSON is byte-for-byte what `mlsim run --json`
// writes, minus the recommendations. The caller must not have run a
// simulation in this process.
#pragma once

#include "sim/core/run/metrics.hpp"
#include "sim/core/run/scenario.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

namespace mlsim {

struct VariantResult {
  bool ok = false;
  RunMetrics metrics; // when ok
  std::string error;             // when not
};

// Simulates variants[i] for each i in `which`, `jobs` at a time; on_done(i, result)
// runs in this process in completion order.
void simulate_variants(const std::string& file, const std::vector<std::vector<std::string>>& variants,
                       const std::vector<size_t>& which, int jobs,
                       const std::function<void(size_t, const VariantResult&)>& on_done);

// All of them; results in the order of `variants`.
std::vector<VariantResult> simulate_variants(const std::string& file,
                                             const std::vector<std::vector<std::string>>& variants, int jobs);

// Parses every variant (no simulation) so that a typo fails before any child
// starts: InputError prefixed with the variant's overrides.
void validate_variants(const std::string& file, const std::vector<std::vector<std::string>>& variants);

} // namespace mlsim
