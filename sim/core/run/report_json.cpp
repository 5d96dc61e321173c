#include "sim/core/run/report_json.hpp"

#include "sim/core/base/errors.hpp"

#include <limits>

namespace mlsim {

namespace {
// JSON has no NaN: nlohmann writes it as null, and null reads back as NaN.
double number(const nlohmann::ordered_json& v) {
  return v.is_null() ? std::numeric_limits<double>::quiet_NaN() : v.get<double>();
}
} // namespace

nlohmann::ordered_json metrics_to_json(const RunMetrics& m) {
  using json = nlohmann::ordered_json;
  json j;
  j["scenario"] = m.scenario;
  j["steps_simulated"] = m.steps_simulated;
  j["steps_requested"] = m.steps_requested;
  j["accelerators"] = m.ranks;
  j["simulated_trainer_nodes"] = m.simulated_nodes;
  j["step_time_s"] = {{"mean", m.step_mean}, {"p50", m.step_p50}, {"p99", m.step_p99}};
  j["throughput_samples_per_s"] = m.throughput;
  j["breakdown"] = {{"input", m.breakdown.input},
                    {"host_compute", m.breakdown.host_compute},
                    {"h2d", m.breakdown.h2d},
                    {"device_compute", m.breakdown.device_compute},
                    {"collective", m.breakdown.collective},
                    {"other", m.breakdown.other}};
  j["input_bound"] = m.input_bound;
  j["accelerator_utilization"] = m.accelerator_utilization;
  j["op_placement"] = {{"device", m.op_device}, {"host", m.op_host}};
  j["precision"] = {{"fp16", m.precision_fp16}, {"fp32", m.precision_fp32}};
  j["bottleneck"] = {{"kind", m.bottleneck_kind}, {"name", m.bottleneck_name}, {"utilization", m.bottleneck_utilization}};
  json stages = json::array();
  for (const auto& s : m.stages)
    stages.push_back({{"name", s.name},
                      {"capacity_samples_per_s", s.capacity_samples_per_s},
                      {"utilization", s.utilization},
                      {"busy_share", s.busy_share},
                      {"cost_per_sample_s", s.cost_per_sample}});
  j["stages"] = stages;
  j["input_analysis_s_per_step"] = {{"read_on_demand", m.input_analysis.read_on_demand},
                                    {"read_in_advance", m.input_analysis.read_in_advance},
                                    {"preprocessing_core_seconds", m.input_analysis.preprocessing},
                                    {"enqueue_to_device", m.input_analysis.enqueue}};
  json chain = json::array();
  for (const auto& l : m.transfer_chain)
    chain.push_back({{"name", l.name}, {"kind", l.kind}, {"capacity_bytes_per_s", l.capacity_bytes_per_s},
                     {"utilization", l.utilization}});
  j["transfer_chain"] = chain;
  j["slowest_link"] = {{"name", m.slowest_link.name}, {"kind", m.slowest_link.kind},
                       {"capacity_bytes_per_s", m.slowest_link.capacity_bytes_per_s},
                       {"utilization", m.slowest_link.utilization}};
  j["pipeline_capacity_samples_per_s"] = m.pipeline_capacity;
  j["pipeline_cpu_utilization"] = m.pipeline_cpu_utilization;
  json ops = json::array();
  for (const auto& o : m.top_ops)
    ops.push_back({{"name", o.name},
                   {"kind", o.kind},
                   {"path", o.path},
                   {"time_fraction", o.time_fraction},
                   {"utilization", o.utilization},
                   {"useful_flop_fraction", o.useful_flop_fraction},
                   {"fusion", o.fusion},
                   {"fused", o.fused},
                   {"why", o.why}});
  j["top_ops"] = ops;
  j["fusion_time"] = m.fusion_time;
  j["matrix_path"] = {{"name", m.matrix_path.name},
                      {"utilization", m.matrix_path.utilization},
                      {"useful_flop_fraction", m.matrix_path.useful_flop_fraction},
                      {"time_fraction", m.matrix_path.time_fraction}};
  j["memory"] = {{"footprint_bytes", m.memory_footprint}, {"capacity_bytes", m.memory_capacity}};
  if (m.host_issue_s > 0)
    j["host_issue"] = {{"host_s_per_step", m.host_issue_s}, {"device_wait_s_per_step", m.host_issue_wait_s}};
  j["padded_fraction"] = m.padded_fraction;
  j["pipeline_workers_per_node"] = m.workers_per_node;
  j["pipeline_worker_cores"] = m.worker_cores;
  j["cost"] = {{"per_hour_usd", m.cost_per_hour},
               {"per_step_usd", m.cost_per_step()},
               {"per_epoch_usd", m.cost_per_epoch()},
               {"per_million_samples_usd", m.cost_per_million()}};
  j["dataset_samples"] = m.dataset_samples;
  j["samples_consumed"] = m.samples_consumed;
  if (m.node_groups.size() > 1) { // a job of several trainer groups: where each group's step goes
    json groups = json::array();
    for (size_t g = 0; g < m.node_groups.size(); ++g) {
      const NodeGroupFigure& f = m.node_groups[g];
      groups.push_back({{"name", f.name},
                        {"nodes", f.nodes},
                        {"pipeline_workers_per_node", f.workers_per_node},
                        {"pipeline_worker_cores", f.worker_cores},
                        {"paces_job", g == m.pacing_group},
                        {"s_per_step",
                         {{"step", f.step},
                          {"own", f.own()},
                          {"input_wait", f.input},
                          {"host_compute", f.host_compute},
                          {"h2d", f.h2d},
                          {"device_compute", f.device_compute},
                          {"collective_wait", f.collective}}}});
    }
    j["node_groups"] = groups;
  }
  return j;
}

RunMetrics metrics_from_json(const nlohmann::ordered_json& j) {
  try {
    RunMetrics m;
    m.scenario = j.at("scenario").get<std::string>();
    m.steps_simulated = j.at("steps_simulated").get<long>();
    m.steps_requested = j.at("steps_requested").get<long>();
    m.ranks = j.at("accelerators").get<int>();
    m.simulated_nodes = j.at("simulated_trainer_nodes").get<int>();
    const auto& st = j.at("step_time_s");
    m.step_mean = number(st.at("mean"));
    m.step_p50 = number(st.at("p50"));
    m.step_p99 = number(st.at("p99"));
    m.throughput = number(j.at("throughput_samples_per_s"));
    const auto& b = j.at("breakdown");
    m.breakdown = {number(b.at("input")),          number(b.at("host_compute")),
                   number(b.at("h2d")),            number(b.at("device_compute")),
                   number(b.at("collective")),     number(b.at("other"))};
    m.input_bound = j.at("input_bound").get<std::string>();
    m.accelerator_utilization = number(j.at("accelerator_utilization"));
    m.op_device = number(j.at("op_placement").at("device"));
    m.op_host = number(j.at("op_placement").at("host"));
    m.precision_fp16 = number(j.at("precision").at("fp16"));
    m.precision_fp32 = number(j.at("precision").at("fp32"));
    const auto& bn = j.at("bottleneck");
    m.bottleneck_kind = bn.at("kind").get<std::string>();
    m.bottleneck_name = bn.at("name").get<std::string>();
    m.bottleneck_utilization = number(bn.at("utilization"));
    for (const auto& s : j.at("stages"))
      m.stages.push_back({s.at("name").get<std::string>(), number(s.at("capacity_samples_per_s")),
                          number(s.at("utilization")), number(s.at("busy_share")),
                          number(s.at("cost_per_sample_s"))});
    const auto& ia = j.at("input_analysis_s_per_step");
    m.input_analysis = {number(ia.at("read_on_demand")), number(ia.at("read_in_advance")),
                        number(ia.at("preprocessing_core_seconds")), number(ia.at("enqueue_to_device"))};
    auto link = [](const nlohmann::ordered_json& l) {
      return LinkFigure{l.at("name").get<std::string>(), l.at("kind").get<std::string>(),
                        number(l.at("capacity_bytes_per_s")), number(l.at("utilization"))};
    };
    for (const auto& l : j.at("transfer_chain"))
      m.transfer_chain.push_back(link(l));
    m.slowest_link = link(j.at("slowest_link"));
    m.pipeline_capacity = number(j.at("pipeline_capacity_samples_per_s"));
    m.pipeline_cpu_utilization = number(j.at("pipeline_cpu_utilization"));
    for (const auto& o : j.at("top_ops")) {
      OpFigure f;
      f.name = o.at("name").get<std::string>();
      f.kind = o.at("kind").get<std::string>();
      f.path = o.at("path").get<std::string>();
      f.time_fraction = number(o.at("time_fraction"));
      f.utilization = number(o.at("utilization"));
      f.useful_flop_fraction = number(o.at("useful_flop_fraction"));
      f.fusion = o.at("fusion").get<std::string>();
      f.fused = o.at("fused").get<std::vector<std::string>>();
      f.why = o.at("why").get<std::string>();
      m.top_ops.push_back(f);
    }
    for (const auto& [kind, share] : j.at("fusion_time").items())
      m.fusion_time[kind] = number(share);
    const auto& mp = j.at("matrix_path");
    m.matrix_path = {mp.at("name").get<std::string>(), number(mp.at("utilization")),
                     number(mp.at("useful_flop_fraction")), number(mp.at("time_fraction"))};
    m.memory_footprint = number(j.at("memory").at("footprint_bytes"));
    m.memory_capacity = number(j.at("memory").at("capacity_bytes"));
    if (j.contains("host_issue")) {
      m.host_issue_s = number(j.at("host_issue").at("host_s_per_step"));
      m.host_issue_wait_s = number(j.at("host_issue").at("device_wait_s_per_step"));
    }
    m.padded_fraction = number(j.at("padded_fraction"));
    m.workers_per_node = j.at("pipeline_workers_per_node").get<int>();
    m.worker_cores = number(j.at("pipeline_worker_cores"));
    m.cost_per_hour = number(j.at("cost").at("per_hour_usd"));
    m.dataset_samples = number(j.at("dataset_samples"));
    m.samples_consumed = number(j.at("samples_consumed"));
    if (j.contains("node_groups"))
      for (const auto& g : j.at("node_groups")) {
        const auto& t = g.at("s_per_step");
        if (g.at("paces_job").get<bool>())
          m.pacing_group = m.node_groups.size();
        m.node_groups.push_back({g.at("name").get<std::string>(), g.at("nodes").get<int>(),
                                 g.at("pipeline_workers_per_node").get<int>(), number(g.at("pipeline_worker_cores")),
                                 number(t.at("step")),
                                 number(t.at("input_wait")), number(t.at("host_compute")), number(t.at("h2d")),
                                 number(t.at("device_compute")), number(t.at("collective_wait"))});
      }
    return m;
  } catch (const nlohmann::json::exception& e) {
    throw InternalError(std::string("a run report without the expected figures: ") + e.what());
  }
}

} // namespace mlsim
