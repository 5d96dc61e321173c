// Accelerator spec: what one GPU or TPU core can do.
//
// Peak throughput per dtype on two paths: the matrix path (tensor cores, a
// TPU's matrix unit) and the vector path (CUDA cores / the vector unit). An
// op takes the matrix path only if its dtype has a matrix peak and its dims
// meet the path's rule (multiples of `fast_path_alignment`; a matrix unit of
// `matrix_unit_size` pads the mapped dims up to that size). HBM bandwidth
// bounds memory-bound ops (roofline); `launch_overhead` is paid per kernel.
// Ignores: clocks and power throttling, cache effects, concurrent kernels.
#pragma once

#include "sim/core/config_node.hpp"
#include "sim/core/units.hpp"

#include <map>
#include <optional>
#include <string>

namespace mlsim {

enum class DType { fp32, tf32, fp16, bf16 };
std::string to_string(DType d);
DType parse_dtype(const ConfigNode& node);
inline bool is_16bit(DType d) { return d == DType::fp16 || d == DType::bf16; }

struct AcceleratorSpec {
  std::string name;
  std::map<DType, FlopsPerSec> matrix_peak; // tensor-core / matrix-unit peak, dense
  std::map<DType, FlopsPerSec> vector_peak; // CUDA-core / vector-unit peak
  int fast_path_alignment = 0;              // e.g. 8: fp16 dims must be multiples of 8 for tensor cores
  int matrix_unit_size = 0;                 // e.g. 128 on a TPU core: dims padded up to this
  BytesPerSec memory_bandwidth{0.0};
  Bytes memory_size{0.0};
  Seconds launch_overhead{0.0};
  std::map<std::string, double> efficiency; // per op kind, fraction of peak reached (calibration fits these)

  // Peak on the vector path for `d` (fp32 peak for dtypes without one of their own).
  FlopsPerSec vector_peak_for(DType d) const;
};

// Parses `hardware.nodes.N.accelerators` (after preset resolution).
AcceleratorSpec parse_accelerator(const ConfigNode& node);

} // namespace mlsim
