#include "sim/pipeline/step_graph/op_cost.hpp"

#include <cmath>

namespace mlsim {

bool meets_alignment(const Op& op, const AcceleratorSpec& acc) {
  if (acc.fast_path_alignment <= 0)
    return true;
  auto rule = acc.fast_path_dims.find(to_string(op.kind));
  if (rule == acc.fast_path_dims.end())
    return true;
  for (const auto& dim : rule->second) {
    auto it = op.dims.find(dim);
    if (it != op.dims.end() && it->second % acc.fast_path_alignment != 0)
      return false;
  }
  return true;
}

double matrix_unit_padding(const Op& op, const AcceleratorSpec& acc) {
  if (acc.matrix_unit_size <= 0)
    return 1.0;
  double factor = 1.0;
  double size = acc.matrix_unit_size;
  for (const auto& dim : acc.matrix_unit_dims) {
    auto it = op.dims.find(dim);
    if (it == op.dims.end() || it->second <= 0)
      continue;
    double d = static_cast<double>(it->second);
    factor *= std::ceil(d / size) * size / d;
  }
  return factor;
}

OpCost cost_device_op(const Op& op, const AcceleratorSpec& acc) {
  OpCost c;
  c.bytes = op.bytes();
  auto matrix_peak = acc.matrix_peak_for(op.compute_dtype);
  bool matrix_candidate = is_matrix_kind(op.kind) && matrix_peak && !op.forced_vector_path;
  if (matrix_candidate && acc.matrix_unit_size > 0) {
    c.matrix_path = true;
    c.matrix_unit_utilization = 1.0 / matrix_unit_padding(op, acc);
  } else if (matrix_candidate && meets_alignment(op, acc)) {
    c.matrix_path = true;
  }
  c.path = c.matrix_path ? acc.matrix_path_name() : acc.vector_path_name();
  c.peak = c.matrix_path ? *matrix_peak : acc.vector_peak_for(op.compute_dtype);
  c.executed_flops = op.flops / c.matrix_unit_utilization;
  Seconds compute = c.executed_flops / c.peak;
  Seconds memory = acc.memory_bandwidth.value() > 0 ? c.bytes / acc.memory_bandwidth : Seconds(0.0);
  c.duration = acc.launch_overhead + max(compute, memory) / acc.efficiency_for(to_string(op.kind));
  c.utilization = c.duration.value() > 0 ? (op.flops / c.duration) / c.peak : 0.0;
  return c;
}

OpCost cost_host_op(const Op& op, const HostSpeed& host) {
  OpCost c;
  c.path = "host";
  c.bytes = op.bytes();
  c.executed_flops = op.flops;
  c.peak = is_16bit(op.compute_dtype) ? host.core_peak / host.sixteen_bit_slowdown : host.core_peak;
  c.duration = op.flops / c.peak;
  c.utilization = 1.0;
  return c;
}

} // namespace mlsim
