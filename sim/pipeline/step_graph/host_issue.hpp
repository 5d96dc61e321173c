// The host issuing the step's kernels: how long the device waits for the framework to launch them.
//
// An eager framework's Python thread calls one op after another; each call costs host time (argument
// parsing, dispatch, autograd bookkeeping, the driver's launch) before its kernel can start. The
// device runs the ops in stream order, op i starting at
//   start_i = max(end_{i-1}, issued_i),   issued_i = issued_{i-1} + h_i,
//   h_i = per_op for a forward or backward op; a fused (multi-tensor, foreach) optimizer update is one
//         call for all tensors (per_op once); a per-op update calls one Python op per kernel,
//         kernels_i x per_optimizer_call (backward_rules.hpp)
// and waits wait_i = start_i - end_{i-1} for the host. Both clocks restart together at a sync, where
// the host blocks until the device has finished everything issued: PyTorch's GradScaler reads its
// found-inf flag (`.item()`) before the optimizer step in fp16 AMP, so the optimizer and the next
// step's forward and backward are issued from an idle device. The step is cyclic, so the walk starts
// at the sync and wraps around. Without a sync the host runs ahead of the device; in the steady state
// the step takes max(device, host) and the device waits max(0, host - device), put on the step's first op.
// With gradient accumulation (N micro-batches a step, the sync before the one optimizer step) the cycle
// is [optimizer, forward + backward x N]: the host's head start from the optimizer's kernels is spent by
// the first micro-batches, and where the host is slower than the device (small micro-batches) every
// micro-batch after it waits host - device. micro_batch_waits() walks that cycle; without a sync it gives
// the steady state, max(0, host - device) over the whole step, spread evenly over the micro-batches.
// A training loop that reads a value back after every micro-batch's backward (`loss.item()` to log it, as
// NVIDIA's BERT recipe does) syncs there too: every micro-batch after the first is issued from an idle
// device, so the host's lag where its calls are slower than the kernels (a forward of small ops) is exposed in
// each of them, even where the host is faster over the whole micro-batch.
// Ignores: the launch queue's depth (the host is never held back by a full queue); host work between
// ops that is not a call (Python control flow, the data loader's hand-over, logging); a per-op host
// cost that varies with the op's kind or arguments (one mean figure per stack); the host's
// single-thread speed (the figure is the measuring host's).
#pragma once

#include "sim/core/base/units.hpp"

#include <cstddef>
#include <limits>
#include <optional>
#include <vector>

namespace mlsim {

struct HostIssue {
  std::vector<Seconds> wait; // per op: the device's wait for the host before it
  Seconds host{0.0};         // host time issuing the step's ops
  Seconds total_wait{0.0};
};

// device[i]: op i's time on the device (0 for an op the device does not run); host[i]: the host's time to
// issue it; sync: the op before which the host waits for the device (none: the host runs ahead).
HostIssue host_issue(const std::vector<Seconds>& device, const std::vector<Seconds>& host,
                     std::optional<size_t> sync);

// Where the host waits for the device in a step: nowhere (it runs ahead), before the optimizer (GradScaler's
// found-inf check), or after every micro-batch's backward as well (a loss read-back each micro-batch).
enum class HostSync { none, before_optimizer, every_micro_batch };

// The device's wait for the host in each of `micro_batches` micro-batches of ops [0, optimizer_begin)
// (summed over the micro-batch), the ops from optimizer_begin on run once after them. With a sync the walk
// starts at the sync before the optimizer. Returns the first k waits; micro-batches from k on wait the last
// (the walk stops once it repeats). The first micro-batch runs ops [0, first_end) only (the AccumulateGrad adds
// from first_end on have no gradients to add into yet); default: all of them.
std::vector<Seconds> micro_batch_waits(const std::vector<Seconds>& device, const std::vector<Seconds>& host,
                                       size_t optimizer_begin, long micro_batches, HostSync sync,
                                       size_t first_end = std::numeric_limits<size_t>::max());

} // namespace mlsim
