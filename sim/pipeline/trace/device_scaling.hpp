// Moving a measured kernel to another accelerator or another precision.
//
//   matrix kernels:        t' = t x R(from, d) / R(to, d')
//       R(acc, d) = matrix-path peak for d (vector path when the accelerator has
//       none for d) x efficiency("matmul")
//   memory-bound kernels:  t' = t x (B(from) / B(to)) x (size(d') / size(d))
//       B(acc) = HBM bandwidth x efficiency("elementwise")
// where d is the dtype the kernel's name says it computed in and d' the dtype
// the target precision gives it. The kernel's measured time already holds what
// the peak ignores on the measured device (tiles, waves, launch); the ratio
// assumes the same fraction of peak is reached on the other one.
// achievable_rate() is the one place that asks the accelerator model, so a
// finer per-op efficiency model can answer there.
// Ignores: tile/wave quantisation differences between devices, L2 size, clocks.
#pragma once

#include "sim/hardware/accelerator.hpp"
#include "sim/pipeline/step_graph/precision_policy.hpp"
#include "sim/pipeline/trace/kernel_class.hpp"

namespace mlsim {

// FLOP/s (matrix) or bytes/s (memory-bound) a kernel of this class reaches on `acc`.
double achievable_rate(KernelClass cls, DType d, const AcceleratorSpec& acc);

// The dtype a kernel measured in `measured` computes in under `policy`.
DType target_dtype(PrecisionPolicy policy, KernelClass cls, DType measured);

// t' / t for a kernel moved from (`from`, `d`) to (`to`, `d_to`).
double kernel_time_ratio(KernelClass cls, DType d, const AcceleratorSpec& from, DType d_to, const AcceleratorSpec& to);

} // namespace mlsim
