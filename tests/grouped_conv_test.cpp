// Grouped convolutions (ResNeXt's cardinality, depthwise convs). The expectations come from the convolution's
// closed form (G groups of C_in/G -> C_out/G channels: FLOPs and weights divided by G), from the roofline of a
// direct kernel (its useful FLOPs at the vector rate, its bytes at the HBM rate, whichever is longer) and from the
// tensor-core rule applied per group (NVIDIA Deep Learning Performance Guide: channels a multiple of 8), never
// from the model's own output.
#include "sim/core/base/errors.hpp"
#include "sim/core/run/load/hardware_load.hpp"
#include "sim/pipeline/step_graph/backward_rules.hpp"
#include "sim/pipeline/step_graph/layer_builders.hpp"
#include "sim/pipeline/step_graph/op_cost.hpp"

#include "test_support.hpp"

#include <gtest/gtest.h>

using namespace mlsim;

namespace {
Op grouped_conv(long hw, long cin, long cout, long groups, long batch, DType d = DType::fp16) {
  return fixtures::conv_op(hw, cin, cout, 3, 1, batch, d, groups);
}
double seconds(const Op& op, const AcceleratorSpec& a) { return cost_device_op(op, a).duration.value(); }
} // namespace

// ResNeXt-50's first-stage 3x3 (128 -> 128 channels in 32 groups of 4, 56x56): 1/32 of the dense conv's
// multiply-adds and weights.
TEST(GroupedConv, FlopsAndWeightsAreTheDenseConvsOverTheGroupCount) {
  const long batch = 8;
  Op grouped = grouped_conv(56, 128, 128, 32, batch);
  Op dense = grouped_conv(56, 128, 128, 1, batch);
  EXPECT_DOUBLE_EQ(grouped.flops.value(), 2.0 * batch * 56 * 56 * 128 * 4 * 9);
  EXPECT_DOUBLE_EQ(grouped.owned_parameters, 9.0 * 4 * 128);
  EXPECT_DOUBLE_EQ(dense.flops.value(), 32.0 * grouped.flops.value());
  EXPECT_EQ(grouped.dims.at("in_channels"), 4);
  EXPECT_EQ(grouped.dims.at("groups"), 32);
  EXPECT_EQ(dense.dims.count("groups"), 0u);
  // The data gradient swaps the per-group channels and keeps the group count.
  Op dgrad = input_gradient(grouped);
  EXPECT_EQ(dgrad.dims.at("n"), 4);
  EXPECT_EQ(dgrad.dims.at("k"), 4 * 9);
  EXPECT_EQ(dgrad.dims.at("groups"), 32);
}

// A depthwise 3x3 (256 channels, one a group, 56x56, batch 64, fp16) on a V100: 9 multiply-adds per output
// against 4 bytes moved per output (read and write in fp16) is far below the V100's 31.4 TFLOP/s over 900 GB/s,
// so the direct kernel is memory-bound: the launch, the first-byte latency and the bytes at the preset's
// fraction of HBM bandwidth. An implicit GEMM of one output channel a group would fill one column of a tile.
TEST(GroupedConv, ADepthwiseConvRunsAsAMemoryBoundDirectKernel) {
  AcceleratorSpec v100 = accelerator_preset("v100-sxm2-16gb");
  Op op = grouped_conv(56, 256, 256, 256, 64);
  OpCost c = cost_device_op(op, v100);
  const KernelParams& k = v100.kernels;
  double expected = v100.launch_overhead.value() + k.memory_latency.value() +
                    op.bytes().value() / (v100.memory_bandwidth.value() * k.memory_fraction);
  EXPECT_NEAR(c.duration.value(), expected, 1e-9 * expected);
  EXPECT_EQ(c.path, "CUDA core");
  EXPECT_NE(c.why.find("direct grouped kernel"), std::string::npos) << c.why;
}

// Groups of 8 channels meet the tensor-core rule and groups of 4 do not: in fp16 the 4-channel conv never runs on
// the tensor cores, and it is never faster than the direct kernel's roofline of its own FLOPs and bytes.
TEST(GroupedConv, TheTensorCoreRuleAppliesPerGroup) {
  AcceleratorSpec v100 = accelerator_preset("v100-sxm2-16gb");
  Op four = grouped_conv(56, 128, 128, 32, 128);
  OpCost c4 = cost_device_op(four, v100);
  EXPECT_EQ(c4.path, "CUDA core") << c4.why;
  const KernelParams& k = v100.kernels;
  double roofline = std::max(four.flops.value() / (v100.vector_peak_for(DType::fp16).value() *
                                                   k.vector_fraction_for(DType::fp16)),
                             four.bytes().value() / (v100.memory_bandwidth.value() * k.memory_fraction));
  EXPECT_GE(c4.duration.value(), roofline);
  // 16 groups of 8 channels (the same layer at half the cardinality): the implicit GEMM may use the tensor cores.
  Op eight = grouped_conv(56, 128, 128, 16, 128);
  EXPECT_TRUE(meets_alignment(eight, v100));
  EXPECT_FALSE(meets_alignment(four, v100));
}

// On the tensor cores (fp16, no Winograd for either) a grouped conv is never slower than the same conv dense: G
// times less work through the same bytes, and the direct kernel is one more candidate, never a forced choice.
TEST(GroupedConv, InFp16NeverSlowerThanTheDenseConv) {
  AcceleratorSpec a100 = accelerator_preset("a100-sxm4-40gb");
  for (long groups : {2L, 8L, 32L, 64L, 256L})
    EXPECT_LE(seconds(grouped_conv(28, 256, 256, groups, 64), a100), seconds(grouped_conv(28, 256, 256, 1, 64), a100))
        << groups;
}

// Channels that no group count divides are an input error naming the layer, not a silent truncation.
TEST(GroupedConv, AGroupCountThatDoesNotDivideTheChannelsIsAnInputError) {
  EXPECT_THROW(grouped_conv(56, 128, 128, 3, 1), InputError);
  EXPECT_THROW(grouped_conv(56, 96, 128, 64, 1), InputError); // divides 128 filters, not 96 inputs
  try {
    grouped_conv(56, 128, 100, 8, 1);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("groups"), std::string::npos) << e.what();
  }
}
