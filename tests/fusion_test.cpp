// Kernel fusion per stack, against closed forms: a fused chain reads its
// external inputs once and writes only what something outside it reads, so
// bytes = sum of members' bytes - 2 x the tensors passed inside (each saves a
// write and a read); one launch for the group.
#include "sim/pipeline/step_graph/fusion.hpp"

#include <gtest/gtest.h>

using namespace mlsim;

namespace {
Op op(const std::string& name, OpKind kind, double in, double out, double params = 0) {
  Op o;
  o.name = name;
  o.layer = name;
  o.kind = kind;
  o.in_elements = in;
  o.out_elements = out;
  o.param_elements = params;
  o.flops = Flops(in);
  if (is_matrix_kind(kind))
    o.dims = {{"m", 64}, {"n", 64}, {"k", 64}};
  return o;
}

// conv (reads 100, 10 weights, writes 50) -> relu -> dropout, all fp32, forward only.
TrainingGraph chain() {
  TrainingGraph t;
  auto& g = t.graph;
  size_t c = g.add(op("conv", OpKind::conv, 100, 50, 10));
  size_t r = g.add(op("relu", OpKind::elementwise, 50, 50));
  size_t d = g.add(op("dropout", OpKind::elementwise, 50, 50));
  g.connect(c, r);
  g.connect(r, d);
  t.backward_begin = t.optimizer_begin = g.ops.size();
  return t;
}
double bytes(const Op& o) { return o.bytes().value(); }
} // namespace

TEST(Fusion, XlaFusesAConvWithItsElementwiseConsumers) {
  TrainingGraph f = fuse_ops(chain(), FusionPolicy::xla);
  ASSERT_EQ(f.graph.ops.size(), 1u);
  const Op& o = f.graph.ops[0];
  EXPECT_EQ(o.name, "fusion.0");
  EXPECT_EQ(o.fusion, "output fusion");
  EXPECT_EQ(o.kind, OpKind::conv); // keeps its conv's dims, path and padding
  EXPECT_EQ(o.fused, (std::vector<std::string>{"conv", "relu", "dropout"}));
  // Members: conv (100 + 10 + 50) + relu (50 + 50) + dropout (50 + 50) = 360 elements; two tensors of 50
  // passed inside, each a write and a read saved: 360 - 200 = 160 elements of 4 bytes.
  EXPECT_DOUBLE_EQ(bytes(o), 160 * 4.0);
  EXPECT_DOUBLE_EQ(o.flops.value(), 200.0);
  EXPECT_TRUE(f.graph.edges.empty());
}

TEST(Fusion, ATensorSavedForBackwardIsStillWritten) {
  TrainingGraph t = chain();
  t.backward_begin = t.graph.ops.size();
  Op grad = op("relu/grad", OpKind::elementwise, 100, 50);
  grad.phase = Phase::backward;
  size_t b = t.graph.add(grad);
  t.graph.connect(1, b); // relu's output is saved for its gradient
  t.optimizer_begin = t.graph.ops.size();
  TrainingGraph f = fuse_ops(t, FusionPolicy::xla);
  ASSERT_EQ(f.graph.ops.size(), 2u);
  EXPECT_DOUBLE_EQ(bytes(f.graph.ops[0]), (160 + 50) * 4.0); // relu's 50 written once more
  EXPECT_EQ(f.backward_begin, 1u);
  ASSERT_EQ(f.graph.edges.size(), 1u);
  EXPECT_EQ(f.graph.edges[0].from, 0u);
  EXPECT_EQ(f.graph.edges[0].to, 1u);
}

TEST(Fusion, XlaOnAGpuLeavesTheConvToCudnnAndFusesTheRest) {
  TrainingGraph f = fuse_ops(chain(), FusionPolicy::xla_gpu);
  ASSERT_EQ(f.graph.ops.size(), 2u);
  EXPECT_EQ(f.graph.ops[0].name, "conv"); // a cuDNN call of its own
  EXPECT_TRUE(f.graph.ops[0].fusion.empty());
  const Op& l = f.graph.ops[1];
  EXPECT_EQ(l.name, "fusion.0");
  EXPECT_EQ(l.fusion, "loop fusion");
  // relu (50 + 50) + dropout (50 + 50) - 2 x the 50 passed inside = 100 elements of 4 bytes.
  EXPECT_DOUBLE_EQ(bytes(l), 100 * 4.0);
}

TEST(Fusion, TorchCompileFusesPointwiseChainsButNotIntoTheConv) {
  TrainingGraph f = fuse_ops(chain(), FusionPolicy::torch_compile);
  ASSERT_EQ(f.graph.ops.size(), 2u);
  EXPECT_EQ(f.graph.ops[0].name, "conv");
  EXPECT_TRUE(f.graph.ops[0].fusion.empty());
  const Op& p = f.graph.ops[1];
  EXPECT_EQ(p.fusion, "pointwise");
  EXPECT_EQ(p.name.rfind("triton_poi_fused_", 0), 0u);
  EXPECT_DOUBLE_EQ(bytes(p), (50 + 50) * 4.0); // reads relu's input, writes dropout's output
}

TEST(Fusion, EagerFusesNothing) {
  TrainingGraph f = fuse_ops(chain(), FusionPolicy::none);
  EXPECT_EQ(f.graph.ops.size(), 3u);
  for (const Op& o : f.graph.ops)
    EXPECT_FALSE(o.compiled) << o.name; // library calls, each (cuDNN's batch norm included)
}

// What the compiler emits is compiled (a batch norm there is XLA's or Inductor's reduction, not cuDNN's);
// the conv a GPU stack leaves to cuDNN is not; on a TPU everything is.
TEST(Fusion, TheCompilerMarksTheKernelsItEmits) {
  TrainingGraph bn;
  bn.graph.add(op("conv", OpKind::conv, 100, 50, 10));
  bn.graph.add(op("bn", OpKind::reduction, 50, 50));
  bn.graph.connect(0, 1);
  bn.backward_begin = bn.optimizer_begin = bn.graph.ops.size();
  for (FusionPolicy p : {FusionPolicy::xla_gpu, FusionPolicy::torch_compile}) {
    TrainingGraph f = fuse_ops(bn, p);
    ASSERT_EQ(f.graph.ops.size(), 2u);
    EXPECT_FALSE(f.graph.ops[0].compiled);
    EXPECT_TRUE(f.graph.ops[1].compiled); // alone, not fused: still the compiler's kernel
    EXPECT_TRUE(f.graph.ops[1].fusion.empty());
  }
  for (const Op& o : fuse_ops(chain(), FusionPolicy::xla).graph.ops)
    EXPECT_TRUE(o.compiled) << o.name;
}

TEST(Fusion, AReductionEndsItsGroup) {
  TrainingGraph t;
  auto& g = t.graph;
  size_t a = g.add(op("scale", OpKind::elementwise, 50, 50));
  size_t s = g.add(op("sum", OpKind::reduction, 50, 1));
  size_t r = g.add(op("after", OpKind::elementwise, 1, 1));
  g.connect(a, s);
  g.connect(s, r);
  t.backward_begin = t.optimizer_begin = g.ops.size();
  TrainingGraph x = fuse_ops(t, FusionPolicy::xla);
  ASSERT_EQ(x.graph.ops.size(), 2u);
  EXPECT_EQ(x.graph.ops[0].fusion, "input fusion");
  TrainingGraph c = fuse_ops(t, FusionPolicy::torch_compile);
  ASSERT_EQ(c.graph.ops.size(), 2u);
  EXPECT_EQ(c.graph.ops[0].name.rfind("triton_red_fused_", 0), 0u);
}

TEST(Fusion, AnOpWhoseOtherInputComesLaterDoesNotJoin) {
  // a -> x, and b (after a in stream order) -> x as well: x cannot run at a's place.
  TrainingGraph t;
  auto& g = t.graph;
  size_t a = g.add(op("a", OpKind::elementwise, 10, 10));
  size_t b = g.add(op("b", OpKind::elementwise, 10, 10));
  size_t x = g.add(op("x", OpKind::elementwise, 20, 10));
  g.connect(a, x);
  g.connect(b, x);
  t.backward_begin = t.optimizer_begin = g.ops.size();
  TrainingGraph f = fuse_ops(t, FusionPolicy::xla);
  // x joins b's group (a's index is before b), never a's.
  ASSERT_EQ(f.graph.ops.size(), 2u);
  EXPECT_EQ(f.graph.ops[1].fused, (std::vector<std::string>{"b", "x"}));
}
