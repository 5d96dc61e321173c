// A software stack (CUDA / cuDNN / framework versions) as data: which path
// each op kind's kernels take when the model asks for 16-bit arithmetic.
//
//   native          the kernel computes in the 16-bit dtype; matmul/conv take
//                   the matrix path when the accelerator's fast-path rule holds
//   vector          16-bit arithmetic on the vector path only (no tensor cores)
//   fp32_with_casts the kernel computes in fp32: its 16-bit inputs (and weights)
//                   are cast to fp32 and its output back to 16-bit, each cast a
//                   memory-bound op of its own
// `tf32`: whether fp32 matmul/conv may use TF32 tensor cores under the tf32 policy.
// `fusion`: how the framework fuses kernels (none | xla | xla_gpu | torch_compile; fusion.hpp).
// `allocator: {block, segment}`: the device allocator's rounding (allocator_rounding.hpp;
// default PyTorch's caching allocator, 512 B blocks and 2 MiB segments).
// `optimizer_kernels`: how the framework's optimizer updates one weight tensor (backward_rules.hpp):
//   fused   one kernel reads weights, gradient and state once and writes weights and state once
//           (a fused or multi-tensor optimizer: apex FusedSGD, PyTorch 2.x foreach/fused, XLA)
//   per_op  each arithmetic step of the update is a kernel of its own over the whole tensor: PyTorch
//           1.x torch.optim loops over the tensors in Python (torch/optim/_functional.py), e.g.
//           momentum SGD buf.mul_(m).add_(g); param.add_(buf): 3 kernels, 8 tensor passes
// `zero_grad`: set_to_none (no kernel; PyTorch 2.x's default) or zero_fill (Optimizer.zero_grad()
//   before 2.0: one fill kernel per gradient tensor).
// `host_issue: {per_op, per_optimizer_call}`: the host's time to call one forward or backward op (a
//   fused optimizer is one such call for the whole update), and one call of a per_op optimizer's Python
//   loop (a kernel each); the device waits when the host issues slower than it runs (host_issue.hpp).
//   Absent: 0, the host is never the limit.
// `loss_scale_sync`: under fp16 mixed precision the host waits for the device before the optimizer
//   (PyTorch's GradScaler reads its found-inf flag with .item()), so the step's issue restarts there.
// Presets: sim/hardware/presets/stacks.yaml. Ignores: cuDNN's algorithm choice
// beyond Winograd for 3x3 convs (sim/hardware/kernel_model.hpp); that a multi-tensor
// (foreach) optimizer launches fewer kernels than one per tensor; weight decay and
// Nesterov's extra kernels under per_op.
#pragma once

#include "sim/pipeline/step_graph/allocator_rounding.hpp"
#include "sim/pipeline/step_graph/op.hpp"

#include <map>
#include <string>

namespace mlsim {

enum class SixteenBitPath { native, vector, fp32_with_casts };
template <> struct EnumNames<SixteenBitPath> {
  static constexpr std::array<std::pair<SixteenBitPath, std::string_view>, 3> table{{
      {SixteenBitPath::native, "native"}, {SixteenBitPath::vector, "vector"},
      {SixteenBitPath::fp32_with_casts, "fp32_with_casts"}}};
};
enum class FusionPolicy { none, xla, xla_gpu, torch_compile };
template <> struct EnumNames<FusionPolicy> {
  static constexpr std::array<std::pair<FusionPolicy, std::string_view>, 4> table{{
      {FusionPolicy::none, "none"}, {FusionPolicy::xla, "xla"}, {FusionPolicy::xla_gpu, "xla_gpu"},
      {FusionPolicy::torch_compile, "torch_compile"}}};
};

enum class OptimizerKernels { fused, per_op };
template <> struct EnumNames<OptimizerKernels> {
  static constexpr std::array<std::pair<OptimizerKernels, std::string_view>, 2> table{{
      {OptimizerKernels::fused, "fused"}, {OptimizerKernels::per_op, "per_op"}}};
};
enum class ZeroGrad { set_to_none, zero_fill };
template <> struct EnumNames<ZeroGrad> {
  static constexpr std::array<std::pair<ZeroGrad, std::string_view>, 2> table{{
      {ZeroGrad::set_to_none, "set_to_none"}, {ZeroGrad::zero_fill, "zero_fill"}}};
};

struct StackProfile {
  std::string name = "native";
  std::string source;
  std::map<OpKind, SixteenBitPath> sixteen_bit; // kinds not listed: native
  bool tf32 = true;
  FusionPolicy fusion = FusionPolicy::none;
  AllocatorRounding allocator;
  OptimizerKernels optimizer_kernels = OptimizerKernels::fused;
  ZeroGrad zero_grad = ZeroGrad::set_to_none;
  Seconds host_per_op{0.0};
  Seconds host_per_optimizer_call{0.0};
  bool loss_scale_sync = false;
  // The framework's own max-pool kernels (`max_pool`; PyTorch's keep the argmax indices and are bound by their
  // instructions, not by HBM): SM cycles per element by activation layout ("nhwc", "nchw"), the forward per
  // output element, the input gradient per input element. Empty: a plain memory-bound kernel.
  std::map<std::string, double> max_pool_forward_cycles;
  std::map<std::string, double> max_pool_backward_cycles;
  // Bytes per output element the forward keeps for the backward besides its input (`max_pool.index_bytes`;
  // max_pool2d_with_indices: the argmax as int64, 8). 0: the input alone (XLA's select-and-scatter).
  double max_pool_index_bytes = 0.0;

  SixteenBitPath path_for(OpKind k) const {
    auto it = sixteen_bit.find(k);
    return it == sixteen_bit.end() ? SixteenBitPath::native : it->second;
  }
};

} // namespace mlsim
