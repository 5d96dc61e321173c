// plan_step on the step graph: the YAML forms, gradient buckets, the memory check,
// host-placed ops, and SEED-CASES.md case 5 (TPU matrix-unit padding at per-core batch 16 vs 128).
#include "sim/core/run/load/hardware_load.hpp"
#include "sim/core/run/load/model_load.hpp"
#include "sim/pipeline/model_spec.hpp"

#include "test_support.hpp"

#include <gtest/gtest.h>

using namespace mlsim;

namespace {
ModelSpec model(const std::string& yaml) {
  return parse_model(ConfigNode::load_string("model: " + yaml + "\n", "plan.yaml").child("model"));
}
using fixtures::device_seconds;
using fixtures::plan_model;
// Useful over executed FLOPs of the ops on the matrix unit.
double matrix_unit_utilisation(const StepPlan& p) {
  double useful = 0.0, executed = 0.0;
  for (const auto& op : p.ops)
    if (op.path == "matrix unit") {
      useful += op.flops.value();
      executed += op.executed_flops.value();
    }
  return useful / executed;
}
} // namespace

TEST(StepGraphPlan, RooflineFormStillPlansOneOp) {
  StepPlan p = plan_model("{forward_flops_per_sample: 1 GFLOP, parameters: 1000}", "v100-sxm2-16gb", 10);
  ASSERT_EQ(p.ops.size(), 1u);
  EXPECT_NEAR(p.ops[0].duration.value(), 3.0 * 1e9 * 10 / 15.7e12, 1e-12); // 3 x forward at the fp32 peak
  ASSERT_EQ(p.buckets.size(), 1u);
  EXPECT_DOUBLE_EQ(p.buckets[0].bytes.value(), 4000.0);
}

TEST(StepGraphPlan, BucketsFollowTheBackwardPassAndCoverEveryGradient) {
  StepPlan p = plan_model("{preset: resnet50, precision: mixed_fp16, gradient_bucket: 25 MB}", "a100-sxm4-80gb", 32);
  double bytes = 0.0;
  size_t previous = 0;
  ASSERT_GT(p.buckets.size(), 1u);
  for (const auto& b : p.buckets) {
    EXPECT_GE(b.ready_after_op, p.backward_begin);
    EXPECT_LT(b.ready_after_op, p.optimizer_begin);
    EXPECT_GE(b.ready_after_op, previous);
    previous = b.ready_after_op;
    bytes += b.bytes.value();
  }
  EXPECT_DOUBLE_EQ(bytes, 4.0 * 25557032.0); // fp32 master gradients of torchvision's ResNet-50
  // The last bucket holds the first layers' gradients: the stem conv's wgrad comes last.
  EXPECT_EQ(p.ops[p.buckets.back().ready_after_op].layer, "conv1");
  for (size_t i = p.optimizer_begin; i < p.ops.size(); ++i)
    EXPECT_EQ(p.ops[i].phase, "optimizer");
}

TEST(StepGraphPlan, ABatchThatDoesNotFitIsAnInputErrorWithTheNumbers) {
  try {
    plan_model("{preset: vgg16}", "titan-v", 4096);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("batch 4096"), std::string::npos) << m;
    EXPECT_NE(m.find("activations"), std::string::npos) << m;
    EXPECT_NE(m.find("plan.yaml:1:"), std::string::npos) << m;
  }
  // Weights alone: VGG16's 138,357,544 fp32 weights + gradients + Adam's 2 states = 16 B each = 2.2 GB.
  StepPlan small = plan_model("{preset: vgg16, optimizer: adam}", "titan-v", 1);
  EXPECT_DOUBLE_EQ(small.weights_bytes.value() + small.gradients_bytes.value() + small.optimizer_state_bytes.value(),
                   16.0 * 138357544.0);
}

TEST(StepGraphPlan, HostPlacedOpCostsCoreSecondsAndMovesItsTensorsOverPcie) {
  StepPlan p = plan_model("{ops: [{name: embed, kind: matmul, flops: 1 GFLOP, bytes_read: 4 MB, bytes_written: 8 MB,"
                    " parameters: 1000, dims: {m: 1, n: 1024, k: 1024}},"
                    " {name: augment, kind: elementwise, flops: 64 MFLOP, bytes_read: 8 MB, bytes_written: 2 MB,"
                    " placement: host},"
                    " {name: head, kind: matmul, flops: 1 GFLOP, bytes_read: 2 MB, bytes_written: 4 kB,"
                    " parameters: 1000}]}",
                    "v100-sxm2-16gb", 2);
  const PlannedOp* host = nullptr;
  for (const auto& op : p.ops)
    if (op.name == "augment")
      host = &op;
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(host->placement, OpPlacement::host);
  EXPECT_EQ(host->path, "host");
  EXPECT_DOUBLE_EQ(host->duration.value(), 2 * 64e6 / 32e9); // batch 2 at the default 32 GFLOP/s core
  EXPECT_DOUBLE_EQ(host->to_host.value(), 2 * 8e6);           // embed's output comes up
  EXPECT_DOUBLE_EQ(host->to_device.value(), 2 * 2e6);         // its output goes back to head
}

TEST(StepGraphPlan, LayerListFormWithSkipConnection) {
  StepPlan p = plan_model("{input: [16, 16, 8], precision: mixed_bf16, layers: ["
                    "{type: conv2d, name: a, filters: 8, kernel: 3, activation: relu},"
                    "{type: conv2d, name: b, filters: 8, kernel: 3},"
                    "{type: add, name: skip, inputs: [a, b]},"
                    "{type: global_avg_pool}, {type: dense, units: 10}, {type: loss}]}",
                    "a100-sxm4-40gb", 8);
  bool has_skip = false;
  for (const auto& op : p.ops)
    has_skip = has_skip || op.name == "skip/add";
  EXPECT_TRUE(has_skip);
  EXPECT_GT(p.critical_path.value(), 0.0);
  EXPECT_LE(p.critical_path.value(), device_seconds(p) + 1e-15);
}

TEST(StepGraphPlan, BadModelSectionsAreInputErrors) {
  EXPECT_THROW(model("{preset: resnet51}"), InputError);
  EXPECT_THROW(model("{preset: resnet50, depth: 4}"), InputError);             // not a resnet option
  EXPECT_THROW(model("{preset: unet, precision: fp8}"), InputError);
  EXPECT_THROW(model("{preset: unet, stack: cuda11}"), InputError);
  EXPECT_THROW(model("{layers: [{type: conv2d, filters: 8}]}"), InputError);   // no input shape
  EXPECT_THROW(model("{input: [8], layers: [{type: dense, units: 4, kernel: 3}]}"), InputError);
  EXPECT_THROW(model("{preset: unet, forward_flops_per_sample: 1 GFLOP}"), InputError);
  EXPECT_THROW(model("{ops: [{kind: matmul, flops: 5}]}"), InputError);        // a FLOP count needs its unit
  EXPECT_THROW(plan_model("{input: [8, 8, 3], layers: [{type: dense, units: 4, inputs: [nowhere]}]}", "titan-v", 1),
               InputError);
}

// Case 5: a U-Net on one TPU v3 core. The matrix unit pads the per-core batch to 128, so at
// batch 16 seven eighths of every conv's work is padding: the utilisation at 16 is exactly
// 16/128 of that at 128 (the output-channel padding is the same at both batches), and the
// step time per sample at 128 is far better.
TEST(StepGraphPlan, Case5MatrixUnitPaddingAtPerCoreBatch16Versus128) {
  StepPlan b16 = plan_model("{preset: unet, depth: 4}", "tpu-v3-core", 16);
  StepPlan b128 = plan_model("{preset: unet, depth: 4}", "tpu-v3-core", 128);
  double u16 = matrix_unit_utilisation(b16), u128 = matrix_unit_utilisation(b128);
  EXPECT_NEAR(u16 / u128, 16.0 / 128.0, 1e-9);
  EXPECT_LT(u16, 0.125 + 1e-9);
  double per_sample_16 = device_seconds(b16) / 16.0, per_sample_128 = device_seconds(b128) / 128.0;
  EXPECT_LT(per_sample_128, 0.5 * per_sample_16);
}
