// Kernel fusion as a framework's compiler does it, on the ops of one step.
//
// A fused group runs as one kernel: one launch, and the tensors passed inside
// the group never touch HBM. Its bytes are
//   sum of members' bytes - 2 x (each tensor written by one member and read
//   only by the next member: the write and the read saved)
// (a tensor that something outside the group also reads, e.g. an activation
// saved for backward, is still written). FLOPs add up; the kind, dims and
// path are the first member's, so an output fusion keeps its conv's tiles or
// matrix-unit padding.
// Groups are chains in one phase: an op joins the group of its producer when
// it is the producer's only consumer in that phase and its other inputs are
// ready before the group starts; a reduction ends a group.
// Policies (stacks.yaml `fusion`):
//   none           eager PyTorch / TF without XLA: no fusion beyond what a
//                  cuDNN kernel does inside itself
//   xla            XLA (TPU, GPU): "output fusion" of a conv/matmul with its
//                  elementwise consumers, "loop fusion" of elementwise chains,
//                  "input fusion" of a chain into its reduction; named
//                  fusion.N as XLA's profiles show them
//   xla_gpu        XLA on a GPU: loop and input fusions as above, but a convolution or dot stays a
//                  cuDNN / cuBLAS call (XLA:GPU emits them as library custom calls; only a conv's
//                  bias, side input and ReLU fuse into cuDNN's fused kernel, never a batch norm)
//   torch_compile  TorchInductor: elementwise chains ("pointwise") and
//                  chains into a reduction ("reduction") as Triton kernels
//                  named triton_poi_fused_* / triton_red_fused_*; matmul and
//                  conv stay library calls (no epilogue fusion by default)
// Under every policy but none, each op except the library calls kept (conv, dot under xla_gpu and
// torch_compile) is marked `compiled`, fused or alone: XLA and Inductor expand a batch norm into
// reductions, so it is costed as a memory-bound kernel, not as cuDNN's batch norm (kernel_model.hpp).
// References: XLA operation semantics and HloInstruction::FusionKind (kLoop,
// kInput, kOutput); PyTorch 2 paper (Ansel et al., ASPLOS 2024), TorchInductor.
// Ignores: multi-output and horizontal fusion, recomputation, fusion across
// the forward/backward boundary, XLA's cost-model refusals.
#pragma once

#include "sim/pipeline/step_graph/backward_rules.hpp"
#include "sim/pipeline/step_graph/stack_profile.hpp"

#include <string>

namespace mlsim {

// The training graph with each fused group replaced by one op; indices in
// backward_begin, optimizer_begin and gradients follow.
TrainingGraph fuse_ops(const TrainingGraph& t, FusionPolicy policy);

} // namespace mlsim
