// From raw GPU measurements to profile sections, by fitting:
//   GEMM: achieved(s) = peak * s / (s + s_half) per dtype over the aligned
//     shapes, s = cube root of m*n*k (fit_saturating); the misaligned factor is
//     the median of achieved(misaligned) / achieved(aligned neighbour).
//   PCIe: seconds = latency + bytes / bandwidth over the pinned host->device
//     copies (fit_linear); pageable_factor = pageable bandwidth / pinned.
//   Kernel model: when a preset matches the GPU's name (its datasheet), the
//     tile/wave model's fractions, reuse saturations, HBM fraction and
//     latency, launch floor and conv efficiency (gpu/kernel_fit.hpp).
// Ignores: shape effects beyond size and alignment (tall-skinny vs. square)
// in the saturating curves (the kernel model has them).
#pragma once

#include "sim/validate/gpu/gpu_bench.hpp"
#include "sim/validate/profile.hpp"

namespace mlsim::validate {

AcceleratorProfile fit_accelerator(const GpuBenchResult& r);
PcieProfile fit_pcie(const GpuBenchResult& r);

} // namespace mlsim::validate
