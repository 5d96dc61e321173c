#include "sim/core/studies/sweep_simulate.hpp"

#include "sim/core/studies/child_pool.hpp"
#include "sim/core/base/errors.hpp"
#include "sim/core/run/metrics.hpp"
#include "sim/core/run/report_json.hpp"
#include "sim/core/run/simulation.hpp"

namespace mlsim {

void simulate_variants(const std::string& file, const std::vector<std::vector<std::string>>& variants,
                       const std::vector<size_t>& which, int jobs,
                       const std::function<void(size_t, const VariantResult&)>& on_done) {
  run_in_children(
      which, jobs,
      [&](size_t i) {
        Scenario s = load_scenario_file(file, variants[i]);
        SimulationOutput out = simulate(s);
        return metrics_to_json(compute_metrics(s, out)).dump();
      },
      [&](size_t i, const ChildOutcome& outcome) {
        VariantResult r;
        if (outcome.ok()) {
          try {
            r.metrics = metrics_from_json(nlohmann::ordered_json::parse(outcome.text));
            r.ok = true;
          } catch (const std::exception& e) {
            r.error = std::string("unreadable report from the simulation process: ") + e.what();
          }
        } else {
          r.error = outcome.text;
        }
        on_done(i, r);
      });
}

std::vector<VariantResult> simulate_variants(const std::string& file,
                                             const std::vector<std::vector<std::string>>& variants, int jobs) {
  std::vector<VariantResult> results(variants.size());
  std::vector<size_t> all(variants.size());
  for (size_t i = 0; i < all.size(); ++i)
    all[i] = i;
  simulate_variants(file, variants, all, jobs, [&](size_t i, const VariantResult& r) { results[i] = r; });
  return results;
}

void validate_variants(const std::string& file, const std::vector<std::vector<std::string>>& variants) {
  ConfigNode root = ConfigNode::load_file(file); // parse the file once, not once per point
  for (const auto& v : variants) {
    try {
      parse_scenario(v.empty() ? root : ConfigNode::with_overrides(root, v)); // infeasible points: error rows
    } catch (const InputError& e) {
      std::string which;
      for (const auto& o : v)
        which += (which.empty() ? "" : ", ") + o;
      throw InputError("with " + (which.empty() ? std::string("no overrides") : which) + ": " + e.what());
    }
  }
}

} // namespace mlsim
