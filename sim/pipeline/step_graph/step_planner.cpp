#include "sim/pipeline/step_graph/step_planner.hpp"

#include "sim/core/base/errors.hpp"
#include "sim/pipeline/step_graph/forward_graph.hpp"
#include "sim/pipeline/step_graph/fusion.hpp"
#include "sim/pipeline/step_graph/host_issue.hpp"

#include <fmt/format.h>

namespace mlsim {
namespace {

OpGraph forward_ops(const GraphModel& model, long batch, Bytes& input_batch) {
  if (!model.ops.empty()) {
    input_batch = Bytes(0.0); // the first ops' reads stand for it
    return build_explicit_graph(model.ops, batch);
  }
  double elements = static_cast<double>(batch);
  for (long d : model.input)
    elements *= static_cast<double>(d);
  input_batch = element_size(model.input_dtype) * elements;
  return build_forward_graph(model.layers, model.input, batch).graph;
}

// Bytes host op `i` moves: device-produced inputs to the host, its output back if a device op reads it.
void pcie_traffic(const OpGraph& g, size_t i, PlannedOp& planned) {
  for (size_t p : g.producers(i))
    if (g.ops[p].placement == OpPlacement::device)
      planned.to_host += element_size(g.ops[p].out_dtype) * g.ops[p].out_elements;
  for (size_t c : g.consumers(i))
    if (g.ops[c].placement == OpPlacement::device) {
      planned.to_device = element_size(g.ops[i].out_dtype) * g.ops[i].out_elements;
      break;
    }
}

// Gradients exist when a backward runs (AccumulateGrad adds into them): zero_grad fills them with zeros, or a
// step accumulates more than one micro-batch.
bool accumulates(const StackProfile& stack, long micro_batches) {
  return stack.zero_grad == ZeroGrad::zero_fill || micro_batches > 1;
}

// The host's time to issue op i (host_issue.hpp): a call per forward and backward op; a fused (multi-tensor)
// optimizer is one call for the whole update, a per-op one a Python call per kernel.
Seconds host_call(const StackProfile& stack, const Op& op, size_t i, size_t optimizer_begin) {
  if (op.phase == Phase::accumulate) // launched by the autograd engine as the backward goes, no call of its own
    return Seconds(0.0);
  if (i < optimizer_begin)
    return stack.host_per_op;
  if (stack.optimizer_kernels == OptimizerKernels::per_op)
    return stack.host_per_optimizer_call * op.kernels;
  return i == optimizer_begin ? stack.host_per_op : Seconds(0.0);
}

// The device's waits for the host issuing the ops (host_issue.hpp), added to the ops they delay.
void add_host_issue(const GraphModel& model, const OpGraph& g, StepPlan& plan, const TrainingLoop& loop) {
  const long micro_batches = loop.micro_batches;
  const StackProfile& stack = model.stack;
  if (stack.host_per_op.value() <= 0 && stack.host_per_optimizer_call.value() <= 0)
    return;
  std::vector<Seconds> device, host;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const bool on_device = g.ops[i].placement == OpPlacement::device;
    device.push_back(on_device ? plan.ops[i].duration : Seconds(0.0));
    host.push_back(on_device ? host_call(stack, g.ops[i], i, plan.optimizer_begin) : Seconds(0.0));
  }
  // GradScaler's found-inf check and a read-back after the (last) micro-batch's backward both sync there.
  HostSync when = loop.readback_every_micro_batch                            ? HostSync::every_micro_batch
                  : stack.loss_scale_sync && scales_loss(model.precision) ? HostSync::before_optimizer
                                                                          : HostSync::none;
  if (plan.optimizer_begin >= g.ops.size()) // no optimizer: no sync before it
    when = HostSync::none;
  const std::optional<size_t> sync = when == HostSync::none ? std::nullopt : std::optional(plan.optimizer_begin);
  const HostIssue issue = host_issue(device, host, sync);
  for (size_t i = 0; i < plan.ops.size(); ++i) {
    PlannedOp& p = plan.ops[i];
    if (issue.wait[i].value() <= 0)
      continue;
    p.host_wait = issue.wait[i];
    p.duration += issue.wait[i];
    p.why += fmt::format("{}{:.1f} us waiting for the host to issue it", p.why.empty() ? "" : "; ",
                         issue.wait[i].value() * 1e6);
  }
  plan.host_issue = issue.host;
  plan.host_issue_wait = issue.total_wait;
  if (micro_batches <= 1)
    return;
  // A step of N micro-batches: the host time and the device's wait for the whole step.
  plan.micro_batch_host_wait = micro_batch_waits(device, host, plan.optimizer_begin, micro_batches, when,
                                                 plan.micro_batch_end(0));
  Seconds host_fb{0.0}, wait{0.0};
  for (size_t i = 0; i < plan.optimizer_begin && i < host.size(); ++i)
    host_fb += host[i];
  for (size_t i = plan.optimizer_begin; i < plan.ops.size(); ++i)
    wait += plan.ops[i].host_wait;
  for (long m = 0; m < micro_batches; ++m)
    wait += plan.micro_batch_wait(m);
  plan.host_issue = issue.host + host_fb * static_cast<double>(micro_batches - 1);
  plan.host_issue_wait = wait;
}

// The stack's own max-pool kernels (stack_profile.hpp): the forward's SM cycles per output element, the input
// gradient's per input element (its output). A compiled max pool (fused or not: fusion.hpp marks both) is the
// compiler's kernel instead.
void apply_max_pool_kernels(OpGraph& g, const StackProfile& stack, ActivationLayout layout) {
  const std::string key = layout == ActivationLayout::nchw ? "nchw" : "nhwc";
  for (Op& op : g.ops) {
    if (!op.argmax_pool || op.compiled)
      continue;
    const auto& cycles = op.phase == Phase::forward ? stack.max_pool_forward_cycles : stack.max_pool_backward_cycles;
    if (auto c = cycles.find(key); c != cycles.end())
      op.sm_cycles = c->second * op.out_elements;
  }
}

} // namespace

StepGraph build_step_graph(const GraphModel& model, const AcceleratorSpec& acc, long batch, const HostSpeed& host,
                           long micro_batches) {
  StepGraph s;
  Bytes input_batch{0.0};
  OpGraph forward;
  try {
    forward = apply_precision(forward_ops(model, batch, input_batch), model.precision, model.stack,
                              model.input_dtype);
  } catch (const InputError& e) {
    throw InputError(model.where + ": " + e.what()); // shape errors found while building, placed at model:
  }
  if (model.layout == ActivationLayout::nchw)
    for (auto& op : forward.ops)
      op.nchw_activations = op.kind == OpKind::conv || op.channel_statistics; // their backward ops inherit it
  for (Op& op : forward.ops) // the stack's max pool keeps its argmax for the backward
    if (op.argmax_pool)
      op.index_bytes = model.stack.max_pool_index_bytes;
  s.memory = memory_footprint(forward, model.precision, model.optimizer, input_batch, model.stack.allocator);
  check_fits(s.memory, acc.memory_size, batch, acc.name, model.where);
  s.training = fuse_ops(add_backward_and_optimizer(forward, model.optimizer, master_dtype(model.precision),
                                                  {model.stack.optimizer_kernels, model.stack.zero_grad,
                                                   accumulates(model.stack, micro_batches),
                                                   writes_back_16bit_weights(model.precision)}),
                       model.stack.fusion);
  apply_max_pool_kernels(s.training.graph, model.stack, model.layout);
  std::vector<Seconds> durations;
  for (const auto& op : s.training.graph.ops) {
    s.costs.push_back(op.placement == OpPlacement::device ? cost_device_op(op, acc) : cost_host_op(op, host));
    durations.push_back(s.costs.back().duration);
  }
  topological_order(s.training.graph); // proves it is a DAG before the trainer runs it in stream order
  s.critical = critical_path(s.training.graph, durations);
  return s;
}

StepPlan plan_graph_step(const GraphModel& model, const AcceleratorSpec& acc, long batch, const HostSpeed& host,
                         const TrainingLoop& loop) {
  StepGraph s = build_step_graph(model, acc, batch, host, loop.micro_batches);
  const OpGraph& g = s.training.graph;
  StepPlan plan;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const Op& op = g.ops[i];
    const OpCost& c = s.costs[i];
    PlannedOp p;
    p.name = op.name;
    p.kind = to_string(op.kind);
    p.path = c.path;
    p.placement = op.placement;
    p.duration = c.duration;
    p.sixteen_bit = is_16bit(op.compute_dtype);
    p.utilization = c.utilization;
    p.flops = op.flops;
    p.executed_flops = c.executed_flops;
    p.bytes = c.bytes;
    p.dtype = to_string(op.compute_dtype);
    p.phase = to_string(op.phase);
    p.layer = op.layer;
    p.note = op.note;
    p.why = c.why;
    p.fusion = op.fusion;
    p.fused = op.fused;
    if (op.placement == OpPlacement::host)
      pcie_traffic(g, i, p);
    plan.ops.push_back(std::move(p));
  }
  Bytes grad_size = element_size(gradient_dtype(model.precision));
  Bytes pending{0.0};
  for (size_t k = 0; k < s.training.gradients.size(); ++k) {
    const auto& grad = s.training.gradients[k];
    pending += grad_size * grad.parameters;
    bool last = k + 1 == s.training.gradients.size();
    if (pending >= model.gradient_bucket || last) {
      plan.buckets.push_back({pending, grad.op});
      pending = Bytes(0.0);
    }
  }
  plan.backward_begin = s.training.backward_begin;
  plan.optimizer_begin = s.training.optimizer_begin;
  plan.accumulate_begin = s.training.accumulate_begin;
  plan.accumulate_from_first = model.stack.zero_grad == ZeroGrad::zero_fill;
  plan.critical_path = s.critical.length;
  plan.memory_footprint = s.memory.total();
  plan.memory_capacity = acc.memory_size;
  plan.weights_bytes = s.memory.weights;
  plan.gradients_bytes = s.memory.gradients;
  plan.optimizer_state_bytes = s.memory.optimizer_state;
  plan.activations_bytes = s.memory.activations;
  plan.allocator_bytes = s.memory.allocator;
  add_host_issue(model, g, plan, loop);
  return plan;
}

} // namespace mlsim
