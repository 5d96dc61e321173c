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
