#include "sim/pipeline/model_spec.hpp"

#include "sim/pipeline/step_graph/step_planner.hpp"

#include <algorithm>

namespace mlsim {
namespace {

// Bytes a gradient element the plan's buckets were counted in: the graph's gradient dtype, 4 for the forms
// that count fp32 gradients (the fixed-step and roofline forms).
double gradient_element_bytes(const ModelSpec& model) {
  return model.graph ? element_size(gradient_dtype(model.graph->precision)).value() : 4.0;
}

// A step of one device op; the gradients (parameters x 4 bytes), if any, are one bucket ready after it.
StepPlan single_op_plan(const PlannedOp& op, const ModelSpec& model, const AcceleratorSpec& acc) {
  StepPlan plan;
  plan.ops.push_back(op);
  if (model.parameters > 0)
    plan.buckets.push_back({Bytes(model.parameters * gradient_element_bytes(model)), 0});
  plan.optimizer_begin = plan.ops.size();
  plan.critical_path = op.duration;
  plan.memory_capacity = acc.memory_size;
  return plan;
}

// One device op of exactly the given time; gradients (if any) are ready after it.
StepPlan plan_fixed_step(const ModelSpec& model, const StepContext& ctx) {
  PlannedOp op;
  op.name = model.name + "/step";
  op.kind = "matmul";
  op.path = ctx.accelerator->matrix_path_name();
  op.duration = *model.step_time;
  op.phase = "forward";
  op.layer = model.name;
  op.why = "fixed step_time";
  return single_op_plan(op, model, *ctx.accelerator);
}

StepPlan plan_roofline(const ModelSpec& model, const StepContext& ctx) {
  const AcceleratorSpec& acc = *ctx.accelerator;
  auto it = acc.matrix_peak.find(model.dtype);
  FlopsPerSec peak = it != acc.matrix_peak.end() ? it->second : acc.vector_peak_for(model.dtype);
  Flops work = model.forward_flops_per_sample * (3.0 * static_cast<double>(ctx.batch_per_device));
  Bytes traffic = model.bytes_per_sample * static_cast<double>(ctx.batch_per_device);
  Seconds compute = work / peak;
  Seconds memory = acc.memory_bandwidth.value() > 0 ? traffic / acc.memory_bandwidth : Seconds(0.0);
  PlannedOp op;
  op.name = model.name + "/step";
  op.kind = "matmul";
  op.path = it != acc.matrix_peak.end() ? acc.matrix_path_name() : acc.vector_path_name();
  op.duration = max(compute, memory);
  op.sixteen_bit = is_16bit(model.dtype);
  op.utilization = op.duration.value() > 0 ? (work / op.duration) / peak : 0.0;
  op.flops = op.executed_flops = work;
  op.bytes = traffic;
  op.dtype = to_string(model.dtype);
  op.phase = "forward";
  op.layer = model.name;
  return single_op_plan(op, model, acc);
}

StepPlan plan_uncompressed(const ModelSpec& model, const StepContext& ctx) {
  if (model.step_time)
    return plan_fixed_step(model, ctx);
  if (model.trace)
    return plan_trace_step(*model.trace, *ctx.accelerator, ctx.batch_per_device);
  if (!model.graph)
    return plan_roofline(model, ctx);
  HostSpeed host{ctx.host_core_peak, ctx.host_sixteen_bit_slowdown};
  return plan_graph_step(*model.graph, *ctx.accelerator, ctx.batch_per_device, host,
                         TrainingLoop{model.gradient_accumulation, model.readback_every_micro_batch});
}

} // namespace

StepPlan plan_step(const ModelSpec& model, const StepContext& ctx) {
  StepPlan plan = plan_uncompressed(model, ctx);
  if (model.compress_gradients_16bit && !model.trace) {
    const double scale = std::min(1.0, 2.0 / gradient_element_bytes(model)); // 16-bit gradients stay as they are
    for (auto& b : plan.buckets)
      b.bytes = b.bytes * scale;
  }
  return plan;
}

} // namespace mlsim
