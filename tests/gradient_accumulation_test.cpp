// Gradient accumulation (model.gradient_accumulation = N): a step is N micro-batches, each waited for, copied
// and run forward and backward; the gradients are all-reduced once and the optimizer runs once. Each test
// holds a closed form of that loop.
#include "sim/core/base/errors.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

using namespace mlsim;

namespace {
double step_s(const nlohmann::ordered_json& j) { return j["step_time_s"]["mean"].get<double>(); }
double throughput(const nlohmann::ordered_json& j) { return j["throughput_samples_per_s"].get<double>(); }
} // namespace

// Compute-bound roofline (no parameters, no optimizer): N micro-batches take N times one, and the throughput
// (N x batch a step) is unchanged.
TEST(GradientAccumulation, ComputeBoundStepIsNMicroBatches) {
  auto one = fixtures::run(fixtures::base_scenario(1, 0.01, 100.0));
  auto four = fixtures::run(fixtures::base_scenario(1, 0.01, 100.0), {"model.gradient_accumulation=4"});
  EXPECT_NEAR(step_s(four), 4.0 * step_s(one), 1e-3 * step_s(one));
  EXPECT_NEAR(throughput(four), throughput(one), 1e-3 * throughput(one));
  EXPECT_EQ(four["samples_consumed"].get<double>(), 4.0 * one["samples_consumed"].get<double>());
}

// An input-bound job: each micro-batch is a batch the pipeline must deliver, so the throughput stays the
// pipeline's (4 workers / 10 ms = 400 samples/s) and a step waits for N batches.
TEST(GradientAccumulation, EveryMicroBatchIsABatchOfInput) {
  auto j = fixtures::run(fixtures::base_scenario(1, 10.0, 0.001), {"pipeline.workers=4", "model.gradient_accumulation=3"});
  EXPECT_NEAR(throughput(j), 400.0, 0.01 * 400.0);
  EXPECT_NEAR(step_s(j), 3 * 32 / 400.0, 0.01 * 3 * 32 / 400.0);
  EXPECT_EQ(j["input_bound"], "highly");
  // The same through the serialised copy (the default above is tf.data's pinned, overlapped copier).
  auto serial = fixtures::run(fixtures::base_scenario(1, 10.0, 0.001),
                              {"pipeline.workers=4", "model.gradient_accumulation=3", "pipeline.copy=serialized"});
  EXPECT_NEAR(throughput(serial), 400.0, 0.01 * 400.0);
}

// 8 ranks, 100 M fp32 parameters, a tiny model: the all-reduce is the step at N = 1. With N = 4 the ring
// runs once a step (DDP's no_sync on the first three micro-batches): its time a step is the same ring,
// 2 x 7 x 4 us + 2 x 7/8 x 400 MB / 300 GB/s (closed_form_test.cpp), not four of them.
TEST(GradientAccumulation, GradientsAreReducedOnceAStep) {
  double ring = 2 * 7 * 4e-6 + 2 * 7.0 / 8.0 * 400e6 / 300e9;
  auto j = fixtures::run(fixtures::base_scenario(8, 0.01, 0.001, 100e6),
                         {"pipeline.workers=16", "model.gradient_accumulation=4"});
  EXPECT_NEAR(j["breakdown"]["collective"].get<double>() * step_s(j), ring, 0.02 * ring);
  // gradient_sync: micro_batch (DDP without no_sync): every micro-batch's backward reduces, four rings a step.
  auto every = fixtures::run(fixtures::base_scenario(8, 0.01, 0.001, 100e6),
                             {"pipeline.workers=16", "model.gradient_accumulation=4", "model.gradient_sync=micro_batch"});
  EXPECT_NEAR(every["breakdown"]["collective"].get<double>() * step_s(every), 4 * ring, 0.02 * 4 * ring);
}

// A step graph with an optimizer, the device the limit (the host's calls free: host_issue_test.cpp covers a
// host-bound accumulated step): step(N) = N x (copy + forward + backward) + optimizer, so
// N x step(1) - step(N) = (N - 1) x the optimizer's time, which the plan gives op by op.
TEST(GradientAccumulation, TheOptimizerRunsOnceAStep) {
  const std::string model = "{preset: resnet18, input: [64, 64, 3], optimizer: adam, precision: fp32, "
                            "stack: {preset: pytorch1-eager, host_issue: {per_op: 0 s, per_optimizer_call: 0 s}}}";
  std::string yaml = fixtures::base_scenario(1, 0.01, 1.0);
  yaml.replace(yaml.find("model:"), yaml.find("run:") - yaml.find("model:"), "model: " + model + "\n");
  StepPlan plan = fixtures::plan_model(model, "a100-sxm4-40gb", 32);
  double optimizer = 0;
  for (const PlannedOp& op : plan.ops)
    if (op.phase == "optimizer")
      optimizer += op.duration.value();
  ASSERT_GT(optimizer, 0.0);
  auto one = fixtures::run(yaml);
  auto five = fixtures::run(yaml, {"model.gradient_accumulation=5"});
  EXPECT_NEAR(5 * step_s(one) - step_s(five), 4 * optimizer, 0.01 * 4 * optimizer);
}

TEST(GradientAccumulation, ZeroIsAnInputError) {
  try {
    fixtures::load(fixtures::base_scenario(), {"model.gradient_accumulation=0"});
    FAIL() << "no error";
  } catch (const InputError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("model.gradient_accumulation"), std::string::npos) << m;
    EXPECT_NE(m.find("got '0'"), std::string::npos) << m;
  }
}
