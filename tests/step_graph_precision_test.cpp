// Precision policies and software stacks: where casts appear, what they cost,
// and SEED-CASES.md case 4 (fp16 slower than fp32 on a Titan V with the old stack).
#include "sim/core/run/load/hardware_load.hpp"
#include "sim/core/run/load/model_load.hpp"
#include "sim/hardware/accelerator.hpp"
#include "sim/pipeline/model_spec.hpp"
#include "sim/pipeline/step_graph/forward_graph.hpp"
#include "sim/pipeline/step_graph/precision_policy.hpp"

#include <gtest/gtest.h>

using namespace mlsim;

namespace {
LayerSpec conv(const std::string& name, long filters) {
  LayerSpec l;
  l.type = "conv2d";
  l.name = name;
  l.filters = filters;
  l.kernel = 3;
  return l;
}
LayerSpec layer(const std::string& type, const std::string& name) {
  LayerSpec l;
  l.type = type;
  l.name = name;
  return l;
}

OpGraph typed(PrecisionPolicy p, const StackProfile& stack = StackProfile{}) {
  // [8, 8, 16] -> conv 32 -> softmax -> loss, batch 4
  ForwardGraph fg = build_forward_graph({conv("c", 32), layer("softmax", "s"), layer("loss", "l")}, {8, 8, 16}, 4);
  return apply_precision(fg.graph, p, stack, DType::fp32);
}

std::vector<const Op*> casts(const OpGraph& g) {
  std::vector<const Op*> out;
  for (const auto& op : g.ops)
    if (op.kind == OpKind::cast)
      out.push_back(&op);
  return out;
}

struct DeviceTime {
  double total = 0.0, casts = 0.0;
};
DeviceTime device_time(const StepPlan& plan) {
  DeviceTime t;
  for (const auto& op : plan.ops) {
    t.total += op.duration.value();
    if (op.kind == "cast")
      t.casts += op.duration.value();
  }
  return t;
}

StepPlan plan_case4(const std::string& precision, const std::string& stack) {
  auto doc = ConfigNode::load_string("model: {preset: case4_cnn, optimizer: rmsprop, precision: " + precision +
                                         ", stack: " + stack + "}\n",
                                     "case4.yaml");
  AcceleratorSpec titan = accelerator_preset("titan-v");
  StepContext ctx;
  ctx.accelerator = &titan;
  ctx.batch_per_device = 128;
  return plan_step(parse_model(doc.child("model")), ctx);
}
} // namespace

TEST(StepGraphPrecision, Fp32HasNoCasts) { EXPECT_TRUE(casts(typed(PrecisionPolicy::fp32)).empty()); }

TEST(StepGraphPrecision, MixedFp16CastsInputWeightsAndBeforeSoftmax) {
  OpGraph g = typed(PrecisionPolicy::mixed_fp16);
  auto c = casts(g);
  // The fp32 batch to fp16, the fp32 master weights to fp16, the conv's fp16 output to fp32 for softmax.
  ASSERT_EQ(c.size(), 3u);
  double input = 4.0 * 8 * 8 * 16, weights = 3.0 * 3 * 16 * 32 + 32, conv_out = 4.0 * 8 * 8 * 32;
  std::vector<double> elements;
  for (const Op* op : c) {
    elements.push_back(op->in_elements);
    // A cast reads n elements at 4 bytes and writes n at 2 (or the reverse): 6 bytes each.
    EXPECT_DOUBLE_EQ(op->bytes().value(), 6.0 * op->in_elements);
  }
  std::sort(elements.begin(), elements.end());
  std::vector<double> expected{input, weights, conv_out};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(elements, expected);
  for (const auto& op : g.ops) {
    if (op.kind == OpKind::conv)
      EXPECT_EQ(op.compute_dtype, DType::fp16);
    if (op.kind == OpKind::reduction)
      EXPECT_EQ(op.compute_dtype, DType::fp32); // softmax and loss stay in fp32
  }
}

TEST(StepGraphPrecision, PureFp16ComputesEverythingInHalf) {
  OpGraph g = typed(PrecisionPolicy::fp16);
  EXPECT_EQ(casts(g).size(), 1u); // only the fp32 batch arriving
  for (const auto& op : g.ops)
    if (op.kind != OpKind::cast)
      EXPECT_EQ(op.compute_dtype, DType::fp16) << op.name;
}

// A model cast to fp16 (apex O2, Megatron's fp16): every op in fp16 like pure fp16 -- the softmax and the loss too,
// so no casts but the fp32 batch's -- reading fp16 weights, where autocast reads a 16-bit copy of fp32 ones.
TEST(StepGraphPrecision, ModelCastToFp16ComputesEverythingInHalfFromHalfWeights) {
  OpGraph g = typed(PrecisionPolicy::mixed_fp16_o2);
  EXPECT_EQ(casts(g).size(), 1u);
  for (const auto& op : g.ops)
    if (op.kind != OpKind::cast) {
      EXPECT_EQ(op.compute_dtype, DType::fp16) << op.name;
      EXPECT_EQ(op.param_dtype, DType::fp16) << op.name;
    }
  EXPECT_EQ(master_dtype(PrecisionPolicy::mixed_fp16_o2), DType::fp32); // the optimizer's
  EXPECT_EQ(gradient_dtype(PrecisionPolicy::mixed_fp16_o2), DType::fp16); // what is all-reduced
}

TEST(StepGraphPrecision, Fp32FallbackStackWrapsEachHalfOpInCasts) {
  StackProfile old = stack_preset("cuda9.0-cudnn7.0-tf1.7");
  OpGraph g = typed(PrecisionPolicy::fp16, old);
  for (const auto& op : g.ops)
    if (op.kind != OpKind::cast)
      EXPECT_EQ(op.compute_dtype, DType::fp32) << op.name;
  // input cast + (to_fp32, from_fp32) around each of conv, softmax, loss.
  EXPECT_EQ(casts(g).size(), 1u + 2u * 3u);
}

// Case 4, old stack: fp16 is slower than fp32 on the device, and the casts are why:
// without them fp16 would not be slower (the fp32-fallback kernels do the same work as fp32).
TEST(StepGraphPrecision, Case4OldStackFp16SlowerBecauseOfCasts) {
  DeviceTime fp32 = device_time(plan_case4("fp32", "cuda9.0-cudnn7.0-tf1.7"));
  StepPlan fp16_plan = plan_case4("fp16", "cuda9.0-cudnn7.0-tf1.7");
  DeviceTime fp16 = device_time(fp16_plan);
  EXPECT_EQ(fp32.casts, 0.0);
  EXPECT_GT(fp16.total, 1.2 * fp32.total);
  EXPECT_LE(fp16.total - fp16.casts, fp32.total * 1.0001);
  for (const auto& op : fp16_plan.ops)
    if (op.kind == "conv")
      EXPECT_EQ(op.path, "CUDA core") << op.name;
}

// Case 4, new stack: fp16 convolutions with channels that are multiples of 8 take the tensor
// cores, and fp16 is not slower than fp32.
TEST(StepGraphPrecision, Case4NewStackFp16TakesTensorCoresAndIsNotSlower) {
  DeviceTime fp32 = device_time(plan_case4("fp32", "cuda10.0-cudnn7.4.1-tf1.13.1"));
  StepPlan fp16_plan = plan_case4("fp16", "cuda10.0-cudnn7.4.1-tf1.13.1");
  DeviceTime fp16 = device_time(fp16_plan);
  EXPECT_LE(fp16.total, fp32.total);
  int tensor_core_convs = 0;
  for (const auto& op : fp16_plan.ops)
    if (op.kind == "conv" && op.phase == "forward") {
      bool aligned_channels = op.layer != "conv1"; // conv1 reads 3 channels
      EXPECT_EQ(op.path, aligned_channels ? "tensor core" : "CUDA core") << op.name;
      tensor_core_convs += op.path == "tensor core";
    }
  EXPECT_EQ(tensor_core_convs, 3);
}
