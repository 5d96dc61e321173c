// `mlsim run` and `mlsim check`.
#include "sim/core/app/commands.hpp"
#include "sim/core/app/run_products.hpp"
#include "sim/core/base/atomic_file.hpp"
#include "sim/core/run/scenario.hpp"

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
    RunRequest request;
    request.scenario = args->scenario;
    request.overrides = args->overrides;
    request.text_report = !args->quiet;
    request.trace = trace_slot.has_value();
    request.recommendations = !args->no_recommendations;
    request.cores_needed = !args->no_cores_needed;
    RunProducts products = produce_run(request);
    if (json_slot)
      outputs.set(*json_slot, products.doc.dump(2) + "\n");
    if (trace_slot)
      outputs.set(*trace_slot, products.trace);
    outputs.commit();
    std::cout << products.text;
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
