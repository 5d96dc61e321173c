// CUDA + cuBLAS measurements; see gpu_bench.hpp for what and why.
#include "sim/validate/gpu/gpu_bench.hpp"

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "sim/validate/gpu/cuda_util.cuh"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace mlsim::validate {

namespace {

using namespace cuda_util;
using cuda_util::check; // overloaded below for the library's status type

void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + ": cuBLAS status " + std::to_string(static_cast<int>(s)));
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}
double spread_of(std::vector<double> v) {
  if (v.size() < 2)
    return 0.0;
  std::sort(v.begin(), v.end());
  double m = v[v.size() / 2];
  return m > 0 ? (v[(3 * v.size()) / 4] - v[v.size() / 4]) / (2 * m) : 0.0;
}
double host_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

__global__ void copy_kernel(const float4* __restrict__ in, float4* __restrict__ out, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    out[i] = in[i];
}
__global__ void cast_to_half(const float* __restrict__ in, __half* __restrict__ out, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    out[i] = __float2half_rn(in[i]);
}
__global__ void cast_to_float(const __half* __restrict__ in, float* __restrict__ out, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    out[i] = __half2float(in[i]);
}
__global__ void empty_kernel() {}

struct DtypeSpec {
  const char* name;
  cudaDataType_t type;
  cublasComputeType_t compute;
  size_t elem;
};
const DtypeSpec kDtypes[] = {{"fp32", CUDA_R_32F, CUBLAS_COMPUTE_32F, 4},
                             {"tf32", CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 4},
                             {"fp16", CUDA_R_16F, CUBLAS_COMPUTE_32F, 2},
                             {"bf16", CUDA_R_16BF, CUBLAS_COMPUTE_32F, 2}};

void gemm(cublasHandle_t h, const DtypeSpec& d, int m, int n, int k, void* A, void* B, void* C) {
  const float alpha = 1.f, beta = 0.f;
  CK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, A, d.type, m, B, d.type, k, &beta, C, d.type, m,
                  d.compute, CUBLAS_GEMM_DEFAULT));
}

} // namespace

GpuInfo probe_gpu() {
  GpuInfo g;
  int count = 0; // left untouched by a failing call (no driver): initialise
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count <= 0) {
    g.reason = e != cudaSuccess ? std::string("no usable GPU: ") + cudaGetErrorString(e) : "no CUDA device found";
    (void)cudaGetLastError(); // clear the sticky error
    return g;
  }
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) {
    g.reason = "cudaGetDeviceProperties failed";
    return g;
  }
  int drv = 0, rt = 0;
  cudaDriverGetVersion(&drv);
  cudaRuntimeGetVersion(&rt);
  g.available = true;
  g.name = p.name;
  g.memory_bytes = static_cast<double>(p.totalGlobalMem);
  g.driver = "CUDA driver " + std::to_string(drv / 1000) + "." + std::to_string((drv % 1000) / 10) + ", runtime " +
             std::to_string(rt / 1000) + "." + std::to_string((rt % 1000) / 10) + ", sm_" +
             std::to_string(p.major) + std::to_string(p.minor);
  return g;
}

GpuBenchResult run_gpu_bench(int reps, bool quick) {
  GpuBenchResult r;
  r.info = probe_gpu();
  r.reps = reps;
  if (!r.info.available)
    throw std::runtime_error(r.info.reason);
  CK(cudaSetDevice(0));
  cublasHandle_t h;
  CK(cublasCreate(&h));

  // GEMM sweep: aligned squares, their misaligned neighbours, and rectangles.
  std::vector<int> squares = quick ? std::vector<int>{256, 1024, 2048, 4096}
                                   : std::vector<int>{128, 256, 512, 1024, 2048, 4096, 8192};
  struct Shape { int m, n, k; };
  std::vector<Shape> shapes;
  for (int s : squares) {
    shapes.push_back({s, s, s});
    shapes.push_back({s + 1, s + 1, s + 1}); // misaligned to 8
  }
  shapes.push_back({8192, 8192, 256});
  // The reduction depth alone, at full waves of the largest tiles: how a short k loop (pipeline fill, epilogue)
  // costs, which the tile model leaves out (8192 x 8192 x 256 ran at 50-80 % of 8192^3 on an H200).
  if (!quick)
    for (int k : {64, 128, 512, 1024, 2048, 4096})
      shapes.push_back({8192, 8192, k});
  shapes.push_back({256, 8192, 8192});
  shapes.push_back({32, 8192, 8192}); // skinny: only small tiles fit, which shows their efficiency
  shapes.push_back({64, 8192, 8192});
  const size_t max_elems = size_t(8192 + 1) * (8192 + 1);
  void *A, *B, *C;
  CK(cudaMalloc(&A, max_elems * 4));
  CK(cudaMalloc(&B, max_elems * 4));
  CK(cudaMalloc(&C, max_elems * 4));
  for (const auto& d : kDtypes) {
    fill_random(A, max_elems, d.type);
    fill_random(B, max_elems, d.type);
    for (const auto& s : shapes) {
      gemm(h, d, s.m, s.n, s.k, A, B, C); // warm-up: heuristics, workspace
      const double flops = 2.0 * s.m * s.n * s.k;
      const int iters = static_cast<int>(std::clamp(2e10 / flops, 1.0, 200.0));
      std::vector<double> t;
      for (int i = 0; i < reps; ++i)
        t.push_back(event_time(iters, [&] { gemm(h, d, s.m, s.n, s.k, A, B, C); }));
      r.gemm.push_back({d.name, s.m, s.n, s.k, median_of(t), spread_of(t)});
    }
  }

  // HBM: float4 copy of 1 GiB (256 MiB in quick mode) each way.
  const size_t bytes = (quick ? size_t(256) : size_t(1024)) << 20;
  void *src, *dst;
  CK(cudaMalloc(&src, bytes));
  CK(cudaMalloc(&dst, bytes));
  CK(cudaMemset(src, 0, bytes));
  const int grid = 4096, block = 256;
  std::vector<double> t;
  for (int i = 0; i <= reps; ++i)
    t.push_back(event_time(3, [&] {
      copy_kernel<<<grid, block>>>(static_cast<const float4*>(src), static_cast<float4*>(dst), bytes / 16);
    }));
  t.erase(t.begin());
  r.hbm_Bps = 2.0 * bytes / median_of(t);
  // The same copy over sizes: a small kernel sees its latency, a large one the achievable bandwidth.
  for (size_t sz = size_t(64) << 10; sz <= bytes; sz *= 4) {
    const int grid_sz = static_cast<int>(std::min<size_t>(grid, (sz / 16 + block - 1) / block));
    std::vector<double> v;
    for (int i = 0; i <= reps; ++i)
      v.push_back(event_time(20, [&] {
        copy_kernel<<<grid_sz, block>>>(static_cast<const float4*>(src), static_cast<float4*>(dst), sz / 16);
      }));
    v.erase(v.begin());
    r.hbm_copies.push_back({2.0 * sz, median_of(v)});
  }
  const size_t nf = bytes / 4;
  t.clear();
  for (int i = 0; i <= reps; ++i)
    t.push_back(event_time(3, [&] {
      cast_to_half<<<grid, block>>>(static_cast<const float*>(src), static_cast<__half*>(dst), nf);
    }));
  t.erase(t.begin());
  r.cast_f32_f16_Bps = 6.0 * nf / median_of(t);
  t.clear();
  for (int i = 0; i <= reps; ++i)
    t.push_back(event_time(3, [&] {
      cast_to_float<<<grid, block>>>(static_cast<const __half*>(src), static_cast<float*>(dst), nf / 2);
    }));
  t.erase(t.begin());
  r.cast_f16_f32_Bps = 6.0 * (nf / 2) / median_of(t);
  CK(cudaGetLastError());

  // Host <-> device copies, synchronous, host-timed (latency included).
  const size_t max_copy = (quick ? size_t(64) : size_t(256)) << 20;
  void* pinned;
  CK(cudaMallocHost(&pinned, max_copy));
  std::vector<char> pageable(max_copy, 1);
  std::memset(pinned, 1, max_copy);
  for (size_t sz = 4096; sz <= max_copy; sz *= 4) {
    auto timed = [&](void* d, const void* s, cudaMemcpyKind kind) {
      CK(cudaMemcpy(d, s, sz, kind));
      std::vector<double> v;
      for (int i = 0; i < reps; ++i) {
        double t0 = host_now();
        CK(cudaMemcpy(d, s, sz, kind));
        v.push_back(host_now() - t0);
      }
      return CopyPoint{static_cast<double>(sz), median_of(v)};
    };
    r.h2d_pinned.push_back(timed(dst, pinned, cudaMemcpyHostToDevice));
    r.h2d_pageable.push_back(timed(dst, pageable.data(), cudaMemcpyHostToDevice));
    r.d2h_pinned.push_back(timed(pinned, src, cudaMemcpyDeviceToHost));
  }

  // Launch overhead: back-to-back empty kernels.
  empty_kernel<<<1, 1>>>();
  CK(cudaDeviceSynchronize());
  t.clear();
  for (int i = 0; i < reps; ++i) {
    double t0 = host_now();
    for (int j = 0; j < 1000; ++j)
      empty_kernel<<<1, 1>>>();
    CK(cudaDeviceSynchronize());
    t.push_back((host_now() - t0) / 1000);
  }
  r.launch_overhead_s = median_of(t);

  cudaFree(src);
  cudaFree(dst);
  src = dst = nullptr;
  try {
    r.conv = run_conv_bench(reps, quick, r.conv_note);
  } catch (const std::exception& e) { // the GEMM, HBM and PCIe results stand without the convolutions
    r.conv.clear();
    r.conv_note = std::string("cuDNN sweep failed: ") + e.what();
  }
  try {
    r.norm = run_norm_bench(reps, quick, r.norm_note);
  } catch (const std::exception& e) {
    r.norm.clear();
    r.norm_note = std::string("cuDNN batch-norm sweep failed: ") + e.what();
  }
  (void)cudaGetLastError(); // a failed sweep leaves no error behind for what follows

  cudaFreeHost(pinned);
  cudaFree(src);
  cudaFree(dst);
  cudaFree(A);
  cudaFree(B);
  cudaFree(C);
  cublasDestroy(h);
  return r;
}

struct GpuGemmStack {
  cublasHandle_t h = nullptr;
  void *A = nullptr, *B = nullptr, *C = nullptr, *batch = nullptr;
  int n = 0, layers = 0;
  size_t max_batch = 0;
};

void GpuGemmStackDeleter::operator()(GpuGemmStack* s) const {
  if (!s)
    return;
  cudaFree(s->A);
  cudaFree(s->B);
  cudaFree(s->C);
  cudaFree(s->batch);
  if (s->h)
    cublasDestroy(s->h);
  delete s;
}

GpuGemmStackPtr make_gpu_gemm_stack(int n, int layers, size_t max_batch_bytes) {
  if (!probe_gpu().available)
    return nullptr;
  GpuGemmStackPtr s(new GpuGemmStack);
  s->n = n;
  s->layers = layers;
  s->max_batch = max_batch_bytes;
  CK(cublasCreate(&s->h));
  const size_t b = size_t(n) * n * 2;
  CK(cudaMalloc(&s->A, b));
  CK(cudaMalloc(&s->B, b));
  CK(cudaMalloc(&s->C, b));
  fill_random(s->A, size_t(n) * n, CUDA_R_16F);
  fill_random(s->B, size_t(n) * n, CUDA_R_16F);
  CK(cudaMalloc(&s->batch, max_batch_bytes));
  return s;
}

void gpu_gemm_stack_step(GpuGemmStack& s, const void* host_batch, size_t bytes) {
  CK(cudaMemcpy(s.batch, host_batch, std::min(bytes, s.max_batch), cudaMemcpyHostToDevice));
  for (int i = 0; i < s.layers; ++i)
    gemm(s.h, kDtypes[2], s.n, s.n, s.n, s.A, s.B, s.C);
  CK(cudaDeviceSynchronize());
}

} // namespace mlsim::validate
