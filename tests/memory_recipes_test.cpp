// Device memory as frameworks allocate it, against published recipes that run:
// NVIDIA DeepLearningExamples, ResNet-50 v1.5 (PyTorch), batch per GPU: 256 with
// AMP and 112 in FP32 on 16 GB V100s, 256 on 80 GB A100s (TF32 and AMP). Those must
// fit; four times the AMP recipe on a 16 GB V100 must not.
#include "test_support.hpp"

#include <gtest/gtest.h>

using namespace mlsim;

namespace {
// Plans one step of ResNet-50 (momentum SGD, as the recipe) and returns its footprint; throws if it does not fit.
StepPlan resnet50(const std::string& precision, const std::string& accelerator, long batch) {
  return fixtures::plan_model("{preset: resnet50, optimizer: momentum, precision: " + precision + "}", accelerator,
                              batch);
}
} // namespace

TEST(MemoryRecipes, NvidiaResNet50RecipesFit) {
  for (const auto& [precision, accelerator, batch] :
       std::vector<std::tuple<std::string, std::string, long>>{{"mixed_fp16", "v100-sxm2-16gb", 256},
                                                               {"fp32", "v100-sxm2-16gb", 112},
                                                               {"tf32", "a100-sxm4-80gb", 256},
                                                               {"mixed_fp16", "a100-sxm4-80gb", 256}}) {
    StepPlan p;
    EXPECT_NO_THROW(p = resnet50(precision, accelerator, batch)) << precision << " " << accelerator << " " << batch;
    EXPECT_LE(p.memory_footprint.value(), p.memory_capacity.value());
  }
}

TEST(MemoryRecipes, FourTimesTheAmpRecipeDoesNotFitA16GbV100) {
  EXPECT_THROW(resnet50("mixed_fp16", "v100-sxm2-16gb", 1024), InputError);
  EXPECT_THROW(resnet50("fp32", "v100-sxm2-16gb", 448), InputError);
}

TEST(MemoryRecipes, MixedPrecisionKeepsHalfSizeActivations) {
  // The saved tensors of the convs' inputs are written in 16-bit under AMP: the activations shrink by
  // close to half (not exactly: norms keep fp32 statistics and casts add boundaries).
  StepPlan amp = resnet50("mixed_fp16", "a100-sxm4-80gb", 64);
  StepPlan fp32 = resnet50("fp32", "a100-sxm4-80gb", 64);
  double ratio = amp.activations_bytes.value() / fp32.activations_bytes.value();
  EXPECT_GT(ratio, 0.4);
  EXPECT_LT(ratio, 0.7);
  // fp32 master weights stay (plus a 16-bit copy): weights grow by half under AMP.
  EXPECT_NEAR(amp.weights_bytes.value() / fp32.weights_bytes.value(), 1.5, 1e-9);
}

// Weights, gradients and Adam's state per parameter, against the published accounting of mixed-precision
// training with Adam (Rajbhandari et al., "ZeRO", SC 2020, section 3.1: fp16 parameters and gradients, 2 + 2
// bytes, and fp32 master parameters, momentum and variance, 12 bytes: 16 a parameter) for a model cast to fp16;
// autocast keeps fp32 weights and gradients and a 16-bit copy of the weights: 4 + 2 + 4 + 8 = 18.
TEST(MemoryRecipes, ModelStateIsSixteenBytesAParameterForAModelCastToFp16WithAdam) {
  const std::string model = "{input: [1024], optimizer: adam, layers: [{type: dense, units: 1024}, "
                            "{type: dense, units: 1024}], precision: ";
  const double params = 2.0 * (1024.0 * 1024 + 1024);
  auto state = [&](const std::string& precision) {
    StepPlan p = fixtures::plan_model(model + precision + "}", "a100-sxm4-80gb", 8);
    return (p.weights_bytes + p.gradients_bytes + p.optimizer_state_bytes).value() / params;
  };
  EXPECT_NEAR(state("mixed_fp16_o2"), 16.0, 1e-9);
  EXPECT_NEAR(state("mixed_fp16"), 18.0, 1e-9);
  EXPECT_NEAR(state("fp32"), 16.0, 1e-9); // 4 + 4 + 8
}
