#include "sim/core/app/run_products.hpp"

#include "sim/core/app/report_text.hpp"
#include "sim/core/run/isolated.hpp"
#include "sim/core/run/metrics.hpp"
#include "sim/core/run/report_json.hpp"
#include "sim/core/run/simulation.hpp"
#include "sim/core/run/trace_json.hpp"
#include "sim/core/studies/cores_needed.hpp"
#include "sim/core/studies/recommendations.hpp"

#include <optional>

namespace mlsim {
namespace {

// The base run's products before the what-ifs.
struct BaseRun {
  nlohmann::ordered_json figures; // metrics_to_json
  std::string text;
  std::string trace;
  long simulations = 0; // simulate() calls that produced it: in the child, or in this process
};

BaseRun simulate_base(const Scenario& s, const RunRequest& r) {
  const long before = simulations_started();
  SimulationOptions options;
  options.record_trace = r.trace;
  SimulationOutput out = simulate(s, options);
  RunMetrics m = compute_metrics(s, out);
  BaseRun b;
  b.figures = metrics_to_json(m);
  if (r.text_report)
    b.text = render_text_report(s, m);
  if (r.trace)
    b.trace = render_chrome_trace(out.recorder);
  b.simulations = simulations_started() - before;
  return b;
}

// The same in a child, its products carried back as one JSON envelope (numbers round-trip exactly).
BaseRun simulate_base_in_child(const Scenario& s, const RunRequest& r) {
  auto envelope = nlohmann::ordered_json::parse(run_in_child([&] {
    BaseRun b = simulate_base(s, r);
    return nlohmann::ordered_json{
        {"figures", b.figures}, {"text", b.text}, {"trace", b.trace}, {"simulations", b.simulations}}.dump();
  }));
  return {envelope["figures"], envelope["text"].get<std::string>(), envelope["trace"].get<std::string>(),
          envelope["simulations"].get<long>()};
}

} // namespace

RunProducts produce_run(const RunRequest& r) {
  Scenario s = load_scenario_file(r.scenario, r.overrides);
  RunProducts p;
  const long before = simulations_started();
  const bool what_ifs = r.recommendations || r.cores_needed;
  BaseRun base = what_ifs ? simulate_base_in_child(s, r) : simulate_base(s, r);
  std::vector<Recommendation> recs;
  std::optional<CoresNeeded> cores;
  if (what_ifs) {
    RunMetrics m = metrics_from_json(base.figures);
    if (r.cores_needed)
      cores = find_cores_needed(r.scenario, r.overrides, s, m);
    if (r.recommendations)
      recs = simulate_recommendations(r.scenario, r.overrides, s, m);
  }
  p.doc = std::move(base.figures);
  p.doc["cores_needed"] = cores ? cores_needed_to_json(*cores) : nlohmann::ordered_json(nullptr);
  p.doc["recommendations"] = recommendations_to_json(recs);
  if (r.text_report)
    p.text = base.text + (cores ? render_cores_needed(*cores) : "") + render_recommendations(recs);
  p.trace = std::move(base.trace);
  // The base's simulations: the child's (what-ifs on) and any this process ran (off, or by mistake after
  // the child). The what-ifs' own children simulate variants, never the base.
  p.base_simulations = (what_ifs ? base.simulations : 0) + (simulations_started() - before);
  return p;
}

} // namespace mlsim
