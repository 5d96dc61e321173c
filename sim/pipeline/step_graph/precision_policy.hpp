// Precision policies: which dtype each forward op computes and stores in, and
// the casts inserted where dtypes meet.
//
//   fp32        everything fp32
//   tf32        matmul/conv compute in TF32 (stored as fp32); the rest fp32
//   fp16        "pure" half: a framework's float type set to float16 — every
//               op, weight and optimizer state in fp16 (Keras set_floatx)
//   mixed_fp16 / mixed_bf16
//               matmul/conv in 16-bit; elementwise ops follow their input;
//               softmax, layer norm, losses and reductions in fp32; fp32 master
//               weights, cast to 16-bit for each weighted op every step
//               (Micikevicius et al., "Mixed Precision Training", ICLR 2018;
//               PyTorch autocast op lists)
//   mixed_fp16_o2
//               the model itself in fp16 (apex AMP opt_level O2, Megatron-LM's
//               and DeepSpeed's fp16): every op computes and stores in fp16
//               (softmax, norms and the loss too, accumulating in fp32 inside
//               their kernels), weights and gradients in fp16; the optimizer
//               keeps fp32 master weights and state, and writes the fp16
//               weights back after each update. Memory: 2 + 2 + K bytes a
//               parameter, K = 4 x (1 + states) (Rajbhandari et al., "ZeRO",
//               SC 2020, 3.1: 16 with Adam)
// A cast reads n elements in one dtype and writes n in another: a memory-bound
// op of n * (size_in + size_out) bytes. The stack profile may wrap a 16-bit op
// in casts to and from fp32 (its fp32 fallback path). Ignores: loss scaling,
// casts fused into neighbouring kernels.
#pragma once

#include "sim/pipeline/step_graph/op_graph.hpp"
#include "sim/pipeline/step_graph/stack_profile.hpp"

namespace mlsim {

enum class PrecisionPolicy { fp32, tf32, fp16, mixed_fp16, mixed_bf16, mixed_fp16_o2 };
template <> struct EnumNames<PrecisionPolicy> {
  static constexpr std::array<std::pair<PrecisionPolicy, std::string_view>, 6> table{{
      {PrecisionPolicy::fp32, "fp32"}, {PrecisionPolicy::tf32, "tf32"}, {PrecisionPolicy::fp16, "fp16"},
      {PrecisionPolicy::mixed_fp16, "mixed_fp16"}, {PrecisionPolicy::mixed_bf16, "mixed_bf16"},
      {PrecisionPolicy::mixed_fp16_o2, "mixed_fp16_o2"}}};
};
// The dtype weights are kept (and updated) in: fp16 for pure fp16, else fp32.
DType master_dtype(PrecisionPolicy p);
// The dtype the model's own weights are held in: fp16 for pure fp16 and for a model cast to fp16 (O2).
DType model_weight_dtype(PrecisionPolicy p);
// The dtype of the weight gradients that are all-reduced: the model's weights' (O2 reduces its fp16 gradients).
inline DType gradient_dtype(PrecisionPolicy p) { return model_weight_dtype(p); }
// Whether the optimizer's fp32 master weights are written back to the model's 16-bit ones after each update.
inline bool writes_back_16bit_weights(PrecisionPolicy p) { return p == PrecisionPolicy::mixed_fp16_o2; }
// Whether the framework scales the loss (fp16 with fp32 master weights: autocast's GradScaler, apex's scaler).
inline bool scales_loss(PrecisionPolicy p) {
  return p == PrecisionPolicy::mixed_fp16 || p == PrecisionPolicy::mixed_fp16_o2;
}
// Whether each weighted op reads a 16-bit copy of fp32 master weights.
bool keeps_16bit_weight_copies(PrecisionPolicy p);

// The forward graph with dtypes assigned and casts inserted. `input_dtype` is
// the dtype of the batch as it arrives on the device.
OpGraph apply_precision(const OpGraph& forward, PrecisionPolicy policy, const StackProfile& stack, DType input_dtype);

} // namespace mlsim
