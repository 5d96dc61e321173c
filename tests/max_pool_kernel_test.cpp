// PyTorch's max-pool kernels are bound by their instructions, not by HBM (stacks.yaml `max_pool`, measured on an
// H200): checked against the profiled kernel times the figures come from, their scaling by SMs x boost clock, and
// the stacks and ops they must leave alone.
#include "sim/core/base/errors.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

using namespace mlsim;

namespace {
StepPlan resnet50(const std::string& gpu, const std::string& precision, const std::string& stack,
                  const std::string& layout) {
  return fixtures::plan_model("{preset: resnet50, optimizer: momentum, precision: " + precision + ", stack: " + stack +
                                  ", layout: " + layout + "}",
                              gpu, 256);
}

const PlannedOp& op_named(const StepPlan& p, const std::string& name) {
  for (const PlannedOp& op : p.ops)
    if (op.name == name)
      return op;
  ADD_FAILURE() << "no op " << name;
  return p.ops.front();
}

// pool1's forward and input-gradient kernel times (any wait for the host left out).
std::pair<double, double> pool1_seconds(const std::string& gpu, const std::string& precision,
                                        const std::string& stack, const std::string& layout) {
  StepPlan p = resnet50(gpu, precision, stack, layout);
  auto kernel = [&](const std::string& name) {
    const PlannedOp& op = op_named(p, name);
    return (op.duration - op.host_wait).value();
  };
  return {kernel("pool1/max_pool"), kernel("pool1/max_pool/grad")};
}
} // namespace

// The figures reproduce the kernels they were derived from, the H200 profile of ResNet-50 at batch 256
// (sim/hardware/profiles/h200-2026-12-04/rn50_torch_steps.json): max_pool_forward_nhwc 821.9 us and
// max_pool_backward_nhwc 1828.4 us under AMP, _nchw 805.6 and 2276.4 us in fp32; each plus the 5 us launch floor,
// within the rounding of the cycle figures to three digits.
TEST(MaxPoolKernel, ReproducesTheMeasuredH200Kernels) {
  auto [f16, b16] = pool1_seconds("h200-sxm", "mixed_fp16", "pytorch-eager", "nhwc");
  EXPECT_NEAR(f16, 821.9e-6 + 5e-6, 0.005 * 821.9e-6);
  EXPECT_NEAR(b16, 1828.4e-6 + 5e-6, 0.005 * 1828.4e-6);
  auto [f32, b32] = pool1_seconds("h200-sxm", "fp32", "pytorch-eager", "nchw");
  EXPECT_NEAR(f32, 805.6e-6 + 5e-6, 0.005 * 805.6e-6);
  EXPECT_NEAR(b32, 2276.4e-6 + 5e-6, 0.005 * 2276.4e-6);
  const PlannedOp& fwd = op_named(resnet50("h200-sxm", "mixed_fp16", "pytorch-eager", "nhwc"), "pool1/max_pool");
  EXPECT_NE(fwd.why.find("instruction-bound"), std::string::npos) << fwd.why;
}

// Instruction-bound work scales with SMs x clock: on an A100 (108 SMs at 1410 MHz) the same kernels take
// 132 x 1980 / (108 x 1410) = 1.716 times the H200's, on a V100 (80 at 1530) 2.135 times.
TEST(MaxPoolKernel, ScalesWithSmsTimesClock) {
  auto [fh, bh] = pool1_seconds("h200-sxm", "mixed_fp16", "pytorch-eager", "nhwc");
  for (auto [gpu, ratio] : {std::pair{"a100-sxm4-80gb", 132 * 1980.0 / (108 * 1410.0)},
                            std::pair{"v100-sxm2-16gb", 132 * 1980.0 / (80 * 1530.0)}}) {
    auto [f, b] = pool1_seconds(gpu, "mixed_fp16", "pytorch-eager", "nhwc");
    EXPECT_NEAR(f - 5e-6, ratio * (fh - 5e-6), 1e-9) << gpu;
    EXPECT_NEAR(b - 5e-6, ratio * (bh - 5e-6), 1e-9) << gpu;
  }
}

// A stack without the figures keeps a plain memory-bound pool: its bytes at 90 % of the A100 40GB's 1555 GB/s,
// plus the 0.5 us memory latency and the launch floor. Compiled stacks (XLA's reduce-window, Inductor's kernel)
// never take ATen's figures, nor does the sum of gradients after the pool (an add).
TEST(MaxPoolKernel, OnlyTheFrameworksOwnKernels) {
  StepPlan native = resnet50("a100-sxm4-40gb", "mixed_fp16", "native", "nhwc");
  const PlannedOp& pool = op_named(native, "pool1/max_pool");
  EXPECT_NEAR(pool.duration.value(), 5e-6 + 0.5e-6 + pool.bytes.value() / (1555e9 * 0.9), 1e-9);
  for (const char* stack : {"xla-gpu", "torch-compile"})
    for (const PlannedOp& op : resnet50("a100-sxm4-40gb", "mixed_fp16", stack, "nhwc").ops)
      EXPECT_EQ(op.why.find("max-pool"), std::string::npos) << stack << " " << op.name;
  const PlannedOp& sum = op_named(resnet50("a100-sxm4-40gb", "mixed_fp16", "pytorch-eager", "nhwc"),
                                  "pool1/max_pool/grad_sum");
  EXPECT_EQ(sum.why.find("max-pool"), std::string::npos) << sum.why;
}

TEST(MaxPoolKernel, BadFiguresAreInputErrors) {
  EXPECT_THROW(fixtures::plan_model("{preset: resnet50, stack: {preset: pytorch-eager, max_pool: {forward_cycles: "
                                    "{nhcw: 4}}}}",
                                    "a100-sxm4-80gb", 8),
               InputError);
  EXPECT_THROW(fixtures::plan_model("{preset: resnet50, stack: {preset: pytorch-eager, max_pool: {cycles: 4}}}",
                                    "a100-sxm4-80gb", 8),
               InputError);
}
