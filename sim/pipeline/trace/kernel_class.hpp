// What a measured kernel's name says about it: its op class, the arithmetic
// path it took and, for NCCL kernels, the collective and algorithm.
//
// Matrix class: cuBLAS/cuDNN/CUTLASS GEMM and convolution kernels (gemm, xmma,
// cutlass, conv, wgrad/dgrad, winograd, arch-prefixed sm80_/ampere_/volta_...,
// and TensorFlow's MatMul/Conv2D ops); everything else on the device is
// memory-bound (elementwise, reductions, norms, softmax, copies), the roofline
// class of nearly all non-GEMM kernels in training. dtype from the name's
// conventions: cuBLAS h884/h1688/h16816 and hgemm (fp16), bf16, s1688/s16816
// and tf32 (tf32 on tensor cores), sgemm/f32 and template arguments <float>
// (fp32), <c10::Half> / __half (fp16), <c10::BFloat16> (bf16).
// Ignores: names that hide their path (a custom fused kernel says nothing);
// those come back with dtype_known = false and the what-ifs that need the
// dtype refuse them.
#pragma once

#include "sim/hardware/accelerator.hpp"

#include <string>

namespace mlsim {

enum class KernelClass { matrix, memory };

struct KernelInfo {
  KernelClass cls = KernelClass::memory;
  bool dtype_known = false;
  DType dtype = DType::fp32;
  bool fp64 = false;        // double precision: no what-if answers it
};

KernelInfo classify_kernel(const std::string& name);

bool is_nccl_kernel(const std::string& name);
// "ring", "tree", "collnet", "nvls" when an NCCL kernel's name says, else "".
std::string nccl_algorithm(const std::string& name);
// "all_reduce", "all_gather", "reduce_scatter", "broadcast", ... or "".
std::string nccl_collective(const std::string& name);

// Bytes of one element of a trace's dtype string ("Float", "Half", "BFloat16", "float32"...); 0 if unknown.
double trace_dtype_size(const std::string& dtype);

} // namespace mlsim
