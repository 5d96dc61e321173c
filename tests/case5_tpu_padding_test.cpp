// Seed case 5: a U-Net on 8 TPU v3 cores at a per-core batch of 16 vs 128.
// A core's 128x128 matrix unit pads each conv's batch (and channels) up to
// multiples of 128 (Cloud TPU performance guide), so at batch 16 at most 16/128
// of its work is useful; at batch 128 the batch side is full.
#include "test_support.hpp"

#include <gtest/gtest.h>

using mlsim::fixtures::source_path;

namespace {

nlohmann::ordered_json run_case(int per_core_batch) {
  return mlsim::simulate_file_in_child(
      source_path("scenarios/cases/case5-tpu-unet-batch" + std::to_string(per_core_batch) + ".yaml"), {});
}

double time_per_sample(const nlohmann::ordered_json& j) { return 1.0 / j["throughput_samples_per_s"].get<double>(); }

constexpr double kUnit = 128;

} // namespace

TEST(Case5TpuPadding, BatchSixteenFillsOneEighthOfTheMatrixUnit) {
  auto b16 = run_case(16);
  auto b128 = run_case(128);
  ASSERT_EQ(b16["matrix_path"]["name"], "matrix unit");
  double useful16 = b16["matrix_path"]["useful_flop_fraction"].get<double>();
  double useful128 = b128["matrix_path"]["useful_flop_fraction"].get<double>();
  // Every conv's batch side is padded 16 -> 128 (x8) at batch 16 and not at all at 128; the channel
  // side pads the same at both, so the useful fractions differ by exactly 128/16.
  EXPECT_NEAR(useful128 / useful16, kUnit / 16, 1e-9);
  EXPECT_LE(useful16, 16 / kUnit + 1e-12);
  EXPECT_LE(useful128, 1.0);
  // Utilisation (useful FLOPs over time x peak) follows: at most 1/8 at batch 16, several times higher at 128.
  double util16 = b16["matrix_path"]["utilization"].get<double>();
  double util128 = b128["matrix_path"]["utilization"].get<double>();
  EXPECT_LE(util16, 16 / kUnit);
  EXPECT_GT(util128, 4 * util16);
  // The matrix unit takes most of the step at batch 16, at low utilisation: the profile of the report.
  EXPECT_GT(b16["matrix_path"]["time_fraction"].get<double>(), 0.5);
  const auto& top = b16["top_ops"][0];
  EXPECT_EQ(top["path"], "matrix unit");
  EXPECT_LE(top["utilization"].get<double>(), 16 / kUnit);
}

// The report's profile: XLA fuses each convolution with its leaky ReLU (an "output fusion"); those fused
// ops take most of the step at low utilisation, and the padding of the batch side to 128 explains it.
TEST(Case5TpuPadding, OutputFusionsDominateAndPaddingExplainsTheirUtilisation) {
  auto b16 = run_case(16);
  auto b128 = run_case(128);
  EXPECT_GT(b16["fusion_time"]["output fusion"].get<double>(), 0.5);
  const auto& top = b16["top_ops"][0];
  EXPECT_EQ(top["fusion"], "output fusion");
  EXPECT_EQ(top["name"].get<std::string>().rfind("fusion.", 0), 0u); // named as XLA's profile names it
  EXPECT_EQ(top["kind"], "conv");
  EXPECT_GE(top["fused"].size(), 2u); // the conv and its activation
  // Its utilisation is at most its useful share of the padded work, and that share carries the batch
  // side's 16/128; the same fused op at batch 128 has no batch padding: exactly 8x the useful share.
  double useful16 = top["useful_flop_fraction"].get<double>();
  EXPECT_LE(top["utilization"].get<double>(), useful16 + 1e-12);
  EXPECT_LE(useful16, 16 / kUnit + 1e-12);
  EXPECT_NE(top["why"].get<std::string>().find("padded"), std::string::npos);
  bool found = false;
  for (const auto& op : b128["top_ops"])
    if (op["name"] == top["name"]) {
      found = true;
      EXPECT_NEAR(op["useful_flop_fraction"].get<double>() / useful16, kUnit / 16, 1e-9);
    }
  EXPECT_TRUE(found) << "the same fusion is among the top ops at batch 128";
}

TEST(Case5TpuPadding, LargerBatchCutsTheTimePerSample) {
  auto b16 = run_case(16);
  auto b128 = run_case(128);
  // The input side is fast on purpose: the phenomenon is the padding.
  EXPECT_LT(b16["breakdown"]["input"].get<double>(), 0.05);
  EXPECT_LT(b128["breakdown"]["input"].get<double>(), 0.05);
  EXPECT_EQ(b16["bottleneck"]["kind"], "device");
  // The padded matrix work per sample drops by 8x; memory-bound ops (activations, pooling, dropout)
  // cost the same per sample at both batches, so the step per sample gains between 2x and 8x.
  double ratio = time_per_sample(b16) / time_per_sample(b128);
  EXPECT_GT(ratio, 2.0);
  EXPECT_LT(ratio, kUnit / 16);
  EXPECT_EQ(b16["accelerators"], 8);
}
