// The published ResNet-50 v1.5 configurations (NVIDIA DeepLearningExamples; one scenario each under
// scenarios/published/) assert here only what has a reason of its own: orderings and ratio bounds that the
// kernel-level figures imply. The published throughputs are compared in the README ("Published results"),
// never asserted: a test that held them would be a fit.
#include "test_support.hpp"

#include <gtest/gtest.h>

using namespace mlsim;

namespace {
// Images per second of the device step alone (no input, no all-reduce).
double images_per_s(const std::string& precision, const std::string& gpu, long batch,
                    const std::string& stack = "pytorch-eager", const std::string& layout = "nhwc") {
  StepPlan p = fixtures::plan_model("{preset: resnet50, optimizer: momentum, precision: " + precision +
                                        ", stack: " + stack + ", layout: " + layout + "}",
                                    gpu, batch);
  return static_cast<double>(batch) / fixtures::device_seconds(p);
}
} // namespace

// Every step from AMP to TF32 to FP32 lowers both rates an op can be bound by: tensor-core fp16 at
// 0.86 x 312, TF32 at 0.70 x 156, SGEMM at 0.9 x 19.5 TFLOP/s (accelerators.yaml), and fp32 activations
// double the bytes of the memory-bound ops. So AMP > TF32 > FP32 on an A100, in either stack.
TEST(PublishedResNet50, OnA100AmpBeatsTf32BeatsFp32) {
  for (const char* stack : {"pytorch-eager", "xla-gpu"}) {
    double amp = images_per_s("mixed_fp16", "a100-sxm4-80gb", 256, stack);
    double tf32 = images_per_s("tf32", "a100-sxm4-80gb", 256, stack);
    double fp32 = images_per_s("fp32", "a100-sxm4-80gb", 256, stack);
    EXPECT_GT(amp, tf32) << stack;
    EXPECT_GT(tf32, fp32) << stack;
  }
}

// In one layout no op speeds up from TF32 to AMP by more than the largest rate ratio of its paths: tensor
// cores (0.86 x 312) / (0.70 x 156) = 2.46, bytes 2, CUDA cores (conv1's 3 channels miss the tensor-core
// rule) 78 / 19.5 = 4 -- and none slows down: the step's speed-up lies in [1, 4]. NCHW activations
// (PyTorch's default, the DLE TF32 recipe) add cuDNN's transposes to every tensor-core conv, which the
// NHWC AMP recipe does not pay: the recipes' ratio must then be larger.
TEST(PublishedResNet50, A100Tf32ToAmpSpeedupWithinTheKernelRatioRange) {
  double amp = images_per_s("mixed_fp16", "a100-sxm4-80gb", 256);
  double tf32 = images_per_s("tf32", "a100-sxm4-80gb", 256);
  EXPECT_GE(amp / tf32, 1.0);
  EXPECT_LE(amp / tf32, 78.0 / 19.5);
  double tf32_nchw = images_per_s("tf32", "a100-sxm4-80gb", 256, "pytorch-eager", "nchw");
  EXPECT_GT(amp / tf32_nchw, amp / tf32);
}

// V100 at one batch (112, the FP32 recipe): AMP is never slower than FP32 and no op gains more than the best
// kernel-rate ratio, tensor-core GEMM over SGEMM = 7 (Markidis et al. 2018, accelerators.yaml).
TEST(PublishedResNet50, V100AmpOverFp32WithinTheKernelRatioRange) {
  double ratio = images_per_s("mixed_fp16", "v100-sxm2-16gb", 112) / images_per_s("fp32", "v100-sxm2-16gb", 112);
  EXPECT_GT(ratio, 1.0);
  EXPECT_LT(ratio, 7.0);
}

// SIMT kernels read NCHW as it is: the FP32 recipe's convs on a V100 (CUDA cores) pay no transposes. (Its batch
// norms differ by layout: cuDNN's NHWC kernels carry a figure of their own, accelerators.yaml.)
TEST(PublishedResNet50, NchwCostsNothingOffTheTensorCores) {
  auto conv_seconds = [](const std::string& layout) {
    StepPlan p = fixtures::plan_model("{preset: resnet50, optimizer: momentum, precision: fp32, stack: pytorch-eager, "
                                      "layout: " + layout + "}",
                                      "v100-sxm2-16gb", 112);
    double s = 0;
    int convs = 0;
    for (const PlannedOp& op : p.ops)
      if (op.kind == "conv") {
        s += op.duration.value();
        ++convs;
      }
    EXPECT_GT(convs, 100) << layout; // 53 convs, forward and backward
    return s;
  };
  EXPECT_DOUBLE_EQ(conv_seconds("nchw"), conv_seconds("nhwc"));
}

// The same chip with more memory runs the same step: V100 16 GB and 32 GB differ only in capacity.
TEST(PublishedResNet50, V100MemorySizeDoesNotChangeTheStep) {
  EXPECT_DOUBLE_EQ(images_per_s("mixed_fp16", "v100-sxm2-16gb", 256),
                   images_per_s("mixed_fp16", "v100-sxm2-32gb", 256));
}
