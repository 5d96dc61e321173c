// The `model:` section of a scenario and the planning of one training step.
//
// Two families of forms:
//  - explicit roofline (quick scenarios): forward FLOPs f and bytes m per
//    sample; a step costs 3f FLOP per sample (forward + 2x backward) at the
//    dtype's peak, or its bytes at HBM bandwidth, whichever is slower;
//    gradients (parameters x 4 bytes) are all-reduced in one bucket at the end.
//      model: {forward_flops_per_sample: 4.1 GFLOP, bytes_per_sample: 100 MB, parameters: 25.6e6, dtype: fp16}
//  - a step graph (sim/pipeline/step_graph/): a preset, a layer list or an op
//    list, planned op by op (see step_graph/graph_model.hpp for the keys).
//      model: {preset: resnet50, precision: mixed_fp16, stack: native}
//  - a fixed device step (an emulated accelerator, as DLIO emulates one): the
//    step takes exactly `step_time` on the device whatever the batch; optional
//    `parameters` are all-reduced after it. Ignores: memory, batch scaling.
//      model: {step_time: 38 ms}
//  - a measured step replayed from a profiler trace (sim/pipeline/trace/):
//      model: {trace: run1.pt.trace.json, steps: [5, 10]}
#pragma once

#include "sim/hardware/accelerator.hpp"
#include "sim/pipeline/step_graph/graph_model.hpp"
#include "sim/pipeline/step_plan.hpp"
#include "sim/pipeline/trace/trace_model.hpp"

#include <optional>
#include <string>

namespace mlsim {

struct ModelSpec {
  std::string name;
  // The explicit roofline form:
  Flops forward_flops_per_sample{0.0};
  Bytes bytes_per_sample{0.0};
  double parameters = 0.0;
  DType dtype = DType::fp32;
  // The fixed-step form (set when `step_time` is given):
  std::optional<Seconds> step_time;
  // The step-graph forms (set when the model is a preset, a layer list or an op list):
  std::optional<GraphModel> graph;
  // The trace form (set when the model is `trace: FILE`):
  std::optional<TraceModel> trace;
  // Micro-batches per optimizer step (any form): each runs the forward and backward passes on a batch of its
  // own; the gradients are all-reduced during the last one's backward only (DDP's no_sync, Horovod's
  // backward_passes_per_step) and the optimizer runs once. A step is all of them.
  long gradient_accumulation = 1;
  // With accumulation: reduce the gradients in every micro-batch's backward (DDP without no_sync, a recipe
  // with allreduce_post_accumulation off) instead of once a step.
  bool reduce_every_micro_batch = false;
  // The loop reads a value back from the device after every micro-batch's backward (`loss.item()`), a sync
  // that exposes the host's issue lag in every micro-batch (step_graph/host_issue.hpp). Acts on stacks with a
  // host_issue figure.
  bool readback_every_micro_batch = false;
  // Gradients all-reduced in a 16-bit dtype (DDP's fp16/bf16_compress_hook, Horovod's Compression.fp16): each
  // bucket moves 2 bytes a gradient element instead of its dtype's. The casts around the collective (12 bytes of
  // HBM traffic an element, ~0.2 ms a step for ResNet-50's 25.6 M on an A100) are not modelled. Not for the trace
  // form, whose buckets are the sizes it measured.
  bool compress_gradients_16bit = false;
};

struct StepContext {
  const AcceleratorSpec* accelerator = nullptr;
  long batch_per_device = 1;
  // Host-placed ops: one core's fp32 peak (a 2 GHz core with one 8-wide FMA
  // port = 32 GFLOP/s; the CPU model or calibration should supply the real one)
  // and how much slower 16-bit arithmetic runs there (emulated on most CPUs).
  FlopsPerSec host_core_peak{32e9};
  double host_sixteen_bit_slowdown = 1.0;
};

// Throws InputError when the step does not fit in the accelerator's memory.
StepPlan plan_step(const ModelSpec& model, const StepContext& ctx);

} // namespace mlsim
