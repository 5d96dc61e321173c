#include "sim/core/run/metrics.hpp"

#include "sim/hardware/platform.hpp"
#include "sim/pipeline/pipeline_counters.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace mlsim {

std::string classify_input_bound(double input_share) {
  if (input_share >= 0.20)
    return "highly";
  if (input_share >= 0.05)
    return "moderately";
  return "not";
}

double percentile(std::vector<double> values, double p) {
  if (values.empty())
    return 0.0;
  std::sort(values.begin(), values.end());
  double rank = std::ceil(p / 100.0 * static_cast<double>(values.size()));
  size_t idx = rank < 1 ? 0 : static_cast<size_t>(rank) - 1;
  return values[std::min(idx, values.size() - 1)];
}

namespace {

// Cores and speed available to the pipeline workers of one node of trainer group `t`.
std::pair<double, double> worker_cores(const Scenario& sc, const NodeSpec& t) {
  if (sc.pipeline.placement == PipelinePlacement::service) {
    const NodeSpec* svc = sc.find_node(sc.pipeline.service_node);
    return {static_cast<double>(svc->cpu.cores * svc->count), svc->cpu.core_speed};
  }
  return {static_cast<double>(t.cpu.cores), t.cpu.core_speed};
}

// What the read stage of one node of group `t` can move, in bytes/s: RAM when reads come from the cache,
// its share of the remote storage, or its disk.
double read_bytes_per_s(const Scenario& sc, const NodeSpec& t, bool from_ram) {
  const double trainer_nodes = sc.trainer_nodes();
  const double mean_size = sc.dataset.sample_size.mean().value();
  if (from_ram)
    return t.ram.bandwidth.value();
  if (sc.dataset.location == DataLocation::remote)
    return std::min({sc.storage.bandwidth.value() / trainer_nodes,
                     sc.storage.random_read_iops / trainer_nodes * mean_size, t.nic.bandwidth.value()});
  for (const auto& d : t.disks)
    if (d.name == sc.dataset.disk)
      return d.throughput_for_files(Bytes(mean_size)).value();
  return 0.0;
}

void stage_figures(const Scenario& sc, const SimulationOutput& out, RunMetrics& m) {
  const Recorder& rec = out.recorder;
  const auto groups = sc.trainer_groups();
  auto [cores, speed] = worker_cores(sc, *groups.front());
  int trainer_nodes = sc.trainer_nodes();
  double service_share = sc.pipeline.placement == PipelinePlacement::service ? 1.0 / trainer_nodes : 1.0;
  // Per node, the slowest group's: every node delivers the same batches per step.
  double concurrency = 1e300;
  for (size_t g = 0; g < groups.size(); ++g) {
    auto [c, v] = worker_cores(sc, *groups[g]);
    const double workers = out.groups[g].workers_per_node;
    concurrency = std::min(concurrency, std::min(workers, c * service_share) * v);
  }
  double total_core_seconds = 0;
  for (const auto& st : sc.pipeline.stages)
    total_core_seconds += rec.counter(pipeline_counters::stage_core_seconds(st.name));
  total_core_seconds += rec.counter(pipeline_counters::collate_core_seconds());
  double samples_total = m.samples_consumed;
  m.worker_cores = cores * service_share;

  // Read: storage (or RAM when cached) delivering files of the mean stored size.
  double mean_size = sc.dataset.sample_size.mean().value();
  for (const auto& st : sc.pipeline.stages) {
    StageFigure f;
    f.name = st.name;
    if (st.kind == StageKind::read) {
      double storage_bytes = rec.counter(pipeline_counters::read_storage_bytes()), ram_bytes = rec.counter(pipeline_counters::read_ram_bytes());
      double cap_bps = 1e300;
      for (const NodeSpec* t : groups)
        cap_bps = std::min(cap_bps, read_bytes_per_s(sc, *t, ram_bytes > storage_bytes));
      f.capacity_samples_per_s = cap_bps / mean_size * trainer_nodes;
      f.busy_share = 0;
    } else {
      double cs = rec.counter(pipeline_counters::stage_core_seconds(st.name));
      double n = rec.counter(pipeline_counters::stage_samples(st.name));
      if (n <= 0 || cs <= 0)
        continue;
      f.capacity_samples_per_s = concurrency / (cs / n) * trainer_nodes;
      f.cost_per_sample = cs / n / speed;
      f.busy_share = total_core_seconds > 0 ? cs / total_core_seconds : 0;
    }
    f.utilization = f.capacity_samples_per_s > 0 ? std::min(1.0, m.throughput / f.capacity_samples_per_s) : 0;
    m.stages.push_back(f);
  }
  double per_sample_total = 0;
  for (const auto& st : sc.pipeline.stages) {
    double n = rec.counter(pipeline_counters::stage_samples(st.name));
    if (n > 0)
      per_sample_total += rec.counter(pipeline_counters::stage_core_seconds(st.name)) / n;
  }
  double collate = rec.counter(pipeline_counters::collate_core_seconds());
  double batches_made = rec.counter(pipeline_counters::batches());
  if (collate > 0 && batches_made > 0)
    per_sample_total += collate / (batches_made * static_cast<double>(sc.pipeline.batch_size));
  if (per_sample_total > 0) {
    m.pipeline_capacity = concurrency / per_sample_total * trainer_nodes;
    m.pipeline_cpu_utilization = std::min(1.0, m.throughput / m.pipeline_capacity);
  }
  if (collate > 0 && samples_total > 0) {
    StageFigure f;
    f.name = "collate";
    double batches = rec.counter(pipeline_counters::batches());
    double per_sample = collate / (batches * static_cast<double>(sc.pipeline.batch_size));
    f.capacity_samples_per_s = concurrency / per_sample * trainer_nodes;
    f.cost_per_sample = per_sample / speed;
    f.utilization = std::min(1.0, m.throughput / f.capacity_samples_per_s);
    f.busy_share = collate / total_core_seconds;
    m.stages.push_back(f);
  }
}

// The input analysis reads the first trainer node: its first accelerator's waits for input and the
// periods during which any of the node's reads is in progress.
std::string first_trainer_node(const Scenario& sc) { return node_instance_name(sc.trainer_node(), 0); }

void input_analysis(const Scenario& sc, const SimulationOutput& out, RunMetrics& m) {
  const Recorder& rec = out.recorder;
  const NodeSpec& t = sc.trainer_node();
  double steady_start = 1e300;
  long steps = 0;
  std::vector<std::pair<double, double>> waits; // rank 0's, in time order (its steps are)
  for (const auto& r : rec.steps())
    if (r.rank == 0 && r.step >= sc.run.warmup_steps && r.end <= out.simulated_end_time) { // simulated, not fast-forwarded
      steady_start = std::min(steady_start, r.start);
      ++steps;
      m.input_analysis.enqueue += r.h2d;
      waits.emplace_back(r.start, r.start + r.input);
    }
  if (steps == 0)
    return;
  // Concurrent readers: the wall time during which any read is in progress (reads still in progress
  // when the simulation ends count until then).
  const BusyPeriods* reading = rec.find_busy(pipeline_busy::reads(first_trainer_node(sc)));
  std::vector<std::pair<double, double>> periods;
  if (reading) {
    periods = reading->periods();
    if (reading->open())
      periods.back().second = std::max(periods.back().second, out.simulated_end_time);
  }
  for (auto [a, b] : periods) {
    if (b <= steady_start)
      continue;
    a = std::max(a, steady_start);
    double overlap = 0;
    auto it = std::upper_bound(waits.begin(), waits.end(), std::make_pair(a, 1e300));
    if (it != waits.begin())
      --it;
    for (; it != waits.end() && it->first < b; ++it)
      overlap += std::max(0.0, std::min(b, it->second) - std::max(a, it->first));
    m.input_analysis.read_on_demand += overlap;
    m.input_analysis.read_in_advance += (b - a) - overlap;
  }
  double core_seconds = rec.counter(pipeline_counters::collate_core_seconds());
  for (const auto& st : sc.pipeline.stages)
    core_seconds += rec.counter(pipeline_counters::stage_core_seconds(st.name));
  auto n = static_cast<double>(steps);
  m.input_analysis.read_on_demand /= n;
  m.input_analysis.read_in_advance /= n;
  m.input_analysis.enqueue /= n;
  // Counters cover the delivered batches of every simulated node; a node's step takes one per accelerator.
  double batches = rec.counter(pipeline_counters::batches());
  if (batches > 0)
    m.input_analysis.preprocessing = core_seconds * t.accelerator_count / batches;
}

void transfer_chain(const Scenario& sc, const SimulationOutput& out, RunMetrics& m) {
  const Recorder& rec = out.recorder;
  double T = out.end_time;
  const NodeSpec& t = sc.trainer_node();
  const std::string node0 = first_trainer_node(sc);
  double nodes = out.simulated_nodes; // read counters cover the simulated nodes
  auto add_link = [&](const std::string& link_name, const std::string& shown) {
    for (const auto& l : out.links)
      if (l.name == link_name) {
        double util = T > 0 ? l.bytes / (l.capacity * T) : 0;
        m.transfer_chain.push_back({shown.empty() ? l.name : shown, l.kind, l.capacity, std::min(1.0, util)});
      }
  };
  if (sc.dataset.location == DataLocation::remote)
    add_link("storage.egress", "");
  if (sc.dataset.location == DataLocation::local) {
    for (const auto& d : t.disks)
      if (d.name == sc.dataset.disk) {
        double cap = d.throughput_for_files(sc.dataset.sample_size.mean()).value();
        double bytes = rec.counter(pipeline_counters::read_storage_bytes()) / nodes;
        m.transfer_chain.push_back({node0 + "." + d.name, "disk", cap, T > 0 ? std::min(1.0, bytes / (cap * T)) : 0});
      }
  }
  if (sc.dataset.location == DataLocation::remote || sc.pipeline.placement == PipelinePlacement::service)
    add_link(node0 + ".nic", "");
  double ram_bytes = rec.counter(pipeline_counters::read_ram_bytes()) / nodes;
  if (ram_bytes > 0 || !t.pcie.pinned) {
    double cap = t.ram.bandwidth.value();
    m.transfer_chain.push_back({node0 + ".ram", "ram", cap, T > 0 ? std::min(1.0, ram_bytes / (cap * T)) : 0});
  }
  add_link(node0 + ".pcie-switch0", "");
  add_link(node0 + ".gpu0.pcie", "");
}

void op_figures(const SimulationOutput& out, RunMetrics& m) {
  const StepPlan& plan = out.plan;
  double device = 0, host = 0, dev16 = 0;
  for (const auto& op : plan.ops) {
    if (op.placement == OpPlacement::host) {
      host += op.duration.value();
    } else {
      device += op.duration.value();
      if (op.sixteen_bit)
        dev16 += op.duration.value();
    }
  }
  m.op_device = device + host > 0 ? device / (device + host) : 1.0;
  m.op_host = device + host > 0 ? host / (device + host) : 0.0;
  m.precision_fp16 = device > 0 ? dev16 / device : 0.0;
  m.precision_fp32 = device > 0 ? 1.0 - m.precision_fp16 : 0.0;
  std::vector<OpFigure> ops;
  double total = device + host;
  for (const auto& op : plan.ops)
    ops.push_back({op.name, op.kind, op.path, total > 0 ? op.duration.value() / total : 0, op.utilization,
                   op.executed_flops.value() > 0 ? op.flops.value() / op.executed_flops.value() : 1.0, op.fusion,
                   op.why, op.fused});
  std::stable_sort(ops.begin(), ops.end(),
                   [](const OpFigure& a, const OpFigure& b) { return a.time_fraction > b.time_fraction; });
  if (ops.size() > 10)
    ops.resize(10);
  m.top_ops = ops;
  for (const auto& op : plan.ops)
    if (!op.fusion.empty() && total > 0)
      m.fusion_time[op.fusion] += op.duration.value() / total;
  m.memory_footprint = plan.memory_footprint.value();
  m.memory_capacity = plan.memory_capacity.value();
  m.host_issue_s = plan.host_issue.value();
  m.host_issue_wait_s = plan.host_issue_wait.value();
}

void matrix_path_figure(const Scenario& sc, const SimulationOutput& out, RunMetrics& m) {
  MatrixPathFigure& f = m.matrix_path;
  f.name = sc.trainer_node().accelerator.matrix_path_name();
  double useful = 0, executed = 0, peak_time = 0, time = 0, device = 0;
  for (const auto& op : out.plan.ops) {
    if (op.placement != OpPlacement::device)
      continue;
    device += op.duration.value();
    if (op.path != f.name || op.utilization <= 0)
      continue;
    useful += op.flops.value();
    executed += op.executed_flops.value();
    peak_time += op.flops.value() / op.utilization; // duration x peak
    time += op.duration.value();
  }
  f.utilization = peak_time > 0 ? useful / peak_time : 0;
  f.useful_flop_fraction = executed > 0 ? useful / executed : 1;
  f.time_fraction = device > 0 ? time / device : 0;
}

void bottleneck(const Scenario& sc, const SimulationOutput& out, RunMetrics& m) {
  // The busiest resource names the bottleneck; the accelerator wins ties.
  m.bottleneck_kind = "device";
  m.bottleneck_name = sc.trainer_node().accelerator.name;
  m.bottleneck_utilization = m.accelerator_utilization;
  double best = m.accelerator_utilization + 1e-9;
  // Host-placed ops (the step's own CPU compute) busier than the device: the trainer's CPU paces the step.
  if (m.breakdown.host_compute > best) {
    best = m.breakdown.host_compute;
    m.bottleneck_kind = "host";
    m.bottleneck_name = node_instance_name(sc.trainer_node(), 0) + ".cpu"; // as the platform names the host
    m.bottleneck_utilization = m.breakdown.host_compute;
  }
  // The host issuing the device's ops (step_graph/host_issue.hpp) busier than the device: the framework's
  // Python thread paces the step.
  const double issuing = m.step_mean > 0 ? m.host_issue_s / m.step_mean : 0.0;
  if (issuing > best) {
    best = issuing;
    m.bottleneck_kind = "host";
    m.bottleneck_name = node_instance_name(sc.trainer_node(), 0) + ".cpu";
    m.bottleneck_utilization = issuing;
  }
  // The CPU stages share the workers' cores: their joint utilisation, named after the costliest stage.
  const StageFigure* costliest = nullptr;
  for (const auto& s : m.stages)
    if (s.busy_share > 0 && (!costliest || s.busy_share > costliest->busy_share))
      costliest = &s;
  if (costliest && m.pipeline_cpu_utilization > best) {
    best = m.pipeline_cpu_utilization;
    m.bottleneck_kind = "stage";
    m.bottleneck_name = costliest->name;
    m.bottleneck_utilization = m.pipeline_cpu_utilization;
  }
  // Reading is the storage side of the chain: named by its link.
  if (m.slowest_link.utilization > best) {
    best = m.slowest_link.utilization;
    m.bottleneck_kind = "link";
    m.bottleneck_name = m.slowest_link.name;
    m.bottleneck_utilization = m.slowest_link.utilization;
  }
  // Exposed gradient communication larger than any other part: the collective's links. With several
  // trainer groups, the pacing group's parts: the others' all-reduce wait is waiting for it.
  Breakdown parts = m.breakdown;
  if (m.node_groups.size() > 1 && m.node_groups[m.pacing_group].step > 0) {
    const NodeGroupFigure& g = m.node_groups[m.pacing_group];
    parts.collective = g.collective / g.step;
    parts.device_compute = g.device_compute / g.step;
    parts.input = g.input / g.step;
    parts.h2d = g.h2d / g.step;
  }
  if (parts.collective > std::max({parts.device_compute, parts.input, parts.h2d})) {
    double util = 0;
    std::string name;
    for (const auto& l : out.links)
      if ((l.kind == "nic" || l.kind == "nvlink") && out.end_time > 0) {
        double u = std::min(1.0, l.bytes / (2.0 * l.capacity * out.end_time));
        if (u > util) {
          util = u;
          name = l.name;
        }
      }
    if (!name.empty()) {
      m.bottleneck_kind = "link";
      m.bottleneck_name = name;
      m.bottleneck_utilization = util;
    }
  }
}

// Per trainer group: the means of its ranks' steady (rank, step) records, and the group that paces the job.
void node_group_figures(const Scenario& sc, const SimulationOutput& out, RunMetrics& m) {
  std::vector<size_t> group_of_rank(static_cast<size_t>(std::max(0, out.simulated_ranks)), out.groups.size());
  for (size_t g = 0; g < out.groups.size(); ++g)
    for (int r = 0; r < out.groups[g].ranks; ++r)
      group_of_rank.at(static_cast<size_t>(out.groups[g].first_rank + r)) = g;
  const auto groups = sc.trainer_groups();
  std::vector<NodeGroupFigure> figs(out.groups.size());
  std::vector<double> records(out.groups.size(), 0.0);
  for (const auto& r : out.recorder.steps()) {
    if (r.step < sc.run.warmup_steps || r.rank < 0 || static_cast<size_t>(r.rank) >= group_of_rank.size())
      continue;
    size_t g = group_of_rank[static_cast<size_t>(r.rank)];
    if (g >= figs.size())
      continue;
    NodeGroupFigure& f = figs[g];
    f.step += r.end - r.start;
    f.input += r.input;
    f.host_compute += r.host_compute;
    f.h2d += r.h2d;
    f.device_compute += r.device_compute;
    f.collective += r.collective;
    records[g] += 1;
  }
  for (size_t g = 0; g < figs.size(); ++g) {
    NodeGroupFigure& f = figs[g];
    const double n = std::max(1.0, records[g]);
    f.name = out.groups[g].name;
    f.nodes = out.groups[g].nodes;
    f.workers_per_node = out.groups[g].workers_per_node;
    f.worker_cores = worker_cores(sc, *groups[g]).first *
                     (sc.pipeline.placement == PipelinePlacement::service ? 1.0 / sc.trainer_nodes() : 1.0);
    for (double* v : {&f.step, &f.input, &f.host_compute, &f.h2d, &f.device_compute, &f.collective})
      *v /= n;
    if (f.own() > figs[m.pacing_group].own())
      m.pacing_group = g;
  }
  m.node_groups = std::move(figs);
}

} // namespace

std::vector<std::string> busy_periods_read_by_metrics(const Scenario& scenario) {
  return {pipeline_busy::reads(first_trainer_node(scenario))};
}

RunMetrics compute_metrics(const Scenario& sc, const SimulationOutput& out) {
  RunMetrics m;
  m.scenario = sc.name;
  m.steps_simulated = out.steps_simulated;
  m.steps_requested = sc.run.steps;
  m.ranks = out.ranks;
  m.simulated_nodes = out.simulated_nodes;
  m.workers_per_node = out.workers_per_node;
  std::vector<double> times;
  Breakdown sum;
  double padded = 0;
  for (const auto& r : out.recorder.steps()) {
    if (r.step < sc.run.warmup_steps)
      continue;
    double d = r.end - r.start;
    times.push_back(d);
    sum.input += r.input;
    sum.h2d += r.h2d;
    sum.host_compute += r.host_compute;
    sum.device_compute += r.device_compute;
    sum.collective += r.collective;
    padded += r.padded_fraction;
  }
  double n = static_cast<double>(times.size());
  double total = std::accumulate(times.begin(), times.end(), 0.0);
  m.step_mean = n > 0 ? total / n : 0;
  m.step_p50 = percentile(times, 50);
  m.step_p99 = percentile(times, 99);
  if (total > 0) {
    m.breakdown.input = sum.input / total;
    m.breakdown.h2d = sum.h2d / total;
    m.breakdown.host_compute = sum.host_compute / total;
    m.breakdown.device_compute = sum.device_compute / total;
    m.breakdown.collective = sum.collective / total;
    m.breakdown.other = std::max(0.0, 1.0 - m.breakdown.input - m.breakdown.h2d - m.breakdown.host_compute -
                                              m.breakdown.device_compute - m.breakdown.collective);
  }
  m.padded_fraction = n > 0 ? padded / n : 0;
  m.input_bound = classify_input_bound(m.breakdown.input);
  m.accelerator_utilization = m.breakdown.device_compute;
  // A step is gradient_accumulation batches on every rank.
  double global_batch = static_cast<double>(sc.pipeline.batch_size * sc.model.gradient_accumulation) * out.ranks;
  m.throughput = m.step_mean > 0 ? global_batch / m.step_mean : 0;
  m.samples_consumed = global_batch * static_cast<double>(sc.run.steps);
  m.dataset_samples = static_cast<double>(sc.dataset.samples);
  // A data service whose one preprocessed stream feeds several identical jobs is paid by all of them.
  for (const auto& node : sc.nodes) {
    bool shared = sc.pipeline.placement == PipelinePlacement::service && node.name == sc.pipeline.service_node;
    m.cost_per_hour += node.price.value() * 3600.0 * node.count / (shared ? sc.pipeline.shared_by_jobs : 1);
  }
  node_group_figures(sc, out, m);
  op_figures(out, m);
  if (m.step_mean > 0) // the device's stream time less its waits for the host to issue the ops: busy
    m.accelerator_utilization = std::max(0.0, m.breakdown.device_compute - m.host_issue_wait_s / m.step_mean);
  matrix_path_figure(sc, out, m);
  stage_figures(sc, out, m);
  transfer_chain(sc, out, m);
  input_analysis(sc, out, m);
  for (const auto& l : m.transfer_chain)
    if (l.utilization > m.slowest_link.utilization || m.slowest_link.name.empty())
      m.slowest_link = l;
  bottleneck(sc, out, m);
  return m;
}

} // namespace mlsim
