#include "sim/core/studies/limiter.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace mlsim {
namespace {

std::string ms(double s) { return fmt::format("{:.2f} ms", s * 1e3); }
std::string pct(double f) { return fmt::format("{:.1f} %", f * 100); }

std::string rate(double bytes_per_s) {
  return bytes_per_s >= 1e9 ? fmt::format("{:.1f} GB/s", bytes_per_s / 1e9) : fmt::format("{:.1f} MB/s", bytes_per_s / 1e6);
}

struct CpuSide {
  double per_sample = 0;       // sum of the stages' x_i
  const StageFigure* costliest = nullptr;
  double workers = 0, cores = 0; // W and c of a node (of the pacing trainer group when several differ)
  double parallel = 0;         // min(W, c)
  bool workers_bound = false;  // W < c
  double period = 0;           // P for one step's samples
};

CpuSide cpu_side(const Scenario& sc, const RunMetrics& m) {
  CpuSide c;
  for (const auto& s : m.stages)
    if (s.cost_per_sample > 0) {
      c.per_sample += s.cost_per_sample;
      if (!c.costliest || s.cost_per_sample > c.costliest->cost_per_sample)
        c.costliest = &s;
    }
  // The pacing trainer group's workers and cores when several differ (its CPU paces the job).
  c.workers = m.workers_per_node;
  c.cores = m.worker_cores;
  if (m.node_groups.size() > 1) {
    c.workers = m.node_groups[m.pacing_group].workers_per_node;
    c.cores = m.node_groups[m.pacing_group].worker_cores;
  }
  c.workers_bound = c.workers < c.cores;
  c.parallel = std::min(c.workers, c.cores);
  const double samples = static_cast<double>(sc.pipeline.batch_size) * sc.trainer_node().accelerator_count;
  c.period = c.parallel > 0 ? c.per_sample * samples / c.parallel : 0;
  return c;
}

} // namespace

Limiter find_limiter(const Scenario& sc, const RunMetrics& m, double stall_target) {
  const double stall = m.pacing_stall();
  const double t_dev = m.step_mean * (1.0 - stall);
  const long samples = static_cast<long>(sc.pipeline.batch_size) * sc.trainer_node().accelerator_count;
  const CpuSide cpu = cpu_side(sc, m);
  if (stall < stall_target) {
    const bool host = m.bottleneck_kind == "host"; // the step's host-placed ops, not the device, pace it
    return {host ? "host" : "device", m.bottleneck_name, host ? m.bottleneck_utilization : m.accelerator_utilization,
            fmt::format("the input side does not limit the step (stall {} < {}); {} '{}' at {}", pct(stall),
                        pct(stall_target), m.bottleneck_kind, m.bottleneck_name, pct(m.bottleneck_utilization))};
  }

  // The binding candidates and their utilisations; the busiest wins.
  Limiter best{"", "", 0, ""};
  auto consider = [&](Limiter l) {
    if (l.utilization >= kBinds && l.utilization > best.utilization)
      best = std::move(l);
  };
  if (cpu.costliest) {
    std::string stages = cpu.costliest->cost_per_sample < cpu.per_sample
                             ? fmt::format("the CPU stages ({} the costliest at {}/sample)", cpu.costliest->name,
                                           ms(cpu.costliest->cost_per_sample))
                             : "stage " + cpu.costliest->name;
    std::string by = cpu.workers_bound ? fmt::format("{:g} workers (of {:g} cores)", cpu.workers, cpu.cores)
                                       : fmt::format("{:g} cores", cpu.cores);
    consider({cpu.workers_bound ? "workers" : "stage", cpu.workers_bound ? "pipeline.workers" : cpu.costliest->name,
              m.pipeline_cpu_utilization,
              fmt::format("the step is bound by {}: {}/sample x {} samples / {} = {} per step > {} of device work "
                          "per step (CPU stages {} used)",
                          stages, ms(cpu.per_sample), samples, by, ms(cpu.period), ms(t_dev),
                          pct(m.pipeline_cpu_utilization))});
  }
  for (const auto& s : m.stages)
    if (s.cost_per_sample == 0 && s.capacity_samples_per_s > 0) // a read stage: storage, NIC or RAM
      consider({"read", s.name, s.utilization,
                fmt::format("the step is bound by reading ({}): storage delivers {:.0f} samples/s, {} of it used",
                            s.name, s.capacity_samples_per_s, pct(s.utilization))});
  if (!m.slowest_link.name.empty())
    consider({"link", m.slowest_link.name, m.slowest_link.utilization,
              fmt::format("the step is bound by link {} ({}): {} of its {} used", m.slowest_link.name,
                          m.slowest_link.kind, pct(m.slowest_link.utilization),
                          rate(m.slowest_link.capacity_bytes_per_s))});
  if (!best.kind.empty())
    return best;

  // Capacity to spare everywhere, yet the step waits: batches are not ready in time.
  std::string depth = sc.pipeline.prefetch == 0 ? "prefetch 0 (each batch made on demand, after the step asks)"
                                                : fmt::format("prefetch depth {}", sc.pipeline.prefetch);
  std::string ahead = cpu.period > t_dev
                          ? fmt::format("; made ahead, the CPU stages would still take {} per step > {}: {} too",
                                        ms(cpu.period), ms(t_dev), cpu.workers_bound ? "more workers" : "more cores")
                          : "";
  std::string build = sc.pipeline.whole_batch_workers
                          ? fmt::format("; each worker builds a whole batch: {} x {} = {}", sc.pipeline.batch_size,
                                        ms(cpu.per_sample), ms(cpu.per_sample * sc.pipeline.batch_size))
                          : "";
  return {"prefetch", "pipeline.prefetch", m.pipeline_cpu_utilization,
          fmt::format("no capacity binds (CPU stages {} used: {}/sample x {} samples / {:g} = {} per step against {} "
                      "of device work; slowest link {} at {}) yet the step waits {} for input: batches are not made "
                      "early enough, the {} and {} workers limit it, not cores{}{}",
                      pct(m.pipeline_cpu_utilization), ms(cpu.per_sample), samples, cpu.parallel, ms(cpu.period),
                      ms(t_dev), m.slowest_link.name.empty() ? "-" : m.slowest_link.name,
                      pct(m.slowest_link.utilization), pct(stall), depth, cpu.workers, build, ahead)};
}

} // namespace mlsim
