// Seed case 1: an input-bound job, the profiler's first numbers, and what
// prefetching / parallel preprocessing / more cores recover.
#include "test_support.hpp"

#include <gtest/gtest.h>

using mlsim::fixtures::source_path;

namespace {
const std::string kCase = "scenarios/cases/case1-input-bound.yaml";

nlohmann::ordered_json run_case(const std::vector<std::string>& overrides = {}) {
  return mlsim::simulate_file_in_child(source_path(kCase), overrides);
}

// Per-sample host cost from the scenario's stage costs, by hand (500x375 JPEG -> 224x224 fp32):
// decode 0.3 ms + 187500 px x 9 ns; crop 0.1 ms + 187500 px x 2 ns; flip/normalize 50176 px x 3 ns;
// collate 0.05 ns per byte of 224x224x3 fp32.
constexpr double kCostPerSample = (0.3e-3 + 187500 * 9e-9) + (0.1e-3 + 187500 * 2e-9) + 50176 * 3e-9 +
                                  224 * 224 * 3 * 4 * 0.05e-9;
} // namespace

TEST(Case1InputBound, MostOfTheStepIsWaitingForInput) {
  auto j = run_case();
  EXPECT_GT(j["breakdown"]["input"].get<double>(), 0.80);
  EXPECT_EQ(j["input_bound"], "highly");
  EXPECT_EQ(j["bottleneck"]["kind"], "stage");
  EXPECT_EQ(j["bottleneck"]["name"], "decode_jpeg");
  // The three numbers people read first are reported.
  EXPECT_LT(j["accelerator_utilization"].get<double>(), 0.2);
  EXPECT_DOUBLE_EQ(j["op_placement"]["device"].get<double>() + j["op_placement"]["host"].get<double>(), 1.0);
  EXPECT_GT(j["precision"]["fp16"].get<double>(), 0.5); // the model runs in fp16
  // One worker, no prefetch: the pipeline delivers 1 / cost samples/s and the device waits for each batch.
  EXPECT_LT(j["throughput_samples_per_s"].get<double>(), 1.0 / kCostPerSample);
}

TEST(Case1InputBound, PrefetchOverlapsTheStepWithTheNextBatch) {
  auto base = run_case();
  auto prefetched = run_case({"pipeline.prefetch=2"});
  // With overlap the step is max(pipeline, device) instead of their sum: throughput reaches 1 / cost.
  EXPECT_GT(prefetched["throughput_samples_per_s"].get<double>(), base["throughput_samples_per_s"].get<double>());
  EXPECT_NEAR(prefetched["throughput_samples_per_s"].get<double>(), 1.0 / kCostPerSample, 0.02 / kCostPerSample);
}

// Rates are steady-state figures: enough steps that the pipeline's start-up transient is excluded.
TEST(Case1InputBound, ParallelPreprocessingScalesWithWorkersUpToTheCores) {
  auto eight = run_case({"pipeline.prefetch=2", "pipeline.workers=8", "run.steps=80", "run.warmup_steps=20"});
  EXPECT_NEAR(eight["throughput_samples_per_s"].get<double>(), 8.0 / kCostPerSample, 0.03 * 8.0 / kCostPerSample);
  // 32 workers on the node's 16 cores: capped by the cores.
  auto capped = run_case({"pipeline.prefetch=2", "pipeline.workers=32"});
  EXPECT_LE(capped["throughput_samples_per_s"].get<double>(), 16.0 / kCostPerSample * 1.01);
  // More cores (and workers = cores) remove most of the stall.
  auto more = run_case({"pipeline.prefetch=2", "pipeline.workers=0", "hardware.nodes.0.cpu.cores=64"});
  EXPECT_LT(more["breakdown"]["input"].get<double>(), 0.5 * run_case()["breakdown"]["input"].get<double>());
}

// The profiler's input-pipeline analysis: without prefetch every read happens while the device waits
// (on demand); the downsized P100 job prefetches, so its reads are all done in advance.
TEST(Case1InputBound, ReadsAreOnDemandWithoutPrefetch) {
  auto j = run_case();
  EXPECT_GT(j["input_analysis_s_per_step"]["read_on_demand"].get<double>(), 0.0);
  EXPECT_EQ(j["input_analysis_s_per_step"]["read_in_advance"].get<double>(), 0.0);
  // Preprocessing per step = batch x the per-sample cost worked out above.
  EXPECT_NEAR(j["input_analysis_s_per_step"]["preprocessing_core_seconds"].get<double>(), 64 * kCostPerSample,
              0.01 * 64 * kCostPerSample);
  auto downsized = mlsim::simulate_file_in_child(source_path("scenarios/cases/case3-p100-downsized.yaml"), {});
  EXPECT_EQ(downsized["input_analysis_s_per_step"]["read_on_demand"].get<double>(), 0.0);
  EXPECT_GT(downsized["input_analysis_s_per_step"]["read_in_advance"].get<double>(), 0.0);
}
