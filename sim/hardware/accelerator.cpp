#include "sim/hardware/accelerator.hpp"


#include <algorithm>
#include <memory>

namespace mlsim {

std::string to_string(DType d) {
  switch (d) {
  case DType::fp32: return "fp32";
  case DType::tf32: return "tf32";
  case DType::fp16: return "fp16";
  case DType::bf16: return "bf16";
  }
  return "?";
}

Bytes element_size(DType d) { return Bytes(is_16bit(d) ? 2.0 : 4.0); }

FlopsPerSec AcceleratorSpec::vector_peak_for(DType d) const {
  if (auto it = vector_peak.find(d); it != vector_peak.end())
    return it->second;
  return vector_peak.at(DType::fp32);
}

std::optional<FlopsPerSec> AcceleratorSpec::matrix_peak_for(DType d) const {
  if (auto it = matrix_peak.find(d); it != matrix_peak.end())
    return it->second;
  return std::nullopt;
}

double AcceleratorSpec::efficiency_for(const std::string& kind) const {
  auto it = efficiency.find(kind);
  return it == efficiency.end() ? 1.0 : it->second;
}

} // namespace mlsim
