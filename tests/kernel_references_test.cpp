// The kernel model against published kernel-level measurements: GEMM rates at the shapes they were measured
// at, and HBM rates of streaming kernels. Every expected figure is the published one (source next to it) with
// the tolerance stated there; none comes from the model's output. Where the preset's fraction was set from
// the same figure the test says so: it then guards the tile model (waves, tiles) that turns the per-tile
// fraction back into the rate at that shape. The independent ones are marked "independent".
#include "sim/core/run/load/hardware_load.hpp"
#include "sim/hardware/kernel_model.hpp"
#include "sim/pipeline/step_graph/op_cost.hpp"

#include "test_support.hpp"

#include <gtest/gtest.h>

using namespace mlsim;

namespace {
using fixtures::gemm_op;
double rate(long m, long n, long k, DType d, const std::string& gpu) {
  Op op = gemm_op(m, n, k, d);
  return op.flops.value() / cost_device_op(op, accelerator_preset(gpu)).duration.value();
}
double hbm_rate(const std::string& gpu, double bytes) {
  AcceleratorSpec a = accelerator_preset(gpu);
  return bytes / memory_time(a.kernels, Bytes(bytes), a.memory_bandwidth).value();
}
} // namespace

// Independent: the Hopper fraction comes from an 8192^3 measurement on an H200 (accelerators.yaml); this is
// another machine, another shape. S. Bekman, "Machine Learning Engineering", MAMF table: H100 SXM bf16
// 792.1 TFLOP/s at 6144x17920x2816 (CUDA 12.1). Tolerance 5 %: the spread of repeated MAMF runs.
TEST(KernelReferences, H100Bf16MatmulAtItsPublishedShape) {
  EXPECT_NEAR(rate(6144, 17920, 2816, DType::bf16, "h100-sxm"), 792.1e12, 0.05 * 792.1e12);
}

// Same table, A100 SXM bf16: 267.9 TFLOP/s at 6912x16384x2048 (CUDA 12.1). The Ampere fraction was set from
// this figure; the shape is an exact number of 256x128-tile waves on 108 SMs, so the rate must come back.
TEST(KernelReferences, A100Bf16MatmulAtItsPublishedShape) {
  EXPECT_NEAR(rate(6912, 16384, 2048, DType::bf16, "a100-sxm4-80gb"), 267.9e12, 0.03 * 267.9e12);
  EXPECT_NEAR(rate(6912, 16384, 2048, DType::fp16, "a100-sxm4-40gb"), 267.9e12, 0.03 * 267.9e12); // same SMs
}

// Markidis et al., "NVIDIA Tensor Core Programmability, Performance & Precision", IPDPSW 2018: cuBLAS GEMM
// on a Tesla V100 up to 83 TFLOP/s in mixed precision, 7x its single-precision SGEMM and 3x its half-
// precision (CUDA-core) GEMM. The Volta fractions were set from these figures (at the largest size,
// 8192^3, taken here); the ratios between the paths follow from them and the datasheet peaks.
TEST(KernelReferences, V100GemmRatesOfThreePaths) {
  const long s = 8192;
  double tensor = rate(s, s, s, DType::fp16, "v100-sxm2-16gb");
  EXPECT_NEAR(tensor, 83e12, 0.04 * 83e12);
  EXPECT_NEAR(tensor / rate(s, s, s, DType::fp32, "v100-sxm2-16gb"), 7.0, 0.07 * 7.0);
  Op half = gemm_op(s, s, s - 4, DType::fp16); // k not a multiple of 8: off the tensor cores
  AcceleratorSpec v100 = accelerator_preset("v100-sxm2-16gb");
  double cuda_core_half = half.flops.value() / cost_device_op(half, v100).duration.value();
  EXPECT_NEAR(tensor / cuda_core_half, 3.0, 0.07 * 3.0);
}

// Independent: an A100 80GB SXM read kernel measured at 1.80 of 2.04 TB/s (NVIDIA developer forum, "Trouble
// to reach peak bandwidth of A100", with Nsight Compute agreeing at 88 %), and NVIDIA's GTC 2024 talk cited
// there: no kernel above about 90 % of the datasheet. A large streaming kernel lands in 86-91 %.
TEST(KernelReferences, A100StreamingKernelReachesTheMeasuredShareOfHbm) {
  double r = hbm_rate("a100-sxm4-80gb", 8e9);
  EXPECT_GT(r, 0.86 * 2039e9);
  EXPECT_LT(r, 0.91 * 2039e9);
}

// H200 cuBLAS sweep (sim/hardware/profiles/h200-2026-12-04/gpu.json, CUDA 13.0): the Hopper fp16, tf32 and
// fp32 (SGEMM, TF32 off) fractions were set from its 8192^3 points (750.0, 408.2, 51.1 TFLOP/s), so at that
// shape the rate must come back (1 %: the launch floor on a ~1.4-22 ms kernel). Its 4096^3 and 8192x8192x256
// points were not used: 722.3 / 378.4 / 51.1 and 441.0 / 203.8 / 40.7 TFLOP/s. The first is the same tiles in
// 4 waves (the model says about the 8192^3 rate; measured 0-7 % below it): within 10 %. The thin-k one runs
// a 256-deep reduction over the same tiles, measured at 59 / 50 / 80 % of the 8192^3 rate: the pipeline's
// fill and the epilogue, which a short k loop does not amortise, are not in the model (it gives 676 / 385 /
// 51 TFLOP/s, 1.5 / 1.9 / 1.25x the measurement; a fill of a fixed k per tile, refitted with the sweep's other
// shapes, raised the fit's largest residual, so it was not added). Bound, not matched: never below the
// measurement, at most 2x.
TEST(KernelReferences, H200GemmsOfItsOwnSweep) {
  struct Point {
    DType dtype;
    double at_8192, at_4096, thin_k;
  };
  for (Point p : {Point{DType::fp16, 750.0e12, 722.3e12, 441.0e12}, Point{DType::tf32, 408.2e12, 378.4e12, 203.8e12},
                  Point{DType::fp32, 51.1e12, 51.1e12, 40.7e12}}) {
    SCOPED_TRACE(static_cast<int>(p.dtype));
    EXPECT_NEAR(rate(8192, 8192, 8192, p.dtype, "h200-sxm"), p.at_8192, 0.01 * p.at_8192);
    EXPECT_NEAR(rate(4096, 4096, 4096, p.dtype, "h200-sxm"), p.at_4096, 0.10 * p.at_4096);
    const double thin = rate(8192, 8192, 256, p.dtype, "h200-sxm");
    EXPECT_GE(thin, p.thin_k);
    EXPECT_LE(thin, 2.0 * p.thin_k);
  }
}
