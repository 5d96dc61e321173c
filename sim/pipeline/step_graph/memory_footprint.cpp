#include "sim/pipeline/step_graph/memory_footprint.hpp"

#include "sim/core/base/errors.hpp"
#include "sim/core/base/units_parse.hpp"

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

// The backward pass's working set beyond the saved tensors, from a sweep over the ops in backward order
// (the reverse of the forward's). While op i's backward runs, the tensors saved for it and for the ops
// before it are still alive (a saved tensor is freed with the backward of the first op that saved it),
// and so are the gradients of op i's output and of every tensor whose consumers have begun their backward
// while its producer has not (op i's inputs, a residual block's skip path). The peak of the two together,
// less all the saved tensors, is the working set; the end of the forward (everything saved, no gradient
// yet) is the floor. `saved_bytes[p]`: what tensor p adds when saved (0: not saved); `first_saver[p]`: the
// first op that saves it; `last_reader[p]`: the last op that reads it (p when none does).
Bytes backward_working_set(const OpGraph& forward, const std::vector<double>& out_bytes,
                           const std::vector<double>& saved_bytes, const std::vector<size_t>& first_saver,
                           const std::vector<size_t>& last_reader) {
  const size_t n = forward.ops.size();
  std::vector<double> saved_from(n + 1, 0.0), grad_delta(n + 2, 0.0);
  double all_saved = 0.0;
  for (size_t p = 0; p < n; ++p) {
    if (saved_bytes[p] > 0) {
      saved_from[first_saver[p]] += saved_bytes[p];
      all_saved += saved_bytes[p];
    }
    if (forward.ops[p].placement != OpPlacement::device)
      continue;
    const size_t last = last_reader[p];
    if (last > p) { // its gradient lives from its last consumer's backward down to just after its producer's
      grad_delta[p + 1] += out_bytes[p];
      grad_delta[last + 1] -= out_bytes[p];
    }
  }
  double saved = 0.0, grads = 0.0, peak = 0.0;
  for (size_t i = 0; i < n; ++i) {
    saved += saved_from[i]; // saved by op i or before: alive during op i's backward
    grads += grad_delta[i];
    if (forward.ops[i].placement != OpPlacement::device)
      continue;
    const double live = saved + grads + out_bytes[i]; // + the gradient of op i's own output
    peak = std::max(peak, live);
  }
  return Bytes(std::max(0.0, peak - all_saved));
}

} // namespace

MemoryFootprint memory_footprint(const OpGraph& forward, PrecisionPolicy policy, Optimizer optimizer,
                                 Bytes input_batch, const AllocatorRounding& allocator) {
  MemoryFootprint m;
  double params = 0.0;
  m.activations = input_batch;
  std::vector<Bytes> tensors{input_batch}; // each a block of its own, for the allocator
  std::vector<double> op_params;
  const size_t n = forward.ops.size();
  std::vector<double> out_bytes(n, 0.0), saved_bytes(n, 0.0);
  std::vector<size_t> first_saver(n, n), last_reader(n);
  std::vector<std::vector<size_t>> readers(n); // one pass over the edges: each op's consumers
  for (const OpEdge& e : forward.edges)
    readers[e.from].push_back(e.to);
  for (size_t p = 0; p < n; ++p)
    last_reader[p] = readers[p].empty() ? p : std::max(p, *std::max_element(readers[p].begin(), readers[p].end()));
  auto save = [&](size_t tensor, size_t by) { first_saver[tensor] = std::min(first_saver[tensor], by); };
  for (size_t i = 0; i < n; ++i) {
    const Op& op = forward.ops[i];
    if (op.placement != OpPlacement::device)
      continue;
    params += op.owned_parameters;
    if (op.owned_parameters > 0)
      op_params.push_back(op.owned_parameters);
    out_bytes[i] = (element_size(op.out_dtype) * op.out_elements).value();
    switch (saved_by(op)) {
    case Saves::inputs:
      for (size_t p : forward.producers(i))
        save(p, i);
      break;
    case Saves::output: save(i, i); break;
    case Saves::mask: // a tensor of its own, freed with the op's backward
      saved_bytes[i] += op.out_elements;
      save(i, i);
      break;
    case Saves::nothing: break;
    }
    if (op.index_bytes > 0) { // where each maximum was (PyTorch's max pool: an int64 per output element)
      saved_bytes[i] += op.index_bytes * op.out_elements;
      save(i, i);
    }
  }
  for (size_t p = 0; p < n; ++p) {
    if (first_saver[p] == n || forward.ops[p].placement != OpPlacement::device)
      continue;
    const Op& by = forward.ops[first_saver[p]];
    const bool own_output = first_saver[p] == p && (saved_by(by) == Saves::output);
    const bool read_by_later = std::any_of(readers[p].begin(), readers[p].end(), [&](size_t c) {
      return forward.ops[c].placement == OpPlacement::device && saved_by(forward.ops[c]) == Saves::inputs;
    });
    if (own_output || read_by_later) // the tensor itself, once, whoever saves it
      saved_bytes[p] += out_bytes[p];
  }
  for (size_t p = 0; p < n; ++p)
    if (saved_bytes[p] > 0) {
      m.activations += Bytes(saved_bytes[p]);
      tensors.push_back(Bytes(saved_bytes[p]));
    }
  m.workspace = backward_working_set(forward, out_bytes, saved_bytes, first_saver, last_reader);
  if (m.workspace.value() > 0) // the gradients in flight, as one block
    tensors.push_back(m.workspace);
  Bytes master = element_size(master_dtype(policy));
  const bool copies = keeps_16bit_weight_copies(policy);
  const double states = optimizer_state_tensors(optimizer);
  // O2: the fp16 model weights and gradients beside the fp32 masters (gradient_dtype: fp16).
  const bool half_model = writes_back_16bit_weights(policy);
  m.weights = master * params + (copies || half_model ? Bytes(2.0) * params : Bytes(0.0));
  m.gradients = element_size(gradient_dtype(policy)) * params;
  m.optimizer_state = master * (params * states);
  // Per op: its weights, their gradients, each optimizer state, and the 16-bit copy.
  for (double p : op_params) {
    tensors.insert(tensors.end(), 1 + static_cast<size_t>(states), master * p);
    tensors.push_back(element_size(gradient_dtype(policy)) * p);
    if (copies || half_model)
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
