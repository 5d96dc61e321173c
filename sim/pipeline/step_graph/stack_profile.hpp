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
// Presets: sim/hardware/presets/stacks.yaml. Ignores: cuDNN's algorithm choice
// beyond Winograd for 3x3 convs (sim/hardware/kernel_model.hpp); the optimizer's
// kernel count (PyTorch 1.x's torch.optim loops over tensors, 2.x uses foreach).
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

struct StackProfile {
  std::string name = "native";
  std::string source;
  std::map<OpKind, SixteenBitPath> sixteen_bit; // kinds not listed: native
  bool tf32 = true;
  FusionPolicy fusion = FusionPolicy::none;
  AllocatorRounding allocator;

  SixteenBitPath path_for(OpKind k) const {
    auto it = sixteen_bit.find(k);
    return it == sixteen_bit.end() ? SixteenBitPath::native : it->second;
  }
};

} // namespace mlsim
