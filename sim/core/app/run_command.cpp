// `mlsim run` and `mlsim check`.
#include "sim/core/base/atomic_file.hpp"
#include "sim/core/app/commands.hpp"
#include "sim/core/studies/cores_needed.hpp"
#include "sim/core/run/isolated.hpp"
#include "sim/core/run/metrics.hpp"
#include "sim/core/studies/recommendations.hpp"
#include "sim/core/run/report_json.hpp"
#include "sim/core/app/report_text.hpp"
#include "sim/core/run/simulation.hpp"
#include "sim/core/run/trace_json.hpp"

#include <iostream>
#include <memory>
#include <optional>

namespace mlsim {

namespace {
struct RunArgs {
  std::string scenario;
  std::vector<std::string> overrides;
  std::string json_out, trace_out;
  bool quiet = false;
  bool no_recommendations = false;
  bool no_cores_needed = false;
};
} // namespace

void add_run_command(CLI::App& app, CommandStatus& status) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* run = app.add_subcommand("run", "Simulate a scenario and print a profiler-style report");
  run->add_option("scenario", args->scenario, "Scenario YAML file")->required();
  run->add_option("--set", args->overrides, "Override a scenario key: path.to.key=value (repeatable)")
      ->type_name("KEY=VALUE");
  run->add_option("--json", args->json_out, "Write the figures as JSON to this file");
  run->add_option("--trace", args->trace_out, "Write a Chrome/Perfetto trace to this file");
  run->add_flag("--quiet", args->quiet, "Do not print the text report");
  run->add_flag("--no-recommendations", args->no_recommendations,
                "Skip the simulated what-ifs at the end of the report (faster)");
  run->add_flag("--no-cores-needed", args->no_cores_needed,
                "Skip the search for the CPU cores per accelerator that remove the stall (faster)");
  run->callback([args, &status] {
    // Every output is checked writable before anything is simulated, and all appear together at the end.
    OutputSet outputs;
    std::optional<size_t> json_slot, trace_slot;
    if (!args->json_out.empty())
      json_slot = outputs.add("--json", args->json_out);
    if (!args->trace_out.empty())
      trace_slot = outputs.add("--trace", args->trace_out);
    Scenario s = load_scenario_file(args->scenario, args->overrides);
    // What-ifs run in child processes, before this process starts its own engine.
    std::vector<Recommendation> recs;
    std::optional<CoresNeeded> cores;
    if (!args->no_recommendations || !args->no_cores_needed) {
      RunMetrics base = metrics_from_json(simulate_file_in_child(args->scenario, args->overrides));
      if (!args->no_cores_needed)
        cores = find_cores_needed(args->scenario, args->overrides, s, base);
      if (!args->no_recommendations)
        recs = simulate_recommendations(args->scenario, args->overrides, s, base);
    }
    SimulationOutput out = simulate(s);
    RunMetrics m = compute_metrics(s, out);
    auto doc = metrics_to_json(m);
    doc["cores_needed"] = cores ? cores_needed_to_json(*cores) : nlohmann::ordered_json(nullptr);
    doc["recommendations"] = recommendations_to_json(recs);
    if (json_slot)
      outputs.set(*json_slot, doc.dump(2) + "\n");
    if (trace_slot)
      outputs.set(*trace_slot, render_chrome_trace(out.recorder));
    outputs.commit();
    if (!args->quiet)
      std::cout << render_text_report(s, m) << (cores ? render_cores_needed(*cores) : "")
                << render_recommendations(recs);
    status.exit_code = 0;
  });
}

void add_check_command(CLI::App& app, CommandStatus&) {
  auto check_args = std::make_shared<RunArgs>();
  CLI::App* check = app.add_subcommand("check", "Validate a scenario without simulating it");
  check->add_option("scenario", check_args->scenario, "Scenario YAML file")->required();
  check->add_option("--set", check_args->overrides, "Override a scenario key: path.to.key=value (repeatable)")
      ->type_name("KEY=VALUE");
  check->callback([check_args] {
    Scenario s = load_scenario_file(check_args->scenario, check_args->overrides);
    std::cout << check_args->scenario << ": ok (" << s.total_accelerators() << " accelerators, "
              << s.nodes.size() << " node groups)\n";
  });
}

} // namespace mlsim
