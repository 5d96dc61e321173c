// `mlsim rightsize`: prints the curve it simulated and the smallest value that
// meets the target; `--out` writes the curve as sweep rows plus `meets_target`.
#include "sim/core/base/atomic_file.hpp"
#include "sim/core/studies/child_pool.hpp"
#include "sim/core/app/commands.hpp"
#include "sim/core/base/errors.hpp"
#include "sim/core/studies/rightsize.hpp"
#include "sim/core/studies/sweep_row.hpp"

#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <optional>

namespace mlsim {
namespace {

struct RightsizeArgs {
  std::string scenario, vary, target, out;
  std::vector<std::string> overrides;
  int jobs = 0;
};

std::string figure_text(const std::string& figure, double v) {
  if (figure == "step_time" || figure == "step_time_p99")
    return fmt::format("{:.2f} ms", v * 1e3);
  if (figure == "stall" || figure == "utilization")
    return fmt::format("{:.1f} %", v * 100);
  return fmt::format("{:.4g}", v);
}

std::string render_curve(const RightsizeOptions& o, const RightsizeResult& r) {
  std::string t = fmt::format("rightsize {} for {} ({} of {} candidate values simulated, {})\n", o.axis.key,
                              o.target.text, r.curve.size(), r.candidates, r.method);
  t += fmt::format("  {:>12}  {:>12}  {:>5}  {:>10}  {:>7}  {:>12}  {:>12}\n", "value", o.target.figure, "meets",
                   "step", "stall", "samples/s", "USD/1M smp");
  for (const auto& c : r.curve) {
    if (!c.result.ok) {
      t += fmt::format("  {:>12}  error: {}\n", c.value, c.result.error);
      continue;
    }
    const RunMetrics& m = c.result.metrics;
    t += fmt::format("  {:>12}  {:>12}  {:>5}  {:>7.2f} ms  {:>5.1f} %  {:>12.1f}  {:>12.4g}\n", c.value,
                     figure_text(o.target.figure, *c.figure), c.meets ? "yes" : "no",
                     m.step_mean * 1e3, m.breakdown.input * 100, m.throughput, m.cost_per_million());
  }
  if (r.answer) {
    const auto& c = r.curve[*r.answer];
    t += fmt::format("smallest {} with {}: {} ({} = {})\n", o.axis.key, o.target.text, c.value, o.target.figure,
                     figure_text(o.target.figure, *c.figure));
  } else {
    t += fmt::format("no value of {} in the range meets {}\n", o.axis.key, o.target.text);
  }
  return t;
}

std::string curve_csv(const RightsizeOptions& o, const RightsizeResult& r) {
  CsvRow header = sweep_header({o.axis.key});
  header.push_back("meets_target");
  std::string text = csv_line(header);
  for (const auto& c : r.curve) {
    CsvRow row = sweep_row(c.index, {c.value}, c.result.ok ? &c.result.metrics : nullptr, c.result.error);
    row.push_back(c.result.ok ? (c.meets ? "1" : "0") : "");
    text += csv_line(row);
  }
  return text;
}

} // namespace

void add_rightsize_command(CLI::App& app, CommandStatus& status) {
  auto a = std::make_shared<RightsizeArgs>();
  CLI::App* cmd = app.add_subcommand("rightsize", "Find the smallest value of a key that meets a target");
  cmd->footer("Targets: FIGURE<VALUE, FIGURE<=VALUE, FIGURE>VALUE, FIGURE>=VALUE with FIGURE one of step_time,\n"
              "step_time_p99, throughput, stall, utilization, cost_per_step, cost_per_epoch, cost_per_million;\n"
              "stall and utilization are fractions (0.05 or 5%), step times take units (150 ms).\n"
              "Search: k-ary bisection (k = --jobs) while the figures seen are monotone in the value, a scan\n"
              "of every value otherwise. Exit status 3 when no value in the range meets the target.\n"
              "Examples:\n"
              "  mlsim rightsize scenarios/quickstart.yaml --vary hardware.nodes.0.cpu.cores=8..128 --target 'stall<0.05'\n"
              "  mlsim rightsize s.yaml --vary pipeline.workers=1..64 --target 'utilization>0.9' --out curve.csv");
  cmd->add_option("scenario", a->scenario, "Scenario YAML file")->required();
  cmd->add_option("--vary", a->vary, "The key and its candidate values: KEY=LO..HI[:STEP] or KEY=V1,V2,...")
      ->type_name("KEY=VALUES")
      ->required();
  cmd->add_option("--target", a->target, "What the run must meet, e.g. 'stall<0.05'")->required();
  cmd->add_option("--set", a->overrides, "Override a key at every point: path.to.key=value (repeatable)")
      ->type_name("KEY=VALUE");
  cmd->add_option("--jobs,-j", a->jobs, "Simulations at once (default: the CPUs this process may use)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--out,-o", a->out, "Write the simulated curve as CSV (sweep columns + meets_target)");
  cmd->callback([a, &status] {
    RightsizeOptions o;
    o.scenario = a->scenario;
    o.base_overrides = a->overrides;
    o.axis = parse_axis(a->vary);
    o.target = parse_target(a->target);
    o.jobs = a->jobs > 0 ? a->jobs : available_cpus();
    OutputSet outputs; // checked before the search simulates anything
    std::optional<size_t> curve = a->out.empty() ? std::nullopt : std::optional<size_t>(outputs.add("--out", a->out));
    RightsizeResult r = rightsize(o);
    if (curve) {
      outputs.set(*curve, curve_csv(o, r));
      outputs.commit();
    }
    std::cout << render_curve(o, r);
    status.exit_code = r.answer ? 0 : 3;
  });
}

} // namespace mlsim
