// From a graph model to the flat schedule the trainer runs (StepPlan).
//
// forward graph (layers or ops) -> precision policy and stack (dtypes, casts)
// -> memory check -> backward and optimizer ops -> the stack's kernel fusion
// (fusion.hpp) -> per-op cost (roofline on
// the accelerator, core-seconds on the host) -> critical path -> StepPlan.
// The stream order is forward, backward (reverse layer order), optimizer.
// Weight gradients are grouped into all-reduce buckets of `gradient_bucket`
// bytes in the order the backward pass completes them (as PyTorch DDP and
// Horovod's tensor fusion do), each ready after the op that completes its last
// gradient. Host-placed ops move their device-produced inputs to the host and
// their outputs back over PCIe.
#pragma once

#include "sim/hardware/accelerator.hpp"
#include "sim/pipeline/step_graph/graph_model.hpp"
#include "sim/pipeline/step_graph/memory_footprint.hpp"
#include "sim/pipeline/step_graph/op_cost.hpp"
#include "sim/pipeline/step_plan.hpp"

namespace mlsim {

struct StepGraph {
  TrainingGraph training;
  std::vector<OpCost> costs; // one per op of training.graph
  MemoryFootprint memory;
  CriticalPath critical;
};

// The training loop around the step (model_spec.hpp): micro-batches a step, and whether the script reads a
// value back from the device after every micro-batch's backward (host_issue.hpp).
struct TrainingLoop {
  long micro_batches = 1;
  bool readback_every_micro_batch = false;
};

// Throws InputError when the step does not fit in the accelerator's memory. The loop's micro-batches decide
// whether the graph has AccumulateGrad's adds (backward_rules.hpp).
StepGraph build_step_graph(const GraphModel& model, const AcceleratorSpec& acc, long batch, const HostSpeed& host,
                           long micro_batches = 1);

StepPlan plan_graph_step(const GraphModel& model, const AcceleratorSpec& acc, long batch, const HostSpeed& host,
                         const TrainingLoop& loop = {});

} // namespace mlsim
