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
//   optimizer: one update per parameter tensor group. Fused (the default): one
//     kernel reading the weights, gradient and optimizer state once and writing
//     weights and state once. Per op (PyTorch 1.x torch.optim, stack_profile.hpp):
//     a kernel per arithmetic step, each reading and writing whole tensors --
//     SGD param.add_(g): 1 kernel, 2 reads + 1 write; momentum buf.mul_(m),
//     buf.add_(g), param.add_(buf): 3 kernels, 5 + 3; RMSprop sq.mul_(a),
//     sq.addcmul_(g, g), avg = sq.sqrt(), avg.add_(eps), param.addcdiv_(g, avg):
//     5 kernels, 8 + 5; Adam two moment updates (2 kernels each), sqrt, divide,
//     add eps and param.addcdiv_: 8 kernels, 12 + 8 (torch/optim/_functional.py,
//     PyTorch 1.8-1.12, without weight decay), each step over each parameter
//     tensor in turn (a conv's weight and bias: 2). zero_fill adds a fill kernel
//     per gradient tensor (Optimizer.zero_grad() before PyTorch 2.0).
//   accumulate: where a weight's gradient tensor already exists when the backward
//     makes a new one (zero-filled by zero_grad, or the earlier micro-batches' sum
//     under gradient accumulation), autograd's AccumulateGrad adds the new one into
//     it in place (`variable_grad += new_grad`, torch/csrc/autograd/functions/
//     accumulate_grad.h): one kernel per tensor, 2 reads + 1 write of the gradient
//     dtype. A gradient set to None is taken over without a kernel. Modelled as one
//     op per gradient group after the backward (the trainer skips them in a step's
//     first micro-batch when zero_grad sets to None); in the stream they run as each
//     gradient completes -- a few percent of the bytes of a micro-batch, not moved.
// The backward graph mirrors the forward one: a forward edge u -> v becomes
// dgrad(v) -> bwd(u), a weight edge becomes wgrad(v) -> bwd(u).
// References: Goodfellow et al., Deep Learning, 6.5 (back-propagation);
// the optimizer state counts are those of the published algorithms
// (momentum 1, RMSprop 1, Adam 2 tensors per weight).
#pragma once

#include "sim/pipeline/step_graph/op_graph.hpp"
#include "sim/pipeline/step_graph/stack_profile.hpp"

namespace mlsim {

// lamb: You et al. 2020 (Algorithm 2): Adam's moments, then per layer the norms of the weights and of the update
// and the update scaled by their ratio (BERT pre-training's optimizer).
enum class Optimizer { sgd, momentum, rmsprop, adam, lamb };
template <> struct EnumNames<Optimizer> {
  static constexpr std::array<std::pair<Optimizer, std::string_view>, 5> table{{
      {Optimizer::sgd, "sgd"}, {Optimizer::momentum, "momentum"}, {Optimizer::rmsprop, "rmsprop"},
      {Optimizer::adam, "adam"}, {Optimizer::lamb, "lamb"}}};
};
int optimizer_state_tensors(Optimizer o);

// An op after which a group of weight gradients is complete.
struct GradientReady {
  size_t op = 0;
  double parameters = 0.0;
  int tensors = 1; // the parameter tensors they are kept in
};

struct TrainingGraph {
  OpGraph graph;            // forward ops, then backward ops, then optimizer ops, in stream order
  size_t backward_begin = 0;
  size_t accumulate_begin = 0; // first AccumulateGrad add (== optimizer_begin: none)
  size_t optimizer_begin = 0;
  std::vector<GradientReady> gradients; // in the order the backward pass completes them
};

// The data gradient (dgrad) and weight gradient (wgrad) of a matmul or conv, and the one gradient op of any other
// op, as the backward pass builds them (the GPU calibration also costs cuDNN's measured convolutions and batch
// norms through them).
Op input_gradient(const Op& fwd);
Op weight_gradient(const Op& fwd);
Op generic_gradient(const Op& fwd);
Op fused_attention_gradient(const Op& fwd);

// How the framework runs the update of one weight tensor (the stack's optimizer_kernels and zero_grad).
struct OptimizerRun {
  OptimizerKernels kernels = OptimizerKernels::fused;
  ZeroGrad zero_grad = ZeroGrad::set_to_none;
  bool accumulate = false; // gradients can exist when the backward runs: add the AccumulateGrad ops
  bool write_back_16bit = false; // the update writes fp16 model weights from the fp32 masters (O2)
};

// One update's kernels (per parameter tensor under per_op, per group when fused) and whole-tensor passes
// (reads, writes, in units of the parameters), without zero_grad's fill.
struct UpdatePasses {
  int kernels = 1;
  double reads = 0.0, writes = 0.0;
};
UpdatePasses update_passes(Optimizer optimizer, OptimizerKernels kernels);

// `master` is the dtype of the weights the optimizer updates and of its state.
TrainingGraph add_backward_and_optimizer(const OpGraph& forward, Optimizer optimizer, DType master,
                                         OptimizerRun run = {});

} // namespace mlsim
