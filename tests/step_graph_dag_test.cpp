// The step DAG: topological order, critical path, and the backward rules on tiny graphs.
#include "sim/core/base/errors.hpp"
#include "sim/pipeline/step_graph/backward_rules.hpp"
#include "sim/pipeline/step_graph/forward_graph.hpp"
#include "sim/pipeline/step_graph/op_graph.hpp"
#include "sim/pipeline/step_graph/precision_policy.hpp"

#include <gtest/gtest.h>

using namespace mlsim;

namespace {
OpGraph diamond() {
  OpGraph g;
  for (const char* n : {"a", "b", "c", "d"}) {
    Op op;
    op.name = n;
    g.add(op);
  }
  g.connect(0, 1);
  g.connect(0, 2);
  g.connect(1, 3);
  g.connect(2, 3);
  return g;
}
LayerSpec dense(const std::string& name, long units) {
  LayerSpec l;
  l.type = "dense";
  l.name = name;
  l.units = units;
  return l;
}
} // namespace

TEST(StepGraphDag, CriticalPathOfADiamondIsItsLongerBranch) {
  OpGraph g = diamond();
  // a=1, b=2, c=5, d=1: a->c->d = 7 beats a->b->d = 4.
  CriticalPath cp = critical_path(g, {Seconds(1.0), Seconds(2.0), Seconds(5.0), Seconds(1.0)});
  EXPECT_DOUBLE_EQ(cp.length.value(), 7.0);
  EXPECT_EQ(cp.ops, (std::vector<size_t>{0, 2, 3}));
}

TEST(StepGraphDag, TopologicalOrderRespectsEveryEdgeAndCyclesAreRejected) {
  OpGraph g = diamond();
  auto order = topological_order(g);
  std::vector<size_t> position(order.size());
  for (size_t i = 0; i < order.size(); ++i)
    position[order[i]] = i;
  for (const auto& e : g.edges)
    EXPECT_LT(position[e.from], position[e.to]);
  g.connect(3, 0);
  EXPECT_THROW(topological_order(g), InternalError);
}

TEST(StepGraphDag, BackwardIsTwiceForwardExceptTheFirstLayersInputGradient) {
  // input [100] -> dense 200 -> dense 10, batch 8.
  ForwardGraph fg = build_forward_graph({dense("l1", 200), dense("l2", 10)}, {100}, 8);
  OpGraph typed = apply_precision(fg.graph, PrecisionPolicy::fp32, StackProfile{}, DType::fp32);
  TrainingGraph t = add_backward_and_optimizer(typed, Optimizer::sgd, DType::fp32);
  double fwd1 = 2.0 * 8 * 100 * 200, fwd2 = 2.0 * 8 * 200 * 10;
  double backward = 0.0;
  int optimizer_ops = 0;
  for (size_t i = t.backward_begin; i < t.graph.ops.size(); ++i) {
    if (t.graph.ops[i].phase == Phase::backward)
      backward += t.graph.ops[i].flops.value();
    optimizer_ops += t.graph.ops[i].phase == Phase::optimizer;
  }
  // l2: dgrad + wgrad; l1: wgrad only (nothing upstream needs a gradient).
  EXPECT_DOUBLE_EQ(backward, 2.0 * fwd2 + fwd1);
  EXPECT_EQ(optimizer_ops, 2);
  // Gradients complete in reverse layer order: l2's before l1's.
  ASSERT_EQ(t.gradients.size(), 2u);
  EXPECT_EQ(t.graph.ops[t.gradients[0].op].layer, "l2");
  EXPECT_EQ(t.graph.ops[t.gradients[1].op].layer, "l1");
  EXPECT_DOUBLE_EQ(t.gradients[0].parameters, 200.0 * 10 + 10);
  topological_order(t.graph); // still a DAG
}

namespace {
LayerSpec layer(const std::string& type, const std::string& name, std::vector<std::string> inputs = {}) {
  LayerSpec l = make_layer(type, name, std::move(inputs));
  l.activation = type == "activation" ? "relu" : "";
  return l;
}
TrainingGraph residual_block() {
  // dense -> relu "a" -> relu "b" -> add(a, b): a's output is read by b and by the add (a fork), as a ResNet
  // block's input is read by its branch and its shortcut.
  ForwardGraph fg = build_forward_graph({dense("p", 64), layer("activation", "a"), layer("activation", "b"),
                                         layer("add", "s", {"a", "b"}), dense("out", 4)},
                                        {64}, 2);
  OpGraph typed = apply_precision(fg.graph, PrecisionPolicy::fp32, StackProfile{}, DType::fp32);
  return add_backward_and_optimizer(typed, Optimizer::sgd, DType::fp32);
}
const Op* find(const TrainingGraph& t, const std::string& name) {
  for (const auto& op : t.graph.ops)
    if (op.name == name)
      return &op;
  return nullptr;
}
} // namespace

// PyTorch autograd: an add's backward hands the output gradient to each input unchanged (no kernel); where one
// output is read by two ops their two gradients are summed once (one add: reads 2 tensors, writes 1).
TEST(StepGraphDag, AnAddPassesItsGradientThroughAndAForkSumsItsGradientsOnce) {
  TrainingGraph t = residual_block();
  for (const auto& op : t.graph.ops)
    EXPECT_EQ(op.name.find("s/add/"), std::string::npos) << op.name << ": the add's backward launches nothing";
  const Op* sum = find(t, "a/relu/grad_sum");
  ASSERT_NE(sum, nullptr);
  EXPECT_DOUBLE_EQ(sum->in_elements, 2.0 * 64 * 2);
  EXPECT_DOUBLE_EQ(sum->out_elements, 64.0 * 2);
  EXPECT_EQ(find(t, "b/relu/grad_sum"), nullptr); // b's output has one reader
  // The relu's gradient waits for the sum, and the sum for both branches' gradients.
  size_t sum_index = static_cast<size_t>(sum - t.graph.ops.data());
  EXPECT_EQ(t.graph.producers(sum_index).size(), 2u);
}

// A batch norm's backward (PyTorch's batch_norm_backward_reduce, then batch_norm_backward_elemt; cuDNN's is
// alike): the reduction reads the input and the output gradient, the elementwise pass reads both again and
// writes the input gradient -- 5 tensor passes, as the forward's 3 (statistics read, normalise read + write).
TEST(StepGraphDag, BatchNormBackwardMakesFiveTensorPasses) {
  LayerSpec conv = layer("conv2d", "c");
  conv.filters = 16;
  ForwardGraph fg = build_forward_graph({conv, layer("batch_norm", "bn")}, {8, 8, 16}, 4);
  OpGraph typed = apply_precision(fg.graph, PrecisionPolicy::fp32, StackProfile{}, DType::fp32);
  TrainingGraph t = add_backward_and_optimizer(typed, Optimizer::sgd, DType::fp32);
  const Op* fwd = find(t, "bn/batch_norm");
  const Op* bwd = find(t, "bn/batch_norm/grad");
  ASSERT_NE(fwd, nullptr);
  ASSERT_NE(bwd, nullptr);
  const double tensor = 8.0 * 8 * 16 * 4;
  EXPECT_DOUBLE_EQ(fwd->in_elements + fwd->out_elements, 3 * tensor);
  EXPECT_DOUBLE_EQ(bwd->in_elements, 4 * tensor);
  EXPECT_DOUBLE_EQ(bwd->out_elements, tensor);
}
