#include "sim/hardware/accelerator.hpp"


#include <algorithm>
#include <memory>

namespace mlsim {

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
