// Device memory held during one training step, as frameworks allocate it.
//
//   weights     = P x size(master) (+ P x 2 for the 16-bit copies of mixed precision, or the fp16 model
//                 weights of mixed_fp16_o2 beside its fp32 masters)
//   gradients   = P x size(gradient dtype): the master's, fp16 under mixed_fp16_o2
//   optimizer   = P x states x size(master)
//   activations = the input batch + each tensor some backward op reads, once
//                 (autograd's saved tensors): a conv/matmul keeps its input,
//                 ReLU/sigmoid/tanh/softmax their output (so an in-place ReLU
//                 after batch norm adds nothing beyond the tensor the next
//                 conv keeps), norms/max-pool/leaky ReLU their input, dropout
//                 a one-byte mask, add/concat/casts/average pooling nothing,
//                 and a stack's max pool its argmax (`max_pool.index_bytes`
//                 per output element: PyTorch's int64); each in the dtype it
//                 was written (16-bit under mixed precision where the op
//                 computes in 16-bit)
//   workspace   = max over the ops i, in backward order, of
//                   saved(<= i) + grad(out_i) + sum grad(t) for every tensor t
//                   made before op i and read by op i or a later op
//                 less all the saved tensors: while op i's backward runs, the
//                 tensors saved by it and the ops before it are alive (each
//                 is freed with the backward of the first op that saved it),
//                 and so are the gradients of its output, of its inputs, and
//                 of every skip path whose producer's backward has not run
//   allocator   = what the caching allocator reserves for all these tensors
//                 (one per op and part) beyond their sizes: blocks rounded to
//                 512 B, segments of 2 MiB / 20 MiB, large tensors rounded to
//                 2 MiB (allocator_rounding.hpp; the stack's `allocator:`)
// P counts only parameters of device-placed ops. Ignores: the caching
// allocator's reuse fragmentation (freed blocks of other sizes), cuDNN
// algorithm workspaces, the CUDA context (a few hundred MB outside the
// framework's accounting), activation recomputation, gradients freed and
// reused within one op's backward, the weight gradients' own timing (they are
// counted whole, as the optimizer needs them).
// Reference: PyTorch autograd "saved tensors" (torch.autograd.graph
// saved_tensors_hooks docs); the derivatives in tools/autograd/derivatives.yaml.
#pragma once

#include "sim/pipeline/step_graph/allocator_rounding.hpp"
#include "sim/pipeline/step_graph/backward_rules.hpp"
#include "sim/pipeline/step_graph/op_graph.hpp"
#include "sim/pipeline/step_graph/precision_policy.hpp"

namespace mlsim {

struct MemoryFootprint {
  Bytes weights{0.0}, gradients{0.0}, optimizer_state{0.0}, activations{0.0};
  Bytes workspace{0.0}; // the backward pass's working set beyond the saved tensors
  Bytes allocator{0.0}; // reserved by the allocator beyond the tensors' sizes (rounding, segment tails)
  Bytes tensors() const { return weights + gradients + optimizer_state + activations + workspace; }
  Bytes total() const { return tensors() + allocator; }
};

// `forward` has dtypes assigned (after apply_precision).
MemoryFootprint memory_footprint(const OpGraph& forward, PrecisionPolicy policy, Optimizer optimizer,
                                 Bytes input_batch, const AllocatorRounding& allocator = {});

// Throws InputError naming the batch, the capacity and each part when the footprint does not fit.
void check_fits(const MemoryFootprint& m, Bytes capacity, long batch, const std::string& accelerator,
                const std::string& where);

} // namespace mlsim
