#include "sim/pipeline/trace/device_scaling.hpp"

namespace mlsim {

double achievable_rate(KernelClass cls, DType d, const AcceleratorSpec& acc) {
  if (cls == KernelClass::memory)
    return acc.memory_bandwidth.value() * acc.efficiency_for("elementwise");
  auto matrix = acc.matrix_peak_for(d);
  return (matrix ? *matrix : acc.vector_peak_for(d)).value() * acc.efficiency_for("matmul");
}

DType target_dtype(PrecisionPolicy policy, KernelClass cls, DType measured) {
  bool matrix = cls == KernelClass::matrix;
  switch (policy) {
  case PrecisionPolicy::fp32:
    return DType::fp32;
  case PrecisionPolicy::tf32:
    return matrix ? DType::tf32 : DType::fp32;
  case PrecisionPolicy::fp16:
  case PrecisionPolicy::mixed_fp16_o2:
    return DType::fp16;
  case PrecisionPolicy::mixed_fp16:
    return matrix ? DType::fp16 : measured;
  case PrecisionPolicy::mixed_bf16:
    return matrix ? DType::bf16 : measured;
  }
  return measured;
}

double kernel_time_ratio(KernelClass cls, DType d, const AcceleratorSpec& from, DType d_to, const AcceleratorSpec& to) {
  double ratio = achievable_rate(cls, d, from) / achievable_rate(cls, d_to, to);
  if (cls == KernelClass::memory)
    ratio *= element_size(d_to) / element_size(d);
  return ratio;
}

} // namespace mlsim
