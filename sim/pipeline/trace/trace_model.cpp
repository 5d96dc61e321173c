#include "sim/pipeline/trace/trace_model.hpp"

#include "sim/pipeline/trace/device_scaling.hpp"

namespace mlsim {

bool moves_device(const TraceModel& m, const AcceleratorSpec& acc) {
  return m.measured_on && m.measured_on->name != acc.name;
}

double unknown_dtype_share(const MeasuredStep& s, std::string& example, bool& fp64) {
  double unknown = 0, total = 0, largest = -1;
  fp64 = false;
  for (const auto& op : s.ops) {
    if (op.kind != MeasuredKind::kernel)
      continue;
    total += op.duration.value();
    if (op.info.fp64)
      fp64 = true;
    if (op.info.fp64 || !op.info.dtype_known) {
      unknown += op.duration.value();
      if (op.duration.value() > largest) {
        largest = op.duration.value();
        example = op.name.substr(0, 80);
      }
    }
  }
  return total > 0 ? unknown / total : 0.0;
}

namespace {

PlannedOp plan_kernel(const TraceModel& m, const MeasuredOp& op, const AcceleratorSpec& from,
                      const AcceleratorSpec& acc, double batch_factor) {
  PlannedOp p;
  p.name = op.name;
  p.phase = op.optimizer ? "optimizer" : "step";
  p.layer = "trace";
  double scale = op.per_sample ? batch_factor : 1.0;
  if (m.step.cpu_only) {
    p.kind = "cpu op";
    p.path = "measured (CPU)";
    p.dtype = "fp32";
    p.duration = op.duration * scale;
    return p;
  }
  KernelClass cls = op.info.cls;
  DType measured = op.info.dtype_known ? op.info.dtype : DType::fp32; // unknown: under 5 %, taken as fp32
  DType runs_in = m.precision ? target_dtype(*m.precision, cls, measured) : measured;
  if (moves_device(m, acc) || runs_in != measured)
    scale *= kernel_time_ratio(cls, measured, from, runs_in, acc);
  p.kind = cls == KernelClass::matrix ? "matmul" : "elementwise";
  p.path = cls == KernelClass::matrix && acc.matrix_peak_for(runs_in) ? acc.matrix_path_name() : acc.vector_path_name();
  p.dtype = to_string(runs_in);
  p.sixteen_bit = is_16bit(runs_in);
  p.duration = op.duration * scale;
  p.note = "measured";
  return p;
}

} // namespace

StepPlan plan_trace_step(const TraceModel& m, const AcceleratorSpec& acc, long batch) {
  const AcceleratorSpec& from = m.measured_on ? *m.measured_on : acc;
  double batch_factor = m.batch > 0 ? static_cast<double>(batch) / static_cast<double>(m.batch) : 1.0;
  StepPlan plan;
  for (const auto& op : m.step.ops) {
    PlannedOp p;
    if (op.kind == MeasuredKind::kernel) {
      p = plan_kernel(m, op, from, acc, batch_factor);
    } else if (op.kind == MeasuredKind::idle) {
      p.name = op.name;
      p.kind = "idle";
      p.path = "host-bound";
      p.duration = op.duration;
      p.phase = "step";
      p.layer = "trace";
    } else { // a copy between host and device: PCIe time from mlsim's model
      p.name = op.name;
      p.kind = "copy";
      p.path = "PCIe";
      p.placement = OpPlacement::host;
      double scale = op.per_sample ? batch_factor : 1.0;
      p.to_device = op.to_device * scale;
      p.to_host = op.to_host * scale;
      p.phase = "step";
      p.layer = "trace";
    }
    plan.critical_path += p.placement == OpPlacement::device ? p.duration : Seconds(0.0);
    plan.ops.push_back(std::move(p));
  }
  for (const auto& b : m.step.buckets)
    plan.buckets.push_back({b.bytes, b.ready_after_op});
  plan.optimizer_begin = m.step.optimizer_begin;
  plan.memory_capacity = acc.memory_size;
  return plan;
}

} // namespace mlsim
