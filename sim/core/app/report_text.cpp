#include "sim/core/app/report_text.hpp"

#include "sim/pipeline/steady_state.hpp"

#include "sim/core/base/units_parse.hpp"

#include <fmt/format.h>

namespace mlsim {

namespace {
std::string pct(double f) { return fmt::format("{:.1f} %", 100.0 * f); }
std::string ms(double s) { return format_seconds(Seconds(s)); }

// The group that paces a synchronous job, and what the others wait for it in the all-reduce.
template <class Line> void straggler_lines(const RunMetrics& m, Line&& line) {
  const NodeGroupFigure& slow = m.node_groups[m.pacing_group];
  const NodeGroupFigure* fastest = &slow;
  for (const auto& g : m.node_groups)
    if (g.own() < fastest->own())
      fastest = &g;
  if (slow.own() <= fastest->own() * (1 + 1e-3))
    line("  No node group paces the job: their own steps (without the all-reduce wait) agree within 0.1 %");
  else
    line(fmt::format("  Slowest node group '{}' ({} node{}) paces the job: its own step {} (input wait {}) vs {} "
                     "for '{}', +{}; the faster nodes wait {} per step in the all-reduce",
                     slow.name, slow.nodes, slow.nodes == 1 ? "" : "s", ms(slow.own()), ms(slow.input),
                     ms(fastest->own()), fastest->name,
                     pct(fastest->own() > 0 ? slow.own() / fastest->own() - 1.0 : 0.0),
                     ms(fastest->collective - slow.collective)));
  for (const auto& g : m.node_groups)
    line(fmt::format("    {:<20} {:>5} node{:<1}  step {}  input wait {}  device {}  all-reduce wait {}", g.name,
                     g.nodes, g.nodes == 1 ? "" : "s", ms(g.step), ms(g.input), ms(g.device_compute), ms(g.collective)));
}

} // namespace

std::string render_text_report(const Scenario& sc, const RunMetrics& m) {
  std::string r;
  auto line = [&](const std::string& s) { r += s + "\n"; };
  const NodeSpec& t = sc.trainer_node();
  std::string job;
  for (const NodeSpec* g : sc.trainer_groups())
    job += fmt::format("{}{} x {}", job.empty() ? "" : " + ", g->count, g->name);
  line(fmt::format("mlsim: {} — {} ({} accelerators), {} steps ({} warm-up), seed {}", m.scenario, job, m.ranks,
                   m.steps_requested, sc.run.warmup_steps, sc.run.seed));
  if (m.steps_simulated < m.steps_requested)
    line(fmt::format("(steady state reached: {} steps simulated, the other {} repeat the last {} exactly; set "
                     "run.fast_forward: false to simulate every step)",
                     m.steps_simulated, m.steps_requested - m.steps_simulated, SteadyStateMonitor::kWindow));
  if (m.simulated_nodes < t.count)
    line(fmt::format("(replica folding: {} of {} identical nodes simulated in detail; set run.replica_folding: false "
                     "to simulate all)",
                     m.simulated_nodes, t.count));
  else if (sc.trainer_groups().size() > 1)
    line(fmt::format("(no replica folding: the trainer nodes differ ({} groups), all {} simulated in detail)",
                     sc.trainer_groups().size(), m.simulated_nodes));
  line("");
  line("Performance summary");
  line(fmt::format("  Step time        mean {}   p50 {}   p99 {}", ms(m.step_mean), ms(m.step_p50), ms(m.step_p99)));
  const long accumulation = sc.model.gradient_accumulation;
  line(fmt::format("  Throughput       {:.1f} samples/s (global batch {}{})", m.throughput,
                   sc.pipeline.batch_size * accumulation * m.ranks,
                   accumulation > 1 ? fmt::format(": {} micro-batches of {} a step", accumulation,
                                                  sc.pipeline.batch_size)
                                    : std::string()));
  line(fmt::format("  Your program is {} input-bound: {} of step time is waiting for input",
                   m.input_bound == "highly" ? "HIGHLY" : m.input_bound == "moderately" ? "MODERATELY" : "NOT",
                   pct(m.breakdown.input)));
  if (m.node_groups.size() > 1)
    straggler_lines(m, line);
  line("");
  line("Step-time breakdown");
  const Breakdown& b = m.breakdown;
  line(fmt::format("  Input (waiting for data)       {:>8}", pct(b.input)));
  line(fmt::format("  Host compute                   {:>8}", pct(b.host_compute)));
  line(fmt::format("  Host-to-device copy            {:>8}", pct(b.h2d)));
  line(fmt::format("  Device compute                 {:>8}", pct(b.device_compute)));
  line(fmt::format("  Device collective comm.        {:>8}", pct(b.collective)));
  line(fmt::format("  Other                          {:>8}", pct(b.other)));
  line("");
  line(fmt::format("  Accelerator utilisation        {:>8}", pct(m.accelerator_utilization)));
  line(fmt::format("  Op placement                   host {}  device {}", pct(m.op_host), pct(m.op_device)));
  line(fmt::format("  Device compute precision       16-bit {}  32-bit {}", pct(m.precision_fp16),
                   pct(m.precision_fp32)));
  if (m.memory_capacity > 0)
    line(fmt::format("  Device memory                  {} of {}", format_bytes(Bytes(m.memory_footprint)),
                     format_bytes(Bytes(m.memory_capacity))));
  if (m.host_issue_s > 0)
    line(fmt::format("  Host issuing the device ops    {} a step; the device waits {} for it", ms(m.host_issue_s),
                     ms(m.host_issue_wait_s)));
  line("");
  line(fmt::format("Bottleneck: {} '{}' at {} utilisation", m.bottleneck_kind, m.bottleneck_name,
                   pct(m.bottleneck_utilization)));
  if (!m.stages.empty()) {
    line("");
    line(fmt::format("Input pipeline ({} workers per node): CPU stages together deliver up to {:.1f} samples/s, "
                     "{} used",
                     m.workers_per_node, m.pipeline_capacity, pct(m.pipeline_cpu_utilization)));
    const InputAnalysis& ia = m.input_analysis;
    line(fmt::format("  Per step: reading data {} on demand, {} in advance; preprocessing {} of CPU; "
                     "enqueuing to device {}",
                     ms(ia.read_on_demand), ms(ia.read_in_advance), ms(ia.preprocessing), ms(ia.enqueue)));
    line(fmt::format("  {:<20} {:>16} {:>12} {:>10}", "stage", "capacity/s", "utilisation", "CPU share"));
    for (const auto& s : m.stages)
      line(fmt::format("  {:<20} {:>16.1f} {:>12} {:>10}", s.name, s.capacity_samples_per_s, pct(s.utilization),
                       pct(s.busy_share)));
  }
  if (!m.transfer_chain.empty()) {
    line("");
    line("Transfer chain (storage -> accelerator)");
    for (const auto& l : m.transfer_chain)
      line(fmt::format("  {:<28} {:>14} {:>10}", l.name, format_rate(BytesPerSec(l.capacity_bytes_per_s)),
                       pct(l.utilization)));
    line(fmt::format("  Slowest link: {} at {}", m.slowest_link.name, pct(m.slowest_link.utilization)));
  }
  if (!m.top_ops.empty()) {
    line("");
    line("Top ops by time");
    for (const auto& o : m.top_ops) {
      line(fmt::format("  {:<44} {:<12} {:<12} {:>8}  util {}",
                       o.name.size() > 44 ? o.name.substr(0, 41) + "..." : o.name,
                       o.fusion.empty() ? o.kind : o.fusion, o.path, pct(o.time_fraction), pct(o.utilization)));
      if (!o.why.empty())
        line("      " + o.why);
    }
    for (const auto& [kind, share] : m.fusion_time)
      line(fmt::format("  Fused by the framework: {} of op time in {}s", pct(share), kind));
    if (m.matrix_path.time_fraction > 0)
      line(fmt::format("  On the {}: {} of device op time at {} utilisation ({} of its executed FLOPs useful)",
                       m.matrix_path.name, pct(m.matrix_path.time_fraction), pct(m.matrix_path.utilization),
                       pct(m.matrix_path.useful_flop_fraction)));
  }
  if (m.cost_per_hour > 0) {
    line("");
    line(fmt::format("Cost: {:.2f} USD/h, {:.4f} USD per step, {:.2f} USD per 1M samples", m.cost_per_hour,
                     m.cost_per_hour / 3600.0 * m.step_mean,
                     m.throughput > 0 ? m.cost_per_hour / 3600.0 * 1e6 / m.throughput : 0.0));
  }
  return r;
}

std::string render_cores_needed(const CoresNeeded& c) {
  std::string r = "\nCPU cores needed for a stall under 5 %";
  if (!c.found)
    return r + ": not reached (" + c.note + ")\n";
  std::string with;
  for (const auto& [key, value] : c.with)
    with += fmt::format(", {} = {}", key, value);
  r += fmt::format(": {:.1f} per accelerator ({} = {}{}; stall {}; {} extra simulations)\n", c.per_accelerator,
                   c.varied, c.per_node, with, pct(c.stall_at_answer), c.simulations);
  return c.with.empty() ? r : r + "  (" + c.note + ")\n";
}

std::string render_recommendations(const std::vector<Recommendation>& recs) {
  if (recs.empty())
    return "";
  std::string r = "\nRecommendations (each one simulated)\n";
  for (size_t i = 0; i < recs.size(); ++i) {
    const auto& x = recs[i];
    r += fmt::format("  {}. {}: step {} -> {}, stall {} -> {}", i + 1, x.change, ms(x.step_before), ms(x.step_after),
                     pct(x.stall_before), pct(x.stall_after));
    if (x.cost_per_million_before > 0)
      r += fmt::format(", {:.2f} -> {:.2f} USD per 1M samples", x.cost_per_million_before, x.cost_per_million_after);
    r += "\n";
  }
  return r;
}

} // namespace mlsim
