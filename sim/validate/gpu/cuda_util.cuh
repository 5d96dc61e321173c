// What the CUDA measuring files share (each includes it; internal linkage, so
// each translation unit has its own copy of the kernels): error checks,
// pseudo-random operands and event timing.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <library_types.h>

#include <stdexcept>
#include <string>

namespace mlsim::validate::cuda_util {
namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}
#define CK(x) check((x), #x)

// Pseudo-random operands in [-1, 1) from the element index (a splitmix64 step): GEMMs on all-zero
// operands run faster than on data (less switching, higher clocks), which would overstate the peaks.
__device__ float unit_hash(size_t i) {
  unsigned long long x = (i + 1) * 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  x ^= x >> 31;
  return static_cast<float>(x >> 40) * (2.0f / 16777216.0f) - 1.0f;
}
__global__ void fill_f32(float* p, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    p[i] = unit_hash(i);
}
__global__ void fill_f16(__half* p, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    p[i] = __float2half_rn(unit_hash(i));
}
__global__ void fill_bf16(__nv_bfloat16* p, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    p[i] = __float2bfloat16_rn(unit_hash(i));
}
// Fills `n` elements of `type` at `p` with pseudo-random values.
void fill_random(void* p, size_t n, cudaDataType_t type) {
  if (type == CUDA_R_16F)
    fill_f16<<<1024, 256>>>(static_cast<__half*>(p), n);
  else if (type == CUDA_R_16BF)
    fill_bf16<<<1024, 256>>>(static_cast<__nv_bfloat16*>(p), n);
  else
    fill_f32<<<1024, 256>>>(static_cast<float*>(p), n);
  check(cudaGetLastError(), "fill_random");
  check(cudaDeviceSynchronize(), "fill_random");
}

// Times `iters` back-to-back launches of `f` with events; returns seconds per launch.
template <typename F> double event_time(int iters, F&& f) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  CK(cudaEventRecord(a));
  for (int i = 0; i < iters; ++i)
    f();
  CK(cudaEventRecord(b));
  CK(cudaEventSynchronize(b));
  float ms = 0.f;
  CK(cudaEventElapsedTime(&ms, a, b));
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  return ms * 1e-3 / iters;
}

} // namespace
} // namespace mlsim::validate::cuda_util
