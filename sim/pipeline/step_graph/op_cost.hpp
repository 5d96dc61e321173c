// The time of one op on the accelerator: what its kernel achieves under a
// roofline with a fast-path rule. This is the function other parts (trace
// import, studies) call for "the achievable time of an op of kind K with dims
// D on accelerator A": cost_device_op(op, acc).
//
//   executed FLOPs = useful FLOPs x padding (matrix unit: product over the
//                    mapped dims of ceil(d / size) * size / d; else 1)
//   compute = matmul/conv with m, n, k on a GPU with a tile model: waves of
//             tiles (sim/hardware/kernel_model.hpp, gemm_time); otherwise
//             executed FLOPs / (peak(path, dtype) x fraction(path, dtype))
//   memory  = memory_latency + bytes / (HBM bandwidth x memory_fraction); a batch norm the stack leaves to
//             cuDNN (not compiled, not fused): its measured norm_fraction / norm_latency per layout and,
//             NCHW, no faster than its channels' CTAs move bytes (kernel_model.hpp, batch_norm_time)
//   issue   = sm_cycles / (SMs x boost_clock): a kernel bound by its instructions (the stack's max pool)
//   t = launch_overhead + max(compute, memory, issue) / efficiency(kind)
//       + for an op that launches k > 1 kernels one after another (a per-op optimizer update,
//         backward_rules.hpp): (k - 1) x (launch_overhead + memory_latency), its bytes already the
//         sum of the kernels' passes
//       + for a conv on tensor cores with NCHW activations (model.layout: nchw):
//         a launch per activation tensor it reads or writes (input, output) + memory_latency + 2 x their
//         bytes / rate: the transposes to and from NHWC that cuDNN runs around its tensor-core kernels (NVIDIA,
//         "Convolutional Layers User's Guide", Tensor Layouts In Memory: NCHW vs NHWC)
//   a 3x3 stride-1 conv on the vector path: the faster of that and cuDNN's
//         Winograd kernels (kernel_model.hpp, winograd_conv_time)
//   a grouped conv (G groups): its dims are one group's (n = C_out/G, k = C_in/G x kh x kw, the alignment
//         rule on C_in/G and C_out/G) and its FLOPs all groups', so the tile model runs a batched GEMM G times
//         as tall; the faster of that and a direct kernel (cuDNN's grouped and depthwise kernels),
//         max(FLOPs / (vector peak x vector_fraction), memory): no tiles to fill, no measured fraction of its
//         own (the vector path's is taken). Ignores: Winograd for grouped convs (not offered to them here).
// The path: matmul/conv whose compute dtype has a matrix peak take the matrix
// path if the tensor-core alignment rule holds (or always, padded, on a
// matrix unit) and the stack does not keep them off it; everything else runs
// on the vector path at the dtype's vector peak.
// utilization = useful FLOPs / (t x peak of the path taken);
// matrix_unit_utilization = useful / executed FLOPs (the padding waste alone).
// Host ops: t = FLOPs / host core peak (x a slowdown for 16-bit, which most
// CPUs emulate), in core-seconds.
// Reference: Williams, Waterman & Patterson, "Roofline", CACM 52(4), 2009;
// NVIDIA Deep Learning Performance Guide (tensor-core dims); Cloud TPU
// performance guide (padding to the 128x128 matrix unit).
#pragma once

#include "sim/hardware/accelerator.hpp"
#include "sim/pipeline/step_graph/op.hpp"

#include <string>

namespace mlsim {

struct OpCost {
  Seconds duration{0.0};
  std::string path;
  bool matrix_path = false;
  Flops executed_flops{0.0};
  FlopsPerSec peak{0.0};
  Bytes bytes{0.0};
  double utilization = 0.0;
  double matrix_unit_utilization = 1.0;
  std::string why; // the cause of its time: tiles and waves, padding, or memory-bound
};

// Whether every dim the accelerator's rule names for this op kind is a multiple of the alignment.
bool meets_alignment(const Op& op, const AcceleratorSpec& acc);
// Executed / useful FLOPs on a matrix unit (1 when the accelerator has none).
double matrix_unit_padding(const Op& op, const AcceleratorSpec& acc);

OpCost cost_device_op(const Op& op, const AcceleratorSpec& acc);

struct HostSpeed {
  FlopsPerSec core_peak{32e9};    // one core, fp32
  double sixteen_bit_slowdown = 1.0; // 16-bit arithmetic emulated in software costs this much more
};
OpCost cost_host_op(const Op& op, const HostSpeed& host);

} // namespace mlsim
