#include "sim/validate/gpu_profile.hpp"

#include "sim/validate/fit.hpp"
#include "sim/validate/stats.hpp"

#include <algorithm>
#include <stdexcept>
#include <cmath>

namespace mlsim::validate {

AcceleratorProfile fit_accelerator(const GpuBenchResult& r) {
  AcceleratorProfile a;
  a.name = r.info.name;
  a.memory_size_bytes = r.info.memory_bytes;
  a.memory_bandwidth_Bps = r.hbm_Bps;
  a.launch_overhead_s = r.launch_overhead_s;
  a.cast_bandwidth_Bps = r.cast_f32_f16_Bps;
  for (const char* dtype : {"fp32", "tf32", "fp16", "bf16"}) {
    std::vector<double> size, achieved, ratios;
    for (const auto& p : r.gemm) {
      if (p.dtype != dtype)
        continue;
      if (p.aligned()) {
        size.push_back(std::cbrt(double(p.m) * p.n * p.k));
        achieved.push_back(p.flops_per_s());
      } else {
        for (const auto& q : r.gemm) // the aligned square one below
          if (q.dtype == p.dtype && q.m == p.m - 1 && q.n == p.n - 1 && q.k == p.k - 1)
            ratios.push_back(p.flops_per_s() / q.flops_per_s());
      }
    }
    if (achieved.empty())
      continue;
    const double best = *std::max_element(achieved.begin(), achieved.end());
    std::vector<double> eff;
    for (double v : achieved)
      eff.push_back(v / best);
    SaturatingFit f = fit_saturating(size, eff);
    GemmCurve g;
    g.dtype = dtype;
    g.peak_flops = f.e_max * best;
    g.s_half = f.s_half;
    g.r2 = f.r2;
    g.points = static_cast<int>(size.size());
    g.misaligned_factor = ratios.empty() ? 1.0 : median(ratios);
    a.gemm.push_back(g);
  }
  if (auto datasheet = datasheet_for(r.info)) {
    try {
      a.kernels = fit_kernel_params(r, *datasheet);
    } catch (const std::invalid_argument& e) {
      a.kernels_note = e.what();
    }
  } else {
    a.kernels_note = "no accelerator preset matches '" + r.info.name +
                     "': peaks written as measured, no kernel model (add the GPU's datasheet to accelerators.yaml)";
  }
  return a;
}

namespace {
LinearFit fit_copies(const std::vector<CopyPoint>& pts) {
  std::vector<double> x, y;
  for (const auto& p : pts) {
    x.push_back(p.bytes);
    y.push_back(p.seconds);
  }
  return fit_linear(x, y);
}
} // namespace

PcieProfile fit_pcie(const GpuBenchResult& r) {
  PcieProfile p;
  LinearFit pinned = fit_copies(r.h2d_pinned), pageable = fit_copies(r.h2d_pageable), d2h = fit_copies(r.d2h_pinned);
  p.latency_s = pinned.a;
  p.bandwidth_Bps = pinned.b > 0 ? 1.0 / pinned.b : 0.0;
  p.r2 = pinned.r2;
  p.pageable_factor = pageable.b > 0 ? std::min(1.0, pinned.b / pageable.b) : 1.0;
  p.d2h_bandwidth_Bps = d2h.b > 0 ? 1.0 / d2h.b : 0.0;
  return p;
}

} // namespace mlsim::validate
