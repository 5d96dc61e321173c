#include "sim/hardware/cpu.hpp"

#include <algorithm>

namespace mlsim {

double corunning_efficiency(const CpuSpec& cpu, int busy) {
  if (cpu.cores <= 1)
    return 1.0;
  const int n = std::clamp(busy, 1, cpu.cores);
  return 1.0 - (1.0 - cpu.all_cores_efficiency) * (n - 1) / (cpu.cores - 1);
}

double shared_core_factor(const CpuSpec& cpu, size_t threads) {
  const auto& e = cpu.shared_core_efficiency;
  if (threads <= 1 || e.empty())
    return 1.0;
  return e[std::min(threads - 2, e.size() - 1)];
}

} // namespace mlsim
