// One op of a training step, before and after the accelerator model costs it.
//
// Layer builders describe an op by element counts (activation elements read
// and written, weight elements) and FLOPs for the whole per-device batch; the
// precision pass then gives it dtypes, which turn elements into bytes. Dims
// (m, n, k of the GEMM view, batch, channels) decide the fast path.
// Conventions: FLOPs = 2 x multiply-adds; a conv's GEMM view is
// m = batch x output positions, n = output channels, k = in_channels x kh x kw.
#pragma once

#include "sim/core/base/units.hpp"
#include "sim/hardware/accelerator.hpp"
#include "sim/pipeline/step_plan.hpp"

#include <map>
#include <string>
#include <vector>

namespace mlsim {

enum class OpKind { matmul, conv, elementwise, reduction, cast, copy, collective };
std::string to_string(OpKind k);
// nullopt-free parse for code: throws InternalError on an unknown name.
OpKind op_kind_from_string(const std::string& s);
inline bool is_matrix_kind(OpKind k) { return k == OpKind::matmul || k == OpKind::conv; }

enum class Phase { forward, backward, optimizer };
std::string to_string(Phase p);

// How the precision policy treats an op in mixed precision.
enum class PrecisionClass {
  matrix,       // matmul/conv: 16-bit under mixed precision
  follow_input, // elementwise, pooling, concat: computes in its input's dtype
  needs_fp32,   // softmax, norms, loss, reductions: fp32 under mixed precision
};
template <> struct EnumNames<PrecisionClass> {
  static constexpr std::array<std::pair<PrecisionClass, std::string_view>, 3> table{{
      {PrecisionClass::matrix, "matrix"}, {PrecisionClass::follow_input, "follow_input"},
      {PrecisionClass::needs_fp32, "needs_fp32"}}};
};

struct Op {
  std::string name;  // "conv2/fwd"
  std::string layer; // the layer it came from
  OpKind kind = OpKind::elementwise;
  Phase phase = Phase::forward;
  PrecisionClass precision_class = PrecisionClass::follow_input;
  OpPlacement placement = OpPlacement::device;
  Flops flops{0.0};            // useful FLOPs for the whole batch
  double in_elements = 0.0;    // activation elements read
  double out_elements = 0.0;   // activation elements written
  double param_elements = 0.0; // weight elements read (forward) or weight-gradient elements written (wgrad)
  std::map<std::string, long> dims; // batch, m, n, k, in_channels, out_channels (those that apply)
  bool reads_model_input = false;   // its activation input is the batch itself, not another op

  // Set by the precision pass.
  DType compute_dtype = DType::fp32; // the dtype its arithmetic runs in (decides the path)
  DType in_dtype = DType::fp32;      // dtype of the activations it reads
  DType out_dtype = DType::fp32;     // dtype of the activations it writes
  DType param_dtype = DType::fp32;   // dtype of the weights it reads or the gradients it writes
  bool forced_vector_path = false;   // the software stack keeps it off the matrix path
  bool nchw_activations = false;     // a conv or batch norm whose activations are NCHW: tensor-core convs transpose
                                     // them, batch norms take cuDNN's per-channel kernels
  bool channel_statistics = false;   // a batch norm: statistics per channel over batch and positions
  bool weight_gradient = false;      // a matmul/conv computing its weights' gradient (wgrad)
  bool statistics_pass = false;      // a normalisation: reads its input once for statistics, once to normalise
  bool gradient_passes_through = false; // an add: autograd hands its output's gradient to its inputs, no kernel
  int kernels = 1;                   // kernels it launches one after another (a per-op optimizer update: several)
  std::string note;                  // why it exists, for casts: "mixed precision", "stack fp32 fallback"

  // Parameters owned by this op (forward ops only): their gradients are all-reduced.
  double owned_parameters = 0.0;
  int owned_tensors = 0; // the tensors they are kept in (a conv's weight and bias: 2), as an optimizer loops over them

  // Set by the fusion pass when this op stands for several (sim/pipeline/step_graph/fusion.hpp).
  std::string fusion;             // "output fusion", "loop fusion", "input fusion", "pointwise", "reduction"
  std::vector<std::string> fused; // the names of the ops it stands for, in stream order

  Bytes bytes() const {
    return element_size(in_dtype) * in_elements + element_size(out_dtype) * out_elements +
           element_size(param_dtype) * param_elements;
  }
};

} // namespace mlsim
