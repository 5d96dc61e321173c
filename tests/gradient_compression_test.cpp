// Gradient compression (model.gradient_compression: fp16 | bf16, DDP's fp16/bf16_compress_hook, Horovod's
// Compression.fp16): the all-reduce moves 2 bytes a gradient element. Each test holds a closed form.
#include "sim/core/base/errors.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <numeric>

using namespace mlsim;

namespace {
double bucket_bytes(const StepPlan& p) {
  return std::accumulate(p.buckets.begin(), p.buckets.end(), 0.0,
                         [](double s, const GradientBucket& b) { return s + b.bytes.value(); });
}
double step_s(const nlohmann::ordered_json& j) { return j["step_time_s"]["mean"].get<double>(); }
} // namespace

// ResNet-50's 25,557,032 parameters (torchvision): fp32 gradients (FP32, and AMP's fp32 masters) all-reduce 4
// bytes each, compressed 2; a model whose gradients are already fp16 is left as it is.
TEST(GradientCompression, BucketsCarryTwoBytesAGradient) {
  constexpr double params = 25557032;
  for (const char* precision : {"fp32", "mixed_fp16"}) {
    const std::string model = std::string("{preset: resnet50, precision: ") + precision;
    EXPECT_NEAR(bucket_bytes(fixtures::plan_model(model + "}", "a100-sxm4-40gb", 32)), 4 * params, 1.0) << precision;
    EXPECT_NEAR(bucket_bytes(fixtures::plan_model(model + ", gradient_compression: fp16}", "a100-sxm4-40gb", 32)),
                2 * params, 1.0)
        << precision;
  }
  const double fp16 = bucket_bytes(fixtures::plan_model("{preset: resnet50, precision: fp16}", "a100-sxm4-40gb", 32));
  EXPECT_NEAR(fp16, 2 * params, 1.0);
  EXPECT_DOUBLE_EQ(
      bucket_bytes(fixtures::plan_model("{preset: resnet50, precision: fp16, gradient_compression: bf16}",
                                        "a100-sxm4-40gb", 32)),
      fp16);
}

// 8 ranks, 100 M fp32 parameters, a tiny roofline model: the all-reduce is the step's exposed collective, the
// ring 2 x 7 x 4 us + 2 x 7/8 x bytes / 300 GB/s (closed_form_test.cpp) at 400 MB, and at 200 MB compressed.
TEST(GradientCompression, TheRingMovesHalfTheBytes) {
  auto ring = [](double bytes) { return 2 * 7 * 4e-6 + 2 * 7.0 / 8.0 * bytes / 300e9; };
  auto plain = fixtures::run(fixtures::base_scenario(8, 0.01, 0.001, 100e6), {"pipeline.workers=16"});
  auto half = fixtures::run(fixtures::base_scenario(8, 0.01, 0.001, 100e6),
                            {"pipeline.workers=16", "model.gradient_compression=fp16"});
  EXPECT_NEAR(plain["breakdown"]["collective"].get<double>() * step_s(plain), ring(400e6), 0.02 * ring(400e6));
  EXPECT_NEAR(half["breakdown"]["collective"].get<double>() * step_s(half), ring(200e6), 0.02 * ring(200e6));
}

// A traced model's buckets are the message sizes the trace measured: compression there is an input error at the
// key, before the trace is read; an unknown value names the choices.
TEST(GradientCompression, TraceAndUnknownValuesAreInputErrors) {
  try {
    fixtures::load(fixtures::base_scenario(1), {"model={trace: no-such-trace.json, gradient_compression: fp16}"});
    ADD_FAILURE() << "compression of a trace's buckets was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("model.gradient_compression"), std::string::npos) << e.what();
  }
  EXPECT_THROW(fixtures::load(fixtures::base_scenario(1), {"model.gradient_compression=int8"}), InputError);
}
