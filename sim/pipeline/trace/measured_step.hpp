// One training step as a profiler trace measured it, ready to replay.
//
// Steps are found by their markers (torch.profiler's ProfilerStep#N, or every
// occurrence of a user-given op, numbered from 0 in time order); a range of
// them is kept. Device events (Kineto categories kernel / gpu_memcpy /
// gpu_memset, or TensorFlow's /device:GPU stream lines) belong to the step in
// which the CPU launched them (runtime event with the same correlation id; the
// event's own time when there is none). Within a step, on one timeline:
//   - the data loader's wait (enumerate(DataLoader)..., Iterator::GetNext) and
//     the batch's host-to-device copies before the first kernel are dropped:
//     mlsim's input pipeline and PCIe model produce them;
//   - NCCL kernels become gradient buckets (bytes from the collective's CPU op,
//     `In msg nelems` x dtype, linked by External id), run by mlsim's
//     collective model; other host<->device copies become PCIe transfers;
//   - every other device event is an op whose time is what it adds to the
//     union of busy time (events overlapping on other streams add only their
//     uncovered part), and uncovered time inside the step window is an idle
//     op (the device waiting for the host: launch overhead, Python).
// A CPU-only trace has no device events: the step thread's top-level CPU ops
// (those not nested in another) are the "device" step.
// With several steps: their ops are averaged position by position when every
// step has the same op sequence, otherwise the median step is used.
// Ignores: cross-stream waits other than through the union of busy time;
// GPU work that lags past its step's window is kept with its step.
#pragma once

#include "sim/core/base/units.hpp"
#include "sim/pipeline/trace/kernel_class.hpp"
#include "sim/pipeline/trace/trace_events.hpp"

#include <string>
#include <vector>

namespace mlsim {

enum class MeasuredKind { kernel, idle, transfer };

struct MeasuredOp {
  std::string name;
  MeasuredKind kind = MeasuredKind::kernel;
  KernelInfo info;          // op class and dtype from the kernel's name
  Seconds duration{0.0};    // what it adds to the step's busy time
  bool per_sample = false;  // its CPU op's first input dim is the batch (scales with it)
  bool optimizer = false;   // launched inside Optimizer.step
  Bytes to_device{0.0}, to_host{0.0}; // transfers: re-simulated over PCIe
};

struct MeasuredBucket {
  Bytes bytes{0.0};
  size_t ready_after_op = 0;
  std::string collective, algorithm; // from the NCCL kernel's name
  Seconds measured{0.0};             // the kernel's own time in the trace
};

struct StepSelection {
  std::string step_op;     // "" = ProfilerStep#N markers
  long first = -1, last = -1; // inclusive; -1 = all
};

struct MeasuredStep {
  std::string format;      // "kineto", "kineto (CPU only)", "tensorflow"
  bool cpu_only = false;
  std::vector<MeasuredOp> ops;
  std::vector<MeasuredBucket> buckets;
  size_t optimizer_begin = 0;
  std::vector<long> steps; // the step numbers used
  Seconds step_time{0.0};  // mean measured step (marker duration)
  Seconds input_wait{0.0}; // mean data-loader time inside the step
  Seconds batch_copy{0.0};
  Bytes batch_copy_bytes{0.0};
  bool batch_copy_pinned = true;
  long batch = -1;         // per-device batch from the input shapes (-1: no shapes recorded)
  bool shapes = false;     // the trace has input shapes (record_shapes=True)
  std::string device_name; // deviceProperties or the device process name
  std::string selection;   // how the steps were combined
  size_t events = 0;       // events read
};

// Throws InputError when no step is found, the range is outside the trace's
// steps, or a collective's size cannot be read.
MeasuredStep measure_step(const TraceFile& trace, const StepSelection& sel);

// Sum of the ops' durations (the replayed device timeline, idle included).
Seconds device_timeline(const MeasuredStep& m);

} // namespace mlsim
