// The `model:` section when it describes a graph (a preset, a layer list or an op list).
//
//   model: {preset: resnet50, input: [224, 224, 3], precision: mixed_fp16,
//           stack: cuda10.0-cudnn7.4.1-tf1.13.1, optimizer: momentum}
//   model: {layers: [{type: conv2d, filters: 32, kernel: 3, activation: relu}, ...],
//           input: [224, 336, 3], precision: fp16}
//   model: {ops: [{name: gemm, kind: matmul, flops: 2 GFLOP, bytes_read: 8 MB,
//                  bytes_written: 4 MB, dims: {m: 1024, n: 1024, k: 1024}}]}
// Common keys: name, precision (fp32 | tf32 | fp16 | mixed_fp16 | mixed_bf16),
// stack (a stacks.yaml name or an inline profile), optimizer (sgd | momentum |
// rmsprop | adam), gradient_bucket (all-reduce bucket size, default 25 MB as
// PyTorch DDP), input_dtype (dtype of the batch on arrival, default fp32), layout (nhwc | nchw: the
// activations' memory format, default nhwc; with nchw every convolution on tensor cores pays cuDNN's
// NCHW<->NHWC transposes, see op_cost.hpp).
#pragma once

#include "sim/pipeline/step_graph/backward_rules.hpp"
#include "sim/pipeline/step_graph/explicit_ops.hpp"
#include "sim/pipeline/step_graph/layer_spec.hpp"
#include "sim/pipeline/step_graph/precision_policy.hpp"
#include "sim/pipeline/step_graph/stack_profile.hpp"

#include <string>
#include <vector>

namespace mlsim {

enum class ActivationLayout { nhwc, nchw };
template <> struct EnumNames<ActivationLayout> {
  static constexpr std::array<std::pair<ActivationLayout, std::string_view>, 2> table{{
      {ActivationLayout::nhwc, "nhwc"}, {ActivationLayout::nchw, "nchw"}}};
};

struct GraphModel {
  std::string name = "model";
  std::vector<LayerSpec> layers; // either layers (with input) ...
  Shape input;
  std::vector<ExplicitOp> ops;   // ... or explicit ops
  PrecisionPolicy precision = PrecisionPolicy::fp32;
  StackProfile stack;
  Optimizer optimizer = Optimizer::sgd;
  Bytes gradient_bucket{25e6};
  DType input_dtype = DType::fp32;
  ActivationLayout layout = ActivationLayout::nhwc;
  std::string where; // the model node's position, for errors found while planning
};

} // namespace mlsim
