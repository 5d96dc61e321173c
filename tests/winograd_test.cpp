// cuDNN's Winograd convolutions for 3x3 stride-1 layers on CUDA cores. The expectations come from the
// algorithm's closed form (Lavin & Gray, CVPR 2016: F(m x m, 3x3) does 9 m^2 / (m+2)^2 fewer multiplies, 2.25
// for m = 2 and 4 for m = 4) and from where cuDNN documents it (3x3 filters, stride 1; its tensor-core
// convolutions are implicit GEMMs), never from the model's own output.
#include "sim/core/run/load/hardware_load.hpp"
#include "sim/pipeline/step_graph/backward_rules.hpp"
#include "sim/pipeline/step_graph/layer_builders.hpp"
#include "sim/pipeline/step_graph/op_cost.hpp"

#include "test_support.hpp"

#include <gtest/gtest.h>

using namespace mlsim;

namespace {
using fixtures::conv_op;
// The same op without what tells cuDNN it may use Winograd: the implicit GEMM alone.
Op implicit_gemm_only(Op op) {
  op.dims.erase("kernel_size");
  return op;
}
double body(const Op& op, const AcceleratorSpec& a) {
  return (cost_device_op(op, a).duration - a.launch_overhead).value();
}
} // namespace

// A compute-bound 3x3 conv (256 -> 256 channels, 56x56, batch 64): the best Winograd variant saves at least the
// fused F(2x2,3x3)'s 2.25x of multiplies and at most F(4x4,3x3)'s 4x (both run at the same SGEMM rate).
TEST(Winograd, ALargeFp32ThreeByThreeConvGainsBetweenTheTwoTilesMultiplyCuts) {
  AcceleratorSpec v100 = accelerator_preset("v100-sxm2-16gb");
  Op op = conv_op(56, 256, 256, 3, 1, 64, DType::fp32);
  OpCost c = cost_device_op(op, v100);
  EXPECT_EQ(c.path, "CUDA core");
  EXPECT_NE(c.why.find("Winograd"), std::string::npos) << c.why;
  double gain = body(implicit_gemm_only(op), v100) / body(op, v100);
  EXPECT_GT(gain, 2.25 * 0.95);
  EXPECT_LT(gain, 4.0 * 1.02);
}

// The weight gradient has only the non-fused algorithm; it too stays within the multiply cut of F(4x4,3x3).
TEST(Winograd, TheWeightGradientGainsAtMostTheFourByFourCut) {
  AcceleratorSpec v100 = accelerator_preset("v100-sxm2-16gb");
  Op op = conv_op(28, 128, 128, 3, 1, 112, DType::fp32);
  op.weight_gradient = true;
  double gain = body(implicit_gemm_only(op), v100) / body(op, v100);
  EXPECT_GE(gain, 1.0);
  EXPECT_LT(gain, 4.0 * 1.02);
  EXPECT_EQ(cost_device_op(op, v100).why.find("fused"), std::string::npos) << cost_device_op(op, v100).why;
}

// Where cuDNN offers no Winograd kernel the implicit GEMM's time stands: strided and 1x1 convs, and the tensor
// cores (fp16 with channels a multiple of 8).
TEST(Winograd, OnlyThreeByThreeStrideOneConvsOnCudaCores) {
  AcceleratorSpec v100 = accelerator_preset("v100-sxm2-16gb");
  for (const Op& op : {conv_op(56, 256, 256, 3, 2, 64, DType::fp32), conv_op(56, 256, 256, 1, 1, 64, DType::fp32),
                       conv_op(56, 256, 256, 3, 1, 64, DType::fp16)})
    EXPECT_DOUBLE_EQ(body(op, v100), body(implicit_gemm_only(op), v100)) << cost_device_op(op, v100).why;
}

// The autotuner takes Winograd only when it is faster: a memory-bound 3x3 conv with few channels, where the
// transforms' traffic outweighs the multiplies saved, is never slower than its implicit GEMM.
TEST(Winograd, NeverSlowerThanTheImplicitGemm) {
  AcceleratorSpec v100 = accelerator_preset("v100-sxm2-16gb");
  for (long channels : {4L, 8L, 16L, 64L, 512L}) {
    Op op = conv_op(112, channels, channels, 3, 1, 32, DType::fp32);
    EXPECT_LE(body(op, v100), body(implicit_gemm_only(op), v100)) << channels;
  }
}
