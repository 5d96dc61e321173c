// Fused attention (`attention: fused` on a transformer preset, `implementation: fused` on an attention layer): one kernel
// from Q, K, V to the context that never writes the S x S scores (FlashAttention; PyTorch's
// scaled_dot_product_attention). Closed forms from Dao 2022/2023: forward FLOPs 4 B S^2 D (QK^T and PV), half of
// them under a causal mask; backward 2.5x the forward (the scores recomputed, five GEMMs to two).
#include "sim/core/base/errors.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

using namespace mlsim;

namespace {
StepPlan gpt2(const std::string& attention, const std::string& gpu = "a100-sxm4-80gb", long batch = 8) {
  return fixtures::plan_model("{preset: gpt2_small, attention: " + attention +
                                  ", precision: mixed_bf16, stack: pytorch-eager, optimizer: adam}",
                              gpu, batch);
}
const PlannedOp* find(const StepPlan& p, const std::string& name) {
  for (const PlannedOp& op : p.ops)
    if (op.name == name)
      return &op;
  return nullptr;
}
} // namespace

TEST(FusedAttention, OneKernelWithFlashAttentionsFlops) {
  const double B = 8, S = 1024, D = 768;
  StepPlan p = gpt2("fused");
  const PlannedOp* fwd = find(p, "h0_attention/fused_attention");
  ASSERT_NE(fwd, nullptr);
  EXPECT_DOUBLE_EQ(fwd->flops.value(), 0.5 * 4 * B * S * S * D); // causal: half the blocks
  const PlannedOp* bwd = find(p, "h0_attention/fused_attention/grad");
  ASSERT_NE(bwd, nullptr);
  EXPECT_DOUBLE_EQ(bwd->flops.value(), 2.5 * fwd->flops.value());
  for (const char* eager : {"h0_attention/scores", "h0_attention/softmax", "h0_attention/probs_dropout",
                            "h0_attention/causal_mask", "h0_attention/context"})
    EXPECT_EQ(find(p, eager), nullptr) << eager;
  // Its bytes are O(B S D): Q, K, V in, context out (bf16) and a log-sum-exp per row and head.
  EXPECT_NEAR(fwd->bytes.value(), 2.0 * (4 * B * S * D + B * 12 * S), 1e-6 * fwd->bytes.value());
}

// On an A100 the fused kernel runs at the published FlashAttention-2 fraction of the bf16 peak (0.5 x 312
// TFLOP/s, accelerators.yaml); its time is its FLOPs over that rate plus the launch.
TEST(FusedAttention, RunsAtThePublishedKernelFraction) {
  StepPlan p = gpt2("fused");
  const PlannedOp* fwd = find(p, "h0_attention/fused_attention");
  ASSERT_NE(fwd, nullptr);
  const double expected = fwd->flops.value() / (0.5 * 312e12) + 5e-6;
  EXPECT_NEAR((fwd->duration - fwd->host_wait).value(), expected, 0.01 * expected);
  EXPECT_NE(fwd->why.find("fused attention"), std::string::npos) << fwd->why;
}

// The eager chain writes and reads the B H S^2 scores several times; the fused kernel does not. At S = 1024 the
// fused step is faster, and its saved activations are smaller by at least one bf16 score tensor a layer
// (the softmax output eager attention keeps for its backward).
TEST(FusedAttention, FasterAndSmallerThanTheEagerChainAtLongSequences) {
  const double B = 8, S = 1024, H = 12, L = 12;
  StepPlan eager = gpt2("eager"), fused = gpt2("fused");
  EXPECT_LT(fixtures::device_seconds(fused), fixtures::device_seconds(eager));
  EXPECT_GT(eager.activations_bytes.value() - fused.activations_bytes.value(), L * B * H * S * S * 2.0);
}

// A layer list can ask for it too; an unknown implementation is an input error.
TEST(FusedAttention, ALayerTakesImplementationFused) {
  const std::string layers = "input: [128, 256], layers: [{type: attention, heads: 4, implementation: fused, mask: causal}]";
  StepPlan p = fixtures::plan_model("{" + layers + ", precision: mixed_bf16}", "h100-sxm", 2);
  const PlannedOp* fwd = find(p, "attention_0/fused_attention");
  ASSERT_NE(fwd, nullptr);
  EXPECT_DOUBLE_EQ(fwd->flops.value(), 0.5 * 4 * 2 * 128.0 * 128 * 256);
  EXPECT_THROW(fixtures::plan_model("{input: [128, 256], layers: [{type: attention, heads: 4, implementation: flash}]}",
                                    "h100-sxm", 2),
               InputError);
}
