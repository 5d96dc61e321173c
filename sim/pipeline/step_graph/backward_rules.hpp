// Backward and optimizer ops derived from the forward ops by rule.
//
//   matmul / conv: an input-gradient op (dgrad) and a weight-gradient op
//     (wgrad), each with the forward FLOPs, so backward ~ 2x forward; dgrad is
//     skipped when nothing upstream needs a gradient (the first layer).
//   cast: the gradient is cast back the other way (same element count).
//   other ops: one op with the forward FLOPs that reads the output gradient
//     and the saved input and writes the input gradient (and parameter
//     gradients, e.g. layer-norm scales). A normalisation's backward reads
//     both twice (a reduction pass, then the elementwise pass: PyTorch's
//     batch_norm_backward_reduce + batch_norm_backward_elemt).
//   add: no kernel; autograd hands the output gradient to every input.
//   an output read by k > 1 ops: one add summing the k gradients (autograd's
//     accumulation), read k tensors, write 1.
//   optimizer: one update per parameter tensor group, reading the weights,
//     gradient and optimizer state and writing weights and state.
// The backward graph mirrors the forward one: a forward edge u -> v becomes
// dgrad(v) -> bwd(u), a weight edge becomes wgrad(v) -> bwd(u).
// References: Goodfellow et al., Deep Learning, 6.5 (back-propagation);
// the optimizer state counts are those of the published algorithms
// (momentum 1, RMSprop 1, Adam 2 tensors per weight).
#pragma once

#include "sim/pipeline/step_graph/op_graph.hpp"

namespace mlsim {

enum class Optimizer { sgd, momentum, rmsprop, adam };
template <> struct EnumNames<Optimizer> {
  static constexpr std::array<std::pair<Optimizer, std::string_view>, 4> table{{
      {Optimizer::sgd, "sgd"}, {Optimizer::momentum, "momentum"}, {Optimizer::rmsprop, "rmsprop"},
      {Optimizer::adam, "adam"}}};
};
int optimizer_state_tensors(Optimizer o);

// An op after which a group of weight gradients is complete.
struct GradientReady {
  size_t op = 0;
  double parameters = 0.0;
};

struct TrainingGraph {
  OpGraph graph;            // forward ops, then backward ops, then optimizer ops, in stream order
  size_t backward_begin = 0;
  size_t optimizer_begin = 0;
  std::vector<GradientReady> gradients; // in the order the backward pass completes them
};

// The data gradient (dgrad) and weight gradient (wgrad) of a matmul or conv, and the one gradient op of any other
// op, as the backward pass builds them (the GPU calibration also costs cuDNN's measured convolutions and batch
// norms through them).
Op input_gradient(const Op& fwd);
Op weight_gradient(const Op& fwd);
Op generic_gradient(const Op& fwd);

// `master` is the dtype of the weights the optimizer updates and of its state.
TrainingGraph add_backward_and_optimizer(const OpGraph& forward, Optimizer optimizer, DType master);

} // namespace mlsim
