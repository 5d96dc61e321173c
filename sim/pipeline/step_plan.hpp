// The ops of one training step on one accelerator, in the order its stream
// runs them, as the trainer executes them.
//
// The step graph (a DAG) is planned into this flat schedule: each op has a
// duration already computed by the accelerator model (device ops) or a CPU
// cost in core-seconds (host ops, which also move tensors over PCIe).
// Gradient buckets name the op after which their gradients are ready, so the
// trainer starts each bucket's all-reduce there and overlaps it with the rest
// of the backward pass. Ops from `optimizer_begin` on wait for every bucket.
#pragma once

#include "sim/core/base/named_enum.hpp"
#include "sim/core/base/units.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

namespace mlsim {

enum class OpPlacement { device, host };
template <> struct EnumNames<OpPlacement> {
  static constexpr std::array<std::pair<OpPlacement, std::string_view>, 2> table{{
      {OpPlacement::device, "device"}, {OpPlacement::host, "host"}}};
};

struct PlannedOp {
  std::string name;          // "conv2_1/fwd"
  std::string kind;          // matmul, conv, elementwise, reduction, cast, copy, collective
  std::string path;          // "tensor core", "CUDA core", "matrix unit", "host"
  OpPlacement placement = OpPlacement::device;
  Seconds duration{0.0};     // device: time on the accelerator; host: core-seconds on one core
  Bytes to_device{0.0};      // host ops: bytes copied host->device after the op
  Bytes to_host{0.0};        // host ops: bytes copied device->host before the op
  bool sixteen_bit = false;  // computes in fp16/bf16
  double utilization = 0.0;  // useful FLOP/s over the path's peak
  // Added by the step graph (zero for the placeholder roofline):
  Flops flops{0.0};          // useful FLOPs
  Flops executed_flops{0.0}; // FLOPs the path computes, padding included (matrix unit)
  Bytes bytes{0.0};          // HBM traffic (device ops)
  std::string dtype;         // compute dtype: fp32, tf32, fp16, bf16
  std::string phase;         // forward, backward, optimizer
  std::string layer;         // the layer it came from
  std::string note;          // why a cast exists, or which stack rule applied
  std::string why;           // the cause of its time (tiles and waves, padding, memory-bound)
  Seconds host_wait{0.0};    // of `duration`: the device waiting for the host to issue this op
  std::string fusion;        // "output fusion", "loop fusion", ... when it stands for several ops fused
  std::vector<std::string> fused; // the ops a fusion stands for
};

struct GradientBucket {
  Bytes bytes{0.0};
  size_t ready_after_op = 0; // index into StepPlan::ops
};

struct StepPlan {
  std::vector<PlannedOp> ops;
  std::vector<GradientBucket> buckets;
  size_t optimizer_begin = 0; // first op that waits for all gradients
  // Ops [accumulate_begin, optimizer_begin) add the new gradients into those held (AccumulateGrad,
  // step_graph/backward_rules.hpp): run in every micro-batch after the first, and in the first as well when
  // zero_grad fills the gradients with zeros (accumulate_from_first).
  size_t accumulate_begin = std::numeric_limits<size_t>::max(); // none
  bool accumulate_from_first = false;
  // The end of the ops micro-batch m runs before the optimizer: a step's first skips the adds unless
  // gradients were filled for it.
  size_t micro_batch_end(long m) const {
    return m == 0 && !accumulate_from_first ? std::min(accumulate_begin, optimizer_begin) : optimizer_begin;
  }
  Bytes memory_footprint{0.0};
  Bytes memory_capacity{0.0};
  // Added by the step graph:
  size_t backward_begin = 0;    // first backward op
  Seconds critical_path{0.0};   // longest dependency chain (unlimited streams)
  Bytes weights_bytes{0.0}, gradients_bytes{0.0}, optimizer_state_bytes{0.0}, activations_bytes{0.0};
  Bytes allocator_bytes{0.0}; // reserved by the allocator beyond the tensors (memory_footprint.hpp)
  // The host issuing the ops (step_graph/host_issue.hpp): its time per step, and how long the device
  // waits for it (already in the device ops' durations, PlannedOp::host_wait).
  Seconds host_issue{0.0}, host_issue_wait{0.0};
  // With gradient accumulation (more than one micro-batch a step): the device's wait for the host in each
  // micro-batch's forward and backward, which then replaces their ops' host_wait; entry k for micro-batch
  // k, the last entry for every later one (host_issue.hpp). Empty: one batch a step.
  std::vector<Seconds> micro_batch_host_wait;
  // Micro-batch m's wait for the host (requires micro_batch_host_wait not empty).
  Seconds micro_batch_wait(long m) const {
    return micro_batch_host_wait[std::min(static_cast<size_t>(m), micro_batch_host_wait.size() - 1)];
  }
};

} // namespace mlsim
