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
  std::string scenario, target, out;
  std::vector<std::string> vary;
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

std::string keys_of(const RightsizeOptions& o) {
  std::string k;
  for (const auto& a : o.axes)
    k += (k.empty() ? "" : ", ") + a.key;
  return k;
}

std::string render_curve(const RightsizeOptions& o, const RightsizeResult& r) {
  std::string t = fmt::format("rightsize {} for {} ({} of {} candidate values simulated, {})\n", keys_of(o),
                              o.target.text, r.curve.size(), r.candidates, r.method);
  std::string head;
  for (size_t a = 0; a < o.axes.size(); ++a)
    head += fmt::format("  {:>12}", o.axes.size() == 1 ? "value" : o.axes[a].key.substr(o.axes[a].key.rfind('.') + 1));
  t += head + fmt::format("  {:>12}  {:>5}  {:>10}  {:>7}  {:>12}  {:>12}\n", o.target.figure, "meets", "step",
                          "stall", "samples/s", "USD/1M smp");
  for (const auto& c : r.curve) {
    std::string values;
    for (const auto& v : c.values)
      values += fmt::format("  {:>12}", v);
    if (!c.result.ok) {
      t += values + fmt::format("  error: {}\n", c.result.error);
      continue;
    }
    const RunMetrics& m = c.result.metrics;
    t += values + fmt::format("  {:>12}  {:>5}  {:>7.2f} ms  {:>5.1f} %  {:>12.1f}  {:>12.4g}\n",
                              figure_text(o.target.figure, *c.figure), c.meets ? "yes" : "no", m.step_mean * 1e3,
                              m.breakdown.input * 100, m.throughput, m.cost_per_million());
  }
  if (r.answer) {
    const auto& c = r.curve[*r.answer];
    std::string values;
    for (size_t a = 0; a < o.axes.size(); ++a)
      values += fmt::format("{}{} = {}", a ? ", " : "", o.axes[a].key, c.values[a]);
    t += fmt::format("smallest {} with {}: {} ({} = {})\n", keys_of(o), o.target.text,
                     o.axes.size() == 1 ? c.values[0] : values, o.target.figure, figure_text(o.target.figure, *c.figure));
  } else {
    t += fmt::format("no value of {} in the range meets {}\n", keys_of(o), o.target.text);
    if (r.limiter)
      t += fmt::format("at the largest values, {}\n", r.limiter->text);
  }
  return t;
}

std::string curve_csv(const RightsizeOptions& o, const RightsizeResult& r) {
  std::vector<std::string> keys;
  for (const auto& a : o.axes)
    keys.push_back(a.key);
  CsvRow header = sweep_header(keys);
  header.push_back("meets_target");
  std::string text = csv_line(header);
  for (size_t i = 0; i < r.curve.size(); ++i) {
    const auto& c = r.curve[i];
    CsvRow row = sweep_row(i, c.values, c.result.ok ? &c.result.metrics : nullptr, c.result.error);
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
              "  mlsim rightsize s.yaml --vary pipeline.workers=1..64 --target 'utilization>0.9' --out curve.csv\n"
              "  mlsim rightsize s.yaml --vary cores,prefetch --target 'stall<5%'   # cores 1..8x, prefetch 0..32\n"
              "When no value meets the target, the run at the largest values names what binds (a stage, the\n"
              "workers, reading, a link, or the prefetch depth) with its figures.");
  cmd->add_option("scenario", a->scenario, "Scenario YAML file")->required();
  cmd->add_option("--vary", a->vary,
                  "A key and its candidate values: KEY=LO..HI[:STEP] or KEY=V1,V2,...; KEY may be cores, workers or "
                  "prefetch, alone for a default range. Repeatable: the first is minimised, the others searched with it")
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
    o.axes = rightsize_axes(a->vary, load_scenario_file(a->scenario, a->overrides));
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
