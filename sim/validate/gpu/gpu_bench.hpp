// GPU measurements behind a plain C++ interface (no CUDA types here), so the
// rest of the module builds with or without the CUDA toolkit.
//
// gpu_bench.cu (toolkit present) measures with CUDA events and cuBLAS:
//   GEMM throughput per dtype (fp32 on CUDA cores, tf32, fp16 and bf16 on
//   tensor cores, fp32 accumulate) over square and rectangular shapes, aligned
//   to 8 and misaligned, on pseudo-random operands (all-zero ones run faster);
//   a float4 copy kernel -> HBM bandwidth (bytes read + written); fp32<->fp16
//   cast kernels; cudaMemcpy host<->device, pinned and pageable,
//   4 KiB .. 256 MiB -> PCIe latency and bandwidth; back-to-back empty-kernel
//   launches -> launch overhead.
// gpu_bench_nocuda.cpp (no toolkit) says "built without CUDA".
// Ignores: multiple GPUs (device 0 only), clocks and power states, MIG.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace mlsim::validate {

struct GpuInfo {
  bool available = false;
  std::string reason; // why not, when unavailable
  std::string name, driver;
  double memory_bytes = 0.0;
};

struct GemmPoint {
  std::string dtype; // fp32, tf32, fp16, bf16
  int m = 0, n = 0, k = 0;
  double seconds = 0.0; // median per GEMM
  double spread = 0.0;
  double flops_per_s() const { return 2.0 * m * n * k / seconds; }
  bool aligned() const { return m % 8 == 0 && n % 8 == 0 && k % 8 == 0; }
};

struct CopyPoint {
  double bytes = 0.0, seconds = 0.0;
};

struct GpuBenchResult {
  GpuInfo info;
  std::vector<GemmPoint> gemm;
  double hbm_Bps = 0.0, cast_f32_f16_Bps = 0.0, cast_f16_f32_Bps = 0.0;
  std::vector<CopyPoint> h2d_pinned, h2d_pageable, d2h_pinned;
  double launch_overhead_s = 0.0;
  int reps = 0;
};

// Whether a GPU can be used; never throws (no driver -> available = false).
GpuInfo probe_gpu();
// Runs every measurement on device 0; throws std::runtime_error on a CUDA error.
GpuBenchResult run_gpu_bench(int reps, bool quick);

// The GPU consumer of `validate`: per step, copy the batch to the device
// (pageable host memory) and run `layers` fp16 n x n x n GEMMs, then synchronise.
struct GpuGemmStack;
struct GpuGemmStackDeleter {
  void operator()(GpuGemmStack* s) const;
};
using GpuGemmStackPtr = std::unique_ptr<GpuGemmStack, GpuGemmStackDeleter>;
// nullptr when no GPU is usable.
GpuGemmStackPtr make_gpu_gemm_stack(int n, int layers, size_t max_batch_bytes);
void gpu_gemm_stack_step(GpuGemmStack& s, const void* host_batch, size_t bytes);

} // namespace mlsim::validate
