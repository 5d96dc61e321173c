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
//   launches -> launch overhead; the copy kernel over sizes (64 KiB .. 1 GiB)
//   -> HBM latency and achievable fraction.
// conv_bench_cudnn.cu (cuDNN found at configure time): cuDNN convolutions,
//   forward, backward-data and backward-filter, over ResNet-50's shapes, in the
//   layout PyTorch runs each dtype in: fp32 (FMA only) NCHW, tf32 and fp16
//   (tensor-op math) NHWC; at batch 32 (quick) or 64 and 256 (the recipes'
//   batch); each with the algorithm cuDNN's heuristics rank first (frameworks
//   without autotuning) and the one cudnnFind* times fastest (what
//   cudnn.benchmark and TensorFlow's autotuner pick); a direction cuDNN cannot
//   run for a shape is skipped and named in the note. Batch normalisation
//   (cudnnBatchNormalization*, training) forward and backward over ResNet-50's
//   activation shapes, fp16 NHWC in the persistent mode PyTorch uses for
//   channels_last, fp32 NCHW in the spatial mode;
//   conv_bench_nocudnn.cpp says "built without cuDNN" and measures none.
// In mlsim these run inside the GPU module, loaded on the first call
// (gpu_module.hpp); without the toolkit, or without the module, probe_gpu
// says why and the rest throw that reason.
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

// One convolution: N x C x H x W input, K filters of R x S, stride, padding (square).
struct ConvPoint {
  std::string op;    // fwd | bwd_data | bwd_filter
  std::string dtype; // fp32 | tf32 | fp16
  int n = 0, c = 0, h = 0, w = 0, k = 0, r = 0, s = 0, stride = 1, pad = 0;
  int groups = 1; // a grouped convolution: groups of c / groups input into k / groups output channels
  double seconds = 0.0, spread = 0.0;
  std::string layout = "nhwc"; // of the activations and filters
  bool autotuned = false;      // cudnnFind*'s fastest algorithm; else the heuristics' first
  int out_h() const { return (h + 2 * pad - r) / stride + 1; }
  int out_w() const { return (w + 2 * pad - s) / stride + 1; }
  // The same multiply-adds in each direction: N x K x P x Q x (C / groups) x R x S.
  double flops() const { return 2.0 * n * k * out_h() * out_w() * double(c / groups) * r * s; }
  double activation_elements() const { return double(n) * (double(c) * h * w + double(k) * out_h() * out_w()); }
  bool depthwise() const { return groups > 1 && groups == c && k == c; } // one channel a group
};

// One batch normalisation (training): N x C x H x W activations, forward (statistics, then normalise) or
// backward (reduce the output gradient against the input, then the data gradient).
struct NormPoint {
  std::string op;     // fwd | bwd
  std::string dtype;  // fp32 | fp16 (statistics in fp32)
  std::string layout; // nhwc | nchw
  int n = 0, c = 0, h = 0, w = 0;
  double seconds = 0.0, spread = 0.0;
  double elements() const { return double(n) * c * h * w; }
};

struct GpuBenchResult {
  GpuInfo info;
  std::vector<GemmPoint> gemm;
  double hbm_Bps = 0.0, cast_f32_f16_Bps = 0.0, cast_f16_f32_Bps = 0.0;
  std::vector<CopyPoint> h2d_pinned, h2d_pageable, d2h_pinned;
  double launch_overhead_s = 0.0;
  std::vector<CopyPoint> hbm_copies; // copy kernel: bytes read + written, seconds per kernel
  std::vector<ConvPoint> conv;
  std::string conv_note; // why there are no convolutions, if so
  std::vector<NormPoint> norm;
  std::string norm_note; // why there are no normalisations, if so
  int reps = 0;
};

// Whether a GPU can be used; never throws (no driver -> available = false).
GpuInfo probe_gpu();
// Runs every measurement on device 0; throws std::runtime_error on a CUDA error.
GpuBenchResult run_gpu_bench(int reps, bool quick);
// The cuDNN sweep on device 0 (run_gpu_bench calls it); empty with `note` saying why when cuDNN is absent.
std::vector<ConvPoint> run_conv_bench(int reps, bool quick, std::string& note);
// The cuDNN batch-norm sweep, likewise.
std::vector<NormPoint> run_norm_bench(int reps, bool quick, std::string& note);

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
