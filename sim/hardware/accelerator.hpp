// Accelerator spec: what one GPU or TPU core can do.
//
// Peak throughput per dtype on two paths: the matrix path (tensor cores, a
// TPU's matrix unit) and the vector path (CUDA cores / the vector unit). An
// op takes the matrix path only if its dtype has a matrix peak and its dims
// meet the path's rule, which is data:
//   - `fast_path_alignment` (tensor cores): every dim named in
//     `fast_path_dims[kind]` must be a multiple of it, else the op runs on the
//     vector path (NVIDIA, "Tensor Core Requirements", Deep Learning
//     Performance Guide: fp16 dims multiples of 8);
//   - `matrix_unit_size` (a TPU core's 128x128 systolic unit): the dims named
//     in `matrix_unit_dims` are padded up to multiples of it; the padding is
//     computed but useless, so utilisation = useful / padded FLOPs.
// HBM bandwidth bounds memory-bound ops (roofline); `launch_overhead` is paid
// per kernel; `kernels` (sim/hardware/kernel_model.hpp) says what kernels
// achieve of the peaks (tiles and waves over the SMs, fractions measured on
// real kernels); `efficiency[kind]` is a further factor per op kind (1.0
// unless a calibrated profile sets it).
// Ignores: clocks and power throttling, cache effects, concurrent kernels.
#pragma once

#include "sim/core/base/named_enum.hpp"
#include "sim/core/base/units.hpp"
#include "sim/hardware/kernel_model.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlsim {

enum class DType { fp32, tf32, fp16, bf16 };
template <> struct EnumNames<DType> {
  static constexpr std::array<std::pair<DType, std::string_view>, 4> table{{
      {DType::fp32, "fp32"}, {DType::tf32, "tf32"}, {DType::fp16, "fp16"}, {DType::bf16, "bf16"}}};
};
inline bool is_16bit(DType d) { return d == DType::fp16 || d == DType::bf16; }
// Storage size of one element (tf32 is stored as fp32).
Bytes element_size(DType d);

struct AcceleratorSpec {
  std::string name;
  std::map<DType, FlopsPerSec> matrix_peak; // tensor-core / matrix-unit peak, dense
  std::map<DType, FlopsPerSec> vector_peak; // CUDA-core / vector-unit peak
  int fast_path_alignment = 0;              // e.g. 8: fp16 dims must be multiples of 8 for tensor cores
  int matrix_unit_size = 0;                 // e.g. 128 on a TPU core: dims padded up to this
  // Which op dims the alignment rule checks, per op kind (dim names: batch, m, n, k, in_channels, out_channels).
  std::map<std::string, std::vector<std::string>> fast_path_dims{{"conv", {"in_channels", "out_channels"}},
                                                                 {"matmul", {"m", "n", "k"}}};
  // Which op dims a matrix unit maps onto its two sides (and so pads).
  std::vector<std::string> matrix_unit_dims{"batch", "n"};
  BytesPerSec memory_bandwidth{0.0};
  Bytes memory_size{0.0};
  Seconds launch_overhead{0.0};
  Hertz boost_clock{0.0};                   // the SMs' boost clock (datasheet); 0: not given (no cycle-bound kernels)
  std::map<std::string, double> efficiency; // per op kind, a further factor (a calibrated profile sets these)
  KernelParams kernels;                     // what kernels achieve of the peaks (empty: the plain roofline)

  // Peak on the vector path for `d` (fp32 peak for dtypes without one of their own).
  FlopsPerSec vector_peak_for(DType d) const;
  // The matrix-path peak for `d`, if the accelerator has one.
  std::optional<FlopsPerSec> matrix_peak_for(DType d) const;
  // Fraction of the roofline reached by ops of `kind` (1.0 when not given).
  double efficiency_for(const std::string& kind) const;
  // Names of the two paths as a profiler shows them.
  std::string matrix_path_name() const { return matrix_unit_size > 0 ? "matrix unit" : "tensor core"; }
  std::string vector_path_name() const { return matrix_unit_size > 0 ? "vector unit" : "CUDA core"; }
};

} // namespace mlsim
