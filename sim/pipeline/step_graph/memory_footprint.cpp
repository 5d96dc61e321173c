#include "sim/pipeline/step_graph/memory_footprint.hpp"

#include "sim/core/base/errors.hpp"

#include <algorithm>
#include <set>
#include <string>

namespace mlsim {

namespace {
// The op's name after its layer: "conv1_relu/relu" -> "relu".
std::string op_type(const Op& op) {
  auto slash = op.name.rfind('/');
  return slash == std::string::npos ? op.name : op.name.substr(slash + 1);
}

enum class Saves { inputs, output, mask, nothing };

// What the op's backward reads of the forward activations (PyTorch autograd's saved tensors).
Saves saved_by(const Op& op) {
  if (is_matrix_kind(op.kind))
    return Saves::inputs; // dW = dY^T X needs X; dX = dY W needs only the weights
  if (op.kind == OpKind::cast || op.kind == OpKind::copy)
    return Saves::nothing; // a cast's gradient is a cast back; concat/gather route gradients
  const std::string t = op_type(op);
  if (t == "relu" || t == "sigmoid" || t == "tanh" || t == "softmax")
    return Saves::output; // their derivative is a function of the output (in-place ReLU keeps only that)
  if (t == "add" || t == "concat" || t == "flatten" || t == "avg_pool" || t == "mean")
    return Saves::nothing; // gradients pass through, or need only the shape
  if (t == "dropout")
    return Saves::mask; // a one-byte keep mask per element
  return Saves::inputs; // batch/layer norm, max pooling, leaky ReLU, GELU, losses
}
} // namespace

MemoryFootprint memory_footprint(const OpGraph& forward, PrecisionPolicy policy, Optimizer optimizer,
                                 Bytes input_batch, const AllocatorRounding& allocator) {
  MemoryFootprint m;
  double params = 0.0;
  m.activations = input_batch;
  std::vector<Bytes> tensors{input_batch}; // each a block of its own, for the allocator
  std::vector<double> op_params;
  std::set<size_t> saved; // ops whose output tensor stays alive for the backward pass, each once
  Bytes largest{0.0};
  for (size_t i = 0; i < forward.ops.size(); ++i) {
    const Op& op = forward.ops[i];
    if (op.placement != OpPlacement::device)
      continue;
    params += op.owned_parameters;
    if (op.owned_parameters > 0)
      op_params.push_back(op.owned_parameters);
    Bytes out = element_size(op.out_dtype) * op.out_elements;
    largest = max(largest, out);
    switch (saved_by(op)) {
    case Saves::inputs:
      for (size_t p : forward.producers(i))
        saved.insert(p);
      break;
    case Saves::output: saved.insert(i); break;
    case Saves::mask:
      m.activations += Bytes(op.out_elements);
      tensors.push_back(Bytes(op.out_elements));
      break;
    case Saves::nothing: break;
    }
  }
  for (size_t i : saved)
    if (forward.ops[i].placement == OpPlacement::device) {
      Bytes t = element_size(forward.ops[i].out_dtype) * forward.ops[i].out_elements;
      m.activations += t;
      tensors.push_back(t);
    }
  // The backward pass holds, besides the saved tensors, the gradient flowing in and the one flowing out of
  // the op it runs: at most twice the largest activation.
  m.workspace = largest * 2.0;
  tensors.insert(tensors.end(), 2, largest);
  Bytes master = element_size(master_dtype(policy));
  const bool copies = keeps_16bit_weight_copies(policy);
  const double states = optimizer_state_tensors(optimizer);
  m.weights = master * params + (copies ? Bytes(2.0) * params : Bytes(0.0));
  m.gradients = master * params;
  m.optimizer_state = master * (params * states);
  // Per op: its weights, their gradients, each optimizer state, and the 16-bit copy.
  for (double p : op_params) {
    tensors.insert(tensors.end(), 2 + static_cast<size_t>(states), master * p);
    if (copies)
      tensors.push_back(Bytes(2.0 * p));
  }
  m.allocator = allocator.reserved(tensors) - m.tensors();
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
                       ", optimizer state " + format_bytes(m.optimizer_state) + ", activations saved for backward " +
                       format_bytes(m.activations) + ", backward working set " + format_bytes(m.workspace) +
                       ", allocator rounding " + format_bytes(m.allocator) + ")");
}

} // namespace mlsim
