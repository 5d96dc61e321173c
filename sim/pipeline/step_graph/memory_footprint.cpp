#include "sim/pipeline/step_graph/memory_footprint.hpp"

#include "sim/core/base/errors.hpp"

namespace mlsim {

MemoryFootprint memory_footprint(const OpGraph& forward, PrecisionPolicy policy, Optimizer optimizer,
                                 Bytes input_batch) {
  MemoryFootprint m;
  double params = 0.0;
  m.activations = input_batch;
  for (const auto& op : forward.ops) {
    if (op.placement != OpPlacement::device)
      continue;
    params += op.owned_parameters;
    m.activations += element_size(op.out_dtype) * op.out_elements;
  }
  Bytes master = element_size(master_dtype(policy));
  m.weights = master * params + (keeps_16bit_weight_copies(policy) ? Bytes(2.0) * params : Bytes(0.0));
  m.gradients = master * params;
  m.optimizer_state = master * (params * optimizer_state_tensors(optimizer));
  return m;
}

void check_fits(const MemoryFootprint& m, Bytes capacity, long batch, const std::string& accelerator,
                const std::string& where) {
  if (m.total() <= capacity)
    return;
  throw InputError(where, "model",
                   "a per-device batch whose training step fits in the " + format_bytes(capacity) + " of " +
                       accelerator,
                   "batch " + std::to_string(batch) + " needing " + format_bytes(m.total()) + " (weights " +
                       format_bytes(m.weights) + ", gradients " + format_bytes(m.gradients) +
                       ", optimizer state " + format_bytes(m.optimizer_state) + ", activations " +
                       format_bytes(m.activations) + ")");
}

} // namespace mlsim
