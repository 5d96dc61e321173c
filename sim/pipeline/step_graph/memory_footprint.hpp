// Device memory held during one training step.
//
//   weights    = P x size(master) (+ P x 2 for the 16-bit copies of mixed precision)
//   gradients  = P x size(master)
//   optimizer  = P x states x size(master)
//   activations= sum over device forward ops of their outputs (kept for the
//                backward pass) + the input batch
// P counts only parameters of device-placed ops. Ignores: allocator
// fragmentation, cuDNN workspaces, the framework's own reserve, activation
// recomputation and in-place ops (so it errs on the high side for activations).
#pragma once

#include "sim/pipeline/step_graph/backward_rules.hpp"
#include "sim/pipeline/step_graph/op_graph.hpp"
#include "sim/pipeline/step_graph/precision_policy.hpp"

namespace mlsim {

struct MemoryFootprint {
  Bytes weights{0.0}, gradients{0.0}, optimizer_state{0.0}, activations{0.0};
  Bytes total() const { return weights + gradients + optimizer_state + activations; }
};

// `forward` has dtypes assigned (after apply_precision).
MemoryFootprint memory_footprint(const OpGraph& forward, PrecisionPolicy policy, Optimizer optimizer,
                                 Bytes input_batch);

// Throws InputError naming the batch, the capacity and each part when the footprint does not fit.
void check_fits(const MemoryFootprint& m, Bytes capacity, long batch, const std::string& accelerator,
                const std::string& where);

} // namespace mlsim
