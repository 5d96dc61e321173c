// The closed-form fallback predictor on cases worked out by hand, and the error summary.
#include "sim/validate/predictor.hpp"
#include "sim/validate/scenario_yaml.hpp"
#include "sim/validate/validate.hpp"

#include "tests/validate_fixtures.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

using namespace mlsim::validate;

namespace {
// 2 cores, perfect scaling; loader 2.5 ms per sample (40 ms per batch of 16), consumer 10 ms per layer.
Profile hand_profile() {
  Profile p;
  p.cpu.cores = 2;
  StageCost decode;
  decode.per_sample_s = 2.5e-3;
  decode.all_cores_efficiency = 1.0;
  p.cpu.stage_costs["jpeg_decode"] = decode;
  StageCost gemm;
  gemm.per_flop_s = 10e-3 / (2.0 * 100 * 100 * 100); // one 100^3 GEMM = 10 ms
  p.cpu.stage_costs["host_gemm_fp32"] = gemm;
  return p;
}
JobConfig cfg(int k, int layers) {
  JobConfig c;
  c.loader_threads = k;
  c.consumer_layers = layers;
  c.gemm_n = 100;
  c.batch_size = 16;
  return c;
}
} // namespace

TEST(ValidatePredictor, CostsAddUpPerBatch) {
  JobCosts c = job_costs(hand_profile(), cfg(1, 1), mlsim::fixtures::one_500x375_image());
  EXPECT_NEAR(c.loader_s, 0.040, 1e-12);
  EXPECT_NEAR(c.consumer_s, 0.010, 1e-12);
}

TEST(ValidatePredictor, OneLoaderIsTheBottleneck) {
  // X = min(1/40ms, 1/10ms, 2/50ms) = 25 batches/s = 400 samples/s; the consumer computes 10 of every 40 ms.
  Prediction p = closed_form_prediction(hand_profile(), cfg(1, 1), mlsim::fixtures::one_500x375_image());
  EXPECT_NEAR(p.throughput, 400.0, 1e-9);
  EXPECT_NEAR(p.stall, 0.75, 1e-9);
  EXPECT_EQ(p.bottleneck, "loader");
}

TEST(ValidatePredictor, TwoLoadersAreCoreBound) {
  // X = min(2 * (2/3) / 40ms = 33.3, 1/10ms, 2/50ms = 40) = 33.3/s: three threads share two cores.
  // The consumer runs at 2/3 speed next to two busy loaders: stall = 1 - 33.3 * 10ms / (2/3) = 0.5.
  Prediction p = closed_form_prediction(hand_profile(), cfg(2, 1), mlsim::fixtures::one_500x375_image());
  EXPECT_NEAR(p.throughput, 16.0 * 100.0 / 3.0, 1e-9);
  EXPECT_NEAR(p.stall, 0.5, 1e-9);
}

TEST(ValidatePredictor, HeavyConsumerNeverWaits) {
  // Consumer 100 ms per batch; 4 loaders: X = min(4*(2/5)/40ms = 40, speed(2)=1 / 100ms = 10, 2/140ms) = 10/s.
  Prediction p = closed_form_prediction(hand_profile(), cfg(4, 10), mlsim::fixtures::one_500x375_image());
  EXPECT_NEAR(p.throughput, 160.0, 1e-9);
  EXPECT_EQ(p.stall, 0.0);
  EXPECT_EQ(p.bottleneck, "consumer");
}

TEST(ValidatePredictor, BackgroundLoadSlowsTheJob) {
  JobInputs busy = mlsim::fixtures::one_500x375_image();
  busy.background_cores = 1.0; // one always-runnable thread of another tenant
  // One loader + consumer + 1 background thread on 2 cores: each runs at 2/3.
  Prediction p = closed_form_prediction(hand_profile(), cfg(1, 1), busy);
  EXPECT_NEAR(p.throughput, 400.0 * 2.0 / 3.0, 1e-9);
  EXPECT_LT(p.throughput, closed_form_prediction(hand_profile(), cfg(1, 1), mlsim::fixtures::one_500x375_image()).throughput);
}

TEST(ValidatePredictor, SummaryTakesMedianAndMaxOfAbsoluteErrors) {
  ErrorSummary s = summarise({0.10, -0.02, 0.04, -0.30, 0.01});
  EXPECT_NEAR(s.median_abs_error, 0.04, 1e-12);
  EXPECT_NEAR(s.max_abs_error, 0.30, 1e-12);
}

TEST(ValidateScenario, YamlNamesTheProfileAndTheConfiguration) {
  JobConfig c = cfg(3, 12);
  c.prefetch_depth = 4;
  std::string y = scenario_yaml(c, mlsim::fixtures::one_500x375_image(), hand_profile(), "profiles/vm.yaml", RunLength{5, 45});
  EXPECT_NE(y.find("preset: \"profiles/vm.yaml\""), std::string::npos);
  EXPECT_NE(y.find("workers: 3"), std::string::npos);
  EXPECT_NE(y.find("prefetch: 7"), std::string::npos); // queue depth 4 + one batch held by each of 3 loaders
  EXPECT_NE(y.find("batch_size: 16"), std::string::npos);
  EXPECT_NE(y.find("cost: jpeg_decode"), std::string::npos);
  EXPECT_NE(y.find("placement: host"), std::string::npos); // the CPU consumer is a host op
  EXPECT_NE(y.find("steps: 50, warmup_steps: 5"), std::string::npos);
  EXPECT_EQ(y.find("cost: random_resized_crop"), std::string::npos); // not calibrated in this profile: free
}

TEST(ValidateScenario, HostGemmRateIncludesThePerCallCost) {
  Profile p = hand_profile();
  EXPECT_NEAR(host_gemm_rate(p, 100), 2e6 / 10e-3, 1e-6);
  p.cpu.stage_costs["host_gemm_fp32"].per_sample_s = 10e-3; // as much again per call
  EXPECT_NEAR(host_gemm_rate(p, 100), 2e6 / 20e-3, 1e-6);
  EXPECT_EQ(host_gemm_rate(Profile{}, 100), 0.0);
}

TEST(ValidateScenario, BackgroundLoadLeavesTheRestOfTheCores) {
  auto eq = [](JobCpu j, int cores, double speed) {
    EXPECT_EQ(j.cores, cores);
    EXPECT_DOUBLE_EQ(j.speed, speed);
  };
  eq(job_cpu(2, 0.0, false), 2, 1.0);
  eq(job_cpu(2, 0.0, true), 2, 1.0);
  eq(job_cpu(2, 0.5, false), 2, 0.75);  // per-thread sharing: every core slower
  eq(job_cpu(2, 0.5, true), 2, 0.75);   // a group share of 1.5 cores
  eq(job_cpu(2, 1.4, true), 1, 0.6);    // a group share of 0.6 cores: one thread can use it all
  eq(job_cpu(2, 0.9, true), 1, 1.1);    // 1.1 cores: one core 10 % fast beats two at 55 %
  eq(job_cpu(2, 0.5, true), 2, 0.75);
  eq(job_cpu(2, 1.4, false), 2, 0.3);
  eq(job_cpu(2, 5.0, true), 1, 0.1);    // never zero
}

// The host GEMM consumer follows its own reference where one was timed: at 0.8 of its calibrated speed a 10 ms
// layer takes 12.5 ms, whatever the spin says of the loader's cores (which keep host_speed); without one it
// follows the spin.
TEST(ValidatePredictor, TheConsumerFollowsItsOwnReferenceTheLoaderTheSpin) {
  JobInputs in = mlsim::fixtures::one_500x375_image();
  in.host_speed = 1.25;
  JobCosts spin_only = job_costs(hand_profile(), cfg(1, 1), in);
  EXPECT_NEAR(spin_only.consumer_s, 0.010 / 1.25, 1e-12);
  in.consumer_speed = 0.8;
  JobCosts both = job_costs(hand_profile(), cfg(1, 1), in);
  EXPECT_NEAR(both.consumer_s, 0.0125, 1e-12);
  EXPECT_NEAR(both.loader_s, 0.040 / 1.25, 1e-12);
  // The simulator's scenario: the GEMM runs at core_flops x core_speed, and core_speed carries host_speed, so
  // core_flops is the calibrated rate x 0.8 / 1.25.
  const std::string y = scenario_yaml(cfg(1, 1), in, hand_profile(), "profiles/vm.yaml", RunLength{5, 45});
  EXPECT_NE(y.find(fmt::format("core_flops: \"{:.6g} FLOP/s\"", 2e6 / 10e-3 * 0.8 / 1.25)), std::string::npos) << y;
}
