#include "sim/core/report_json.hpp"

namespace mlsim {

nlohmann::ordered_json metrics_to_json(const RunMetrics& m) {
  using json = nlohmann::ordered_json;
  json j;
  j["scenario"] = m.scenario;
  j["steps_simulated"] = m.steps_simulated;
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
                      {"busy_share", s.busy_share}});
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
  j["padded_fraction"] = m.padded_fraction;
  j["pipeline_workers_per_node"] = m.workers_per_node;
  j["cost"] = {{"per_hour_usd", m.cost_per_hour},
               {"per_step_usd", m.cost_per_hour / 3600.0 * m.step_mean},
               {"per_epoch_usd", m.throughput > 0 ? m.cost_per_hour / 3600.0 * m.dataset_samples / m.throughput : 0.0},
               {"per_million_samples_usd", m.throughput > 0 ? m.cost_per_hour / 3600.0 * 1e6 / m.throughput : 0.0}};
  return j;
}

} // namespace mlsim
