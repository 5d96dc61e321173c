// One trainer actor per accelerator: the training loop.
//
//   wait for a batch (the stall) -> receive it in the training process (the
//   framework's receive cost, and with pin_memory the pin copy, on the node's
//   cores: framework_costs.hpp; part of the wait) -> copy it to the device over PCIe (pinned:
//   a DMA; pageable: a staging memcpy at RAM bandwidth first) -> run the
//   device preprocessing stage if any -> run the step's ops in stream order
//   (device ops on the accelerator, host ops on a CPU core with their
//   tensors over PCIe) -> hand each gradient bucket to the communicator when
//   its backward ops are done -> before the optimizer, wait for every bucket
//   (the wait is the exposed communication) -> next step. With gradient
//   accumulation a step is that many micro-batches, each waited for, copied and
//   run forward and backward; the buckets and the optimizer come with the last.
// Consecutive device ops with nothing between them run as one exec: a stream
// runs them back to back, so merging changes no time, only the event count.
// Variable-size batches scale device time by the batch's compute_scale.
// Overlapped copy (pipeline.copy, pinned memory): a copier actor copies the
// next batch on its own stream while the step runs, one batch ahead (a
// device buffer of one); the step then waits only for what of the copy is
// not yet done (its h2d part), and the rest of the wait is input. There the
// copier receives and pins each batch first, as PyTorch's pin-memory thread. The copy
// shares PCIe/NVLink links with the all-reduce in the sharing solver.
#pragma once

#include "sim/core/base/recorder.hpp"
#include "sim/pipeline/job_spec.hpp"
#include "sim/hardware/platform.hpp"
#include "sim/pipeline/batch_queue.hpp"
#include "sim/pipeline/collective.hpp"
#include "sim/pipeline/steady_state.hpp"
#include "sim/pipeline/step_plan.hpp"

#include <memory>

namespace mlsim {

class Trainer {
public:
  struct Setup {
    const JobContext* job = nullptr;
    Platform* platform = nullptr;
    Recorder* recorder = nullptr;
    NodeInstance* node = nullptr;
    int local_rank = 0;
    int rank = 0;
    const StepPlan* plan = nullptr;
    BatchQueue* queue = nullptr;
    Communicator* communicator = nullptr;
    long trace_steps = 3; // steps whose individual ops are recorded as spans
    SteadyStateMonitor* steady = nullptr; // asked before each step, told after it (fast-forward)
  };

  explicit Trainer(Setup setup);
  void start(); // creates the actor

private:
  void run();
  void copy_ahead(); // the overlapped copier
  // Waits for the next batch, copying it in the step when the copy is serialised; records input and h2d.
  // The next batch on the device; the wait since `since` adds to r's input (and h2d) time.
  Batch next_batch(StepRecord& r, double since, uint32_t track);
  // The framework's receive (+ pin) cost of a batch on the node's cores.
  void receive(const Batch& b, uint32_t track, bool pin);
  // One segment: device ops [begin, end) merged into one exec.
  // How the device waits for the host issuing the ops: before the first op, and per op (the plan's host_wait).
  struct HostWaits {
    double before_first = 0.0;
    bool per_op = true;
  };
  double run_device_ops(size_t begin, size_t end, double scale, bool trace, uint32_t track, const HostWaits& waits);

  Setup s_;
  std::unique_ptr<BatchQueue> on_device_; // overlapped copy: batches already on the device
  // The names of the spans recorded each step, interned once, and the receive cost's counter.
  uint32_t cat_input_, cat_h2d_, name_wait_, name_h2d_, name_receive_, name_receive_pin_;
  uint32_t cat_host_issue_, name_host_issue_; // the device waiting for the host to issue its next op
  CounterSlot receive_core_seconds_;
};

} // namespace mlsim
