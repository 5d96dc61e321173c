// The `multiply` layer (a per-channel gate scaling every position, squeeze-and-excitation) and grouped convs written
// in a scenario's layer list. Expectations from the ops' closed forms (elements read and written) and from
// autograd's rules (an output read by two ops gets one gradient sum), never from the model's own output.
#include "sim/core/base/errors.hpp"
#include "sim/pipeline/step_graph/backward_rules.hpp"
#include "sim/pipeline/step_graph/forward_graph.hpp"
#include "sim/pipeline/step_graph/layer_builders.hpp"
#include "sim/pipeline/step_graph/model_presets.hpp"
#include "sim/pipeline/step_graph/precision_policy.hpp"

#include "test_support.hpp"

#include <gtest/gtest.h>

using namespace mlsim;

// A 7x7x2048 activation gated by 2048 per-channel scales: one kernel reads the activation and the scales and writes
// the activation's size; scales of another length are an input error naming the layer.
TEST(SqueezeExcitation, AMultiplyByPerChannelScalesReadsBothAndWritesTheActivation) {
  LayerSpec l = make_layer("multiply", "gate");
  const long batch = 4;
  LayerOutput out = build_layer(l, {{7, 7, 2048}, {2048}}, batch);
  EXPECT_EQ(out.shape, (Shape{7, 7, 2048}));
  ASSERT_EQ(out.ops.size(), 1u);
  EXPECT_DOUBLE_EQ(out.ops[0].in_elements, batch * (7.0 * 7 * 2048 + 2048));
  EXPECT_DOUBLE_EQ(out.ops[0].out_elements, batch * 7.0 * 7 * 2048);
  EXPECT_THROW(build_layer(l, {{7, 7, 2048}, {1024}}, batch), InputError);
  EXPECT_THROW(build_layer(l, {{7, 7, 2048}, {7, 7, 1024}}, batch), InputError);
}

// In SE-ResNeXt each block's conv3 batch norm output is read twice, by the channel mean and by the gate: autograd
// sums its two gradients in one add (2 reads, 1 write of the activation). ResNeXt without the gate has no such sum.
TEST(SqueezeExcitation, TheGatedActivationsTwoGradientsAreSummedOnce) {
  auto training = [](const std::string& preset) {
    ModelPreset p = model_preset(preset, {});
    ForwardGraph g = build_forward_graph(p.layers, p.input, 2);
    OpGraph typed = apply_precision(g.graph, PrecisionPolicy::fp32, StackProfile{}, DType::fp32);
    return add_backward_and_optimizer(typed, Optimizer::sgd, DType::fp32);
  };
  auto find = [](const TrainingGraph& t, const std::string& name) -> const Op* {
    for (const auto& op : t.graph.ops)
      if (op.name == name)
        return &op;
    return nullptr;
  };
  TrainingGraph se = training("se_resnext101_32x4d");
  const Op* sum = find(se, "layer4.2_conv3_bn/batch_norm/grad_sum");
  ASSERT_NE(sum, nullptr);
  EXPECT_DOUBLE_EQ(sum->in_elements, 2.0 * 2 * 7 * 7 * 2048);
  EXPECT_DOUBLE_EQ(sum->out_elements, 2.0 * 7 * 7 * 2048);
  EXPECT_EQ(find(training("resnext101_32x4d"), "layer4.2_conv3_bn/batch_norm/grad_sum"), nullptr);
}

// A scenario's layer list takes `groups` on a conv2d and a `multiply` layer.
TEST(SqueezeExcitation, LayerListsTakeGroupsAndMultiply) {
  StepPlan p = fixtures::plan_model("{input: [14, 14, 64], precision: mixed_fp16, layers: ["
                                    "{type: conv2d, name: g, filters: 64, kernel: 3, groups: 8},"
                                    "{type: global_avg_pool, name: m},"
                                    "{type: dense, name: e, units: 64, activation: sigmoid},"
                                    "{type: multiply, name: s, inputs: [g, e]},"
                                    "{type: global_avg_pool}, {type: dense, units: 10}, {type: loss}]}",
                                    "a100-sxm4-40gb", 8);
  bool grouped = false, gated = false;
  for (const auto& op : p.ops) {
    grouped = grouped || (op.name == "g/conv" && op.flops.value() == 2.0 * 8 * 14 * 14 * 64 * 8 * 9);
    gated = gated || op.name == "s/multiply";
  }
  EXPECT_TRUE(grouped);
  EXPECT_TRUE(gated);
  EXPECT_THROW(fixtures::plan_model("{input: [14, 14, 64], layers: [{type: conv2d, filters: 64, kernel: 3, groups: 0},"
                                    "{type: loss}]}",
                                    "a100-sxm4-40gb", 8),
               InputError);
}
