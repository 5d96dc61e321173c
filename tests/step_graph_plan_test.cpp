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

namespace {
// The optimizer ops' device time: what a stack's optimizer_kernels and zero_grad change.
double optimizer_seconds(const StepPlan& p) {
  double s = 0.0;
  for (size_t i = p.optimizer_begin; i < p.ops.size(); ++i)
    s += p.ops[i].duration.value();
  return s;
}
std::string resnet50_on(const std::string& stack) {
  return "{preset: resnet50, precision: mixed_fp16, optimizer: momentum, stack: " + stack + "}";
}
} // namespace

// PyTorch 1.x torch.optim: momentum SGD is buf.mul_(m), buf.add_(g), param.add_(buf) -- 3 kernels per tensor
// reading 5 and writing 3 tensors -- against the fused update's 1 kernel reading 3 (weights, gradient, state) and
// writing 2; zero_grad() before 2.0 adds a fill kernel per gradient tensor writing it once. One dense layer
// (a weight and a bias tensor): 8 kernels instead of 1 and 4 more tensor passes, each kernel at the launch floor
// plus the memory latency, the passes at the HBM rate.
TEST(StepGraphPlan, PerOpOptimizerPaysAKernelPerStepAndTensorAndZeroFillAFillPerTensor) {
  const std::string layer = "input: [4096], optimizer: momentum, layers: [{type: dense, units: 4096}]";
  StepPlan fused = plan_model("{" + layer + "}", "a100-sxm4-80gb", 8);
  StepPlan per_op = plan_model("{" + layer + ", stack: {preset: pytorch-eager, optimizer_kernels: per_op, "
                               "zero_grad: zero_fill}}", "a100-sxm4-80gb", 8);
  ASSERT_EQ(fused.ops.size() - fused.optimizer_begin, 1u);
  ASSERT_EQ(per_op.ops.size() - per_op.optimizer_begin, 1u);
  const AcceleratorSpec a = accelerator_preset("a100-sxm4-80gb");
  const double params = 4096.0 * 4096.0 + 4096.0;
  const double extra_kernels = 3.0 * 2 + 2 - 1; // 3 steps x 2 tensors + 2 fills, against 1
  const double extra_bytes = 4.0 * params * ((5.0 + 3.0 + 1.0) - (3.0 + 2.0));
  const double expected = extra_kernels * (a.launch_overhead + a.kernels.memory_latency).value() +
                          extra_bytes / (a.memory_bandwidth.value() * a.kernels.memory_fraction) /
                              a.efficiency_for("elementwise");
  EXPECT_NEAR(optimizer_seconds(per_op) - optimizer_seconds(fused), expected, 1e-9 * expected);
  EXPECT_NE(per_op.ops.back().why.find("8 kernels"), std::string::npos) << per_op.ops.back().why;

  // Plain SGD is param.add_(g): per op, one kernel per tensor (weight, bias) and the fused update's bytes.
  StepPlan sgd_fused = plan_model("{input: [4096], layers: [{type: dense, units: 4096}]}", "a100-sxm4-80gb", 8);
  StepPlan sgd_per_op = plan_model("{input: [4096], layers: [{type: dense, units: 4096}], "
                                   "stack: {preset: pytorch-eager, optimizer_kernels: per_op}}", "a100-sxm4-80gb", 8);
  const double one_kernel = (a.launch_overhead + a.kernels.memory_latency).value();
  EXPECT_NEAR(optimizer_seconds(sgd_per_op) - optimizer_seconds(sgd_fused), one_kernel, 1e-9 * one_kernel);
  EXPECT_THROW(model("{preset: resnet50, stack: {preset: pytorch-eager, optimizer_kernels: foreach}}"), InputError);
}

// LAMB (You et al. 2020) fused as apex's FusedLAMB: stage 1 reads gradient, two moments and weights and writes the
// moments and the update (4 in, 3 out), the layer norms read weights and update (2 in), stage 2 reads both and
// writes the weights (2 in, 1 out): 8 tensor passes in and 4 out, against fused Adam's 4 and 3. One dense layer
// of P fp32 weights: 5 more passes of 4 P bytes at the HBM rate, same kernel count; the same two moments of state.
TEST(StepGraphPlan, FusedLambMovesFiveMoreWeightPassesThanAdam) {
  const std::string layer = "input: [4096], layers: [{type: dense, units: 4096}]";
  StepPlan adam = plan_model("{" + layer + ", optimizer: adam}", "a100-sxm4-80gb", 8);
  StepPlan lamb = plan_model("{" + layer + ", optimizer: lamb}", "a100-sxm4-80gb", 8);
  const AcceleratorSpec a = accelerator_preset("a100-sxm4-80gb");
  const double params = 4096.0 * 4096.0 + 4096.0;
  const double expected = 5.0 * 4.0 * params / (a.memory_bandwidth.value() * a.kernels.memory_fraction) /
                          a.efficiency_for("elementwise");
  EXPECT_NEAR(optimizer_seconds(lamb) - optimizer_seconds(adam), expected, 1e-9 * expected);
  EXPECT_DOUBLE_EQ(lamb.optimizer_state_bytes.value(), adam.optimizer_state_bytes.value());
}

// The per-op optimizer loops over parameter tensors, not layers: torchvision's ResNet-50 has 161 of them
// (len(list(resnet50().parameters())): 53 conv weights, 53 x 2 batch-norm scales and shifts, the fc weight and
// bias) in 107 layers. So the PyTorch 1.x stack runs 161 x (3 + 1) = 644 optimizer kernels where the fused one
// runs 107, and moves 4 more fp32 passes over its 25,557,032 weights.
TEST(StepGraphPlan, ResNet50sPerOpOptimizerRunsFourKernelsPerParameterTensor) {
  // The host's issue time left out of both (host_issue_test.cpp): the kernels alone.
  const std::string no_host = "host_issue: {per_op: 0 s, per_optimizer_call: 0 s}";
  StepPlan v1 = plan_model(resnet50_on("{preset: pytorch1-eager, " + no_host + "}"), "a100-sxm4-80gb", 256);
  StepPlan v2 = plan_model(resnet50_on("{preset: pytorch-eager, " + no_host + "}"), "a100-sxm4-80gb", 256);
  ASSERT_EQ(v2.ops.size() - v2.optimizer_begin, 107u);
  const AcceleratorSpec a = accelerator_preset("a100-sxm4-80gb");
  const double expected = (644.0 - 107.0) * (a.launch_overhead + a.kernels.memory_latency).value() +
                          4.0 * 4.0 * 25557032.0 / (a.memory_bandwidth.value() * a.kernels.memory_fraction) /
                              a.efficiency_for("elementwise");
  EXPECT_NEAR(optimizer_seconds(v1) - optimizer_seconds(v2), expected, 1e-9 * expected);
  // The backward adds into the zero-filled gradients (AccumulateGrad, backward_rules.hpp): a kernel per tensor
  // (161), two fp32 reads and one write of every weight. Nothing else in the step changes.
  const double adds = 161.0 * (a.launch_overhead + a.kernels.memory_latency).value() +
                      3.0 * 4.0 * 25557032.0 / (a.memory_bandwidth.value() * a.kernels.memory_fraction) /
                          a.efficiency_for("elementwise");
  EXPECT_NEAR(device_seconds(v1) - device_seconds(v2), expected + adds, 1e-9 * (expected + adds));
}

// A model cast to fp16 keeps fp32 masters in the optimizer, which writes the fp16 weights back after each update
// (apex O2's master-to-model copy, Megatron's and DeepSpeed's fp16 optimizers): the update moves 2 more bytes a
// weight than autocast's, whose fp32 weights are the model's.
TEST(StepGraphPlan, AModelCastToFp16GetsItsWeightsWrittenBackByTheUpdate) {
  const std::string model = "{input: [1024], optimizer: adam, layers: [{type: dense, units: 1024}], precision: ";
  auto update_bytes = [&](const std::string& precision) {
    double b = 0;
    for (const PlannedOp& op : plan_model(model + precision + "}", "a100-sxm4-80gb", 8).ops)
      if (op.phase == "optimizer")
        b += op.bytes.value();
    return b;
  };
  EXPECT_NEAR(update_bytes("mixed_fp16_o2") - update_bytes("mixed_fp16"), 2.0 * (1024.0 * 1024 + 1024), 1e-3);
}
