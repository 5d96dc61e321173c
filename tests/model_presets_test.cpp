// Each model preset's forward FLOPs and parameter count against published figures.
// MACs = matmul/conv FLOPs / 2 (the convention of the published "GFLOPs" tables,
// which count a multiply-add once).
#include "sim/pipeline/step_graph/forward_graph.hpp"
#include "sim/pipeline/step_graph/model_presets.hpp"

#include <gtest/gtest.h>

#include <map>

using namespace mlsim;

namespace {
struct Counted {
  double macs = 0.0;
  double params = 0.0;
};
Counted count(const std::string& preset, PresetOptions o = {}) {
  ModelPreset p = model_preset(preset, o);
  ForwardGraph g = build_forward_graph(p.layers, p.input, 1);
  Counted c;
  for (const auto& op : g.graph.ops)
    if (is_matrix_kind(op.kind))
      c.macs += op.flops.value() / 2.0;
  c.params = g.parameters;
  return c;
}
} // namespace

// torchvision model docs (pytorch.org/vision/stable/models.html): resnet50 IMAGENET1K_V1
// "GFLOPS 4.09" (multiply-adds, 224x224), 25,557,032 parameters. He et al. 2016 Table 1 gives
// 3.8e9 for the original stride-in-1x1 variant; torchvision (and this preset) stride the 3x3.
TEST(ModelPresets, ResNet50) {
  Counted c = count("resnet50");
  EXPECT_NEAR(c.macs, 4.09e9, 0.02 * 4.09e9);
  EXPECT_DOUBLE_EQ(c.params, 25557032.0);
}

// torchvision: resnet18 "GFLOPS 1.81", 11,689,512 parameters; He et al. 2016: 1.8e9.
TEST(ModelPresets, ResNet18) {
  Counted c = count("resnet18");
  EXPECT_NEAR(c.macs, 1.81e9, 0.02 * 1.81e9);
  EXPECT_DOUBLE_EQ(c.params, 11689512.0);
}

// torchvision: vgg16 "GFLOPS 15.47", 138,357,544 parameters (Simonyan & Zisserman config D: 138M).
TEST(ModelPresets, Vgg16) {
  Counted c = count("vgg16");
  EXPECT_NEAR(c.macs, 15.47e9, 0.02 * 15.47e9);
  EXPECT_DOUBLE_EQ(c.params, 138357544.0);
}

// Devlin et al. 2019: BERT-base 110M parameters. Forward FLOPs per token ~ 2 x (weights used in
// matmuls) + attention (QK^T and PV: 2 x 2 x L x S x d); the MLM decoder reuses the word table.
TEST(ModelPresets, BertBase) {
  const double L = 12, S = 128, d = 768, vocab = 30522;
  PresetOptions o;
  o.sequence = 128;
  Counted c = count("bert_base", o);
  EXPECT_NEAR(c.params, 110e6, 0.01 * 110e6);
  double embedding_tables = (vocab + 512 + 2) * d;
  double per_token = 2.0 * (110e6 - embedding_tables) + 2.0 * vocab * d + 4.0 * L * S * d;
  EXPECT_NEAR(2.0 * c.macs / S, per_token, 0.02 * per_token);
}

// Hugging Face gpt2 (the 124M checkpoint): 124,439,808 parameters, LM head tied to the token
// table. FLOPs per token ~ 2 x params + attention 2 x 2 x L x n_ctx x d (Kaplan et al. 2020, Table 1,
// with both S x S products counted at full context).
TEST(ModelPresets, Gpt2Small) {
  const double L = 12, S = 1024, d = 768;
  Counted c = count("gpt2_small");
  EXPECT_DOUBLE_EQ(c.params, 124439808.0);
  double per_token = 2.0 * 124439808.0 + 4.0 * L * S * d;
  EXPECT_NEAR(2.0 * c.macs / S, per_token, 0.01 * per_token);
}

// The larger GPT-2 checkpoints (Radford et al. 2019 Table 2; Hugging Face gpt2-medium / -large / -xl):
// 354,823,168 / 774,030,080 / 1,557,611,200 parameters = V d + 1024 d + L (12 d^2 + 13 d) + 2 d with the LM
// head tied (V = 50257).
TEST(ModelPresets, Gpt2LargerSizesHaveThePublishedParameterCounts) {
  EXPECT_DOUBLE_EQ(count("gpt2_medium").params, 354823168.0);
  EXPECT_DOUBLE_EQ(count("gpt2_large").params, 774030080.0);
  EXPECT_DOUBLE_EQ(count("gpt2_xl").params, 1557611200.0);
}

// BERT-large (Devlin et al. 2019: L=24, H=1024, A=16, "340M"): embeddings (V + 512 + 2) d + 2 d, per layer
// 4 (d^2 + d) + 2 x 4 d^2 + 4 d + d + 2 x 2 d, the MLM transform d^2 + d + 2 d and the decoder's bias V (its
// weight is the word table). The paper's 340M rounds this plus the pooler and next-sentence head.
TEST(ModelPresets, BertLargeByTheArchitecturesFormula) {
  const double V = 30522, d = 1024, L = 24;
  double params = (V + 512 + 2) * d + 2 * d + L * (4 * (d * d + d) + 8 * d * d + 4 * d + d + 4 * d) +
                  (d * d + d + 2 * d) + V;
  Counted c = count("bert_large");
  EXPECT_DOUBLE_EQ(c.params, params);
  EXPECT_NEAR(c.params + (d * d + d) + (2 * d + 2), 340e6, 0.02 * 340e6);
}

// Overriding a size: a vocabulary padded to a multiple of 8 adds (padded - V) rows to the tied table and as
// many decoder biases; six more layers add six layers' weights.
TEST(ModelPresets, TransformerSizesCanBeOverridden) {
  PresetOptions o;
  o.vocab = 30528;
  EXPECT_DOUBLE_EQ(count("bert_large", o).params - count("bert_large").params, 6.0 * 1024 + 6.0);
  PresetOptions deeper;
  deeper.layers = 18;
  const double d = 768;
  EXPECT_DOUBLE_EQ(count("gpt2_small", deeper).params - count("gpt2_small").params, 6 * (12 * d * d + 13 * d));
}

namespace {
// The forward ops of one attention layer, by their suffix after "<layer>/".
std::map<std::string, Op> attention_ops(const std::string& preset, const std::string& layer, long batch) {
  PresetOptions o;
  o.sequence = 512;
  ModelPreset p = model_preset(preset, o);
  ForwardGraph g = build_forward_graph(p.layers, p.input, batch);
  std::map<std::string, Op> ops;
  for (const auto& op : g.graph.ops)
    if (op.layer == layer)
      ops[op.name.substr(layer.size() + 1)] = op;
  return ops;
}
} // namespace

// Between the two batched GEMMs an eager framework runs one kernel per step over the B x H x S x S scores
// (Hugging Face's and NVIDIA's BertSelfAttention / GPT2Attention): scale by 1/sqrt(d), the mask (BERT's
// additive padding mask; GPT-2's causal torch.where), softmax, dropout on the probabilities (p = 0.1 in
// both recipes). Each reads and writes B H S^2 elements; the additive mask's gradient is the scores' own.
TEST(ModelPresets, AttentionRunsItsScoresChainKernelByKernel) {
  const double B = 2, S = 512;
  auto bert = attention_ops("bert_large", "layer0_attention", 2);
  const double scores = B * 16 * S * S;
  for (const char* k : {"scale", "mask", "softmax", "probs_dropout"}) {
    ASSERT_TRUE(bert.count(k)) << k;
    EXPECT_DOUBLE_EQ(bert[k].out_elements, scores) << k;
  }
  EXPECT_DOUBLE_EQ(bert["scale"].in_elements, scores);
  EXPECT_TRUE(bert["mask"].gradient_passes_through);
  EXPECT_FALSE(bert.count("causal_mask"));
  auto gpt = attention_ops("gpt2_small", "h0_attention", 2);
  ASSERT_TRUE(gpt.count("causal_mask"));
  EXPECT_FALSE(gpt["causal_mask"].gradient_passes_through);
  EXPECT_DOUBLE_EQ(gpt["probs_dropout"].out_elements, B * 12 * S * S);
  EXPECT_FALSE(gpt.count("mask"));
}

// SEED-CASES.md case 4, by hand from the Keras layer shapes (224x336x3, "same" 3x3 convs,
// 2x2 pools): MACs = sum Ho*Wo*Cout*9*Cin + the Dense(1) on 7x10x64; Keras' model.summary()
// parameter count = sum (9*Cin + 1)*Cout + 4480 + 1 = 70,049.
TEST(ModelPresets, Case4Cnn) {
  Counted c = count("case4_cnn");
  double macs = 224.0 * 336 * 32 * 9 * 3 + 112.0 * 168 * 32 * 9 * 32 + 56.0 * 84 * 64 * 9 * 32 +
                28.0 * 42 * 64 * 9 * 64 + 7.0 * 10 * 64;
  EXPECT_DOUBLE_EQ(c.macs, macs);
  EXPECT_DOUBLE_EQ(c.params, 70049.0);
}

// SEED-CASES.md case 5's U-Net (depth 4, 64 base filters, 3x3 convs, 2x2 stride-2 transposed
// convs, 1x1 output conv), parameters by hand; Ronneberger et al. 2015 quote ~31M for this shape.
TEST(ModelPresets, UNetDepth4) {
  Counted c = count("unet");
  auto conv = [](double k, double cin, double cout) { return k * k * cin * cout + cout; };
  double p = 0.0, cin = 3;
  for (int level = 0; level <= 4; ++level) {
    double f = 64 << level;
    p += conv(3, cin, f) + conv(3, f, f);
    cin = f;
  }
  for (int level = 3; level >= 0; --level) {
    double f = 64 << level;
    p += conv(2, 2 * f, f) + conv(3, 2 * f, f) + conv(3, f, f); // up-conv, then convs on the concat
  }
  p += conv(1, 64, 1);
  EXPECT_DOUBLE_EQ(c.params, p);
  EXPECT_NEAR(c.params, 31e6, 0.02 * 31e6);
}

// torchvision docs: resnet101 "GFLOPS 7.8", 44,549,160 parameters; resnet152 "GFLOPS 11.51", 60,192,808;
// resnext50_32x4d "GFLOPS 4.23", 25,028,904. ResNeXt-101 32x4d is not in torchvision's table: its
// ResNet(Bottleneck, [3, 4, 23, 3], groups=32, width_per_group=4) has 44,177,704 parameters and 7.97e9
// multiply-adds at 224x224 (counted with torchvision 0.14's modules and forward hooks; Xie et al. 2017 Table 5
// gives 7.8e9 for the stride-in-1x1 original).
TEST(ModelPresets, DeeperResNetsAndResNeXtHaveTorchvisionsCounts) {
  struct Expected {
    const char* preset;
    double gmacs, params;
  };
  for (Expected e : {Expected{"resnet101", 7.80, 44549160.0}, Expected{"resnet152", 11.51, 60192808.0},
                     Expected{"resnext50_32x4d", 4.23, 25028904.0}, Expected{"resnext101_32x4d", 7.97, 44177704.0}}) {
    Counted c = count(e.preset);
    EXPECT_NEAR(c.macs, e.gmacs * 1e9, 0.02 * e.gmacs * 1e9) << e.preset;
    EXPECT_DOUBLE_EQ(c.params, e.params) << e.preset;
  }
}

// NVIDIA ConvNets' SE-ResNeXt-101 32x4d (image_classification/resnet.py, SEBottleneck, se_squeeze=16): every one of
// the 33 blocks adds Linear(C, 16) and Linear(16, C) with biases, 33 C + 16 weights, C its output channels (256,
// 512, 1024, 2048 in blocks of 3, 4, 23, 3: sum 32,512), on top of ResNeXt-101 32x4d's 44,177,704.
TEST(ModelPresets, SeResNeXtAddsItsGatesWeights) {
  const double blocks_channels = 3 * 256 + 4 * 512 + 23 * 1024 + 3 * 2048;
  EXPECT_DOUBLE_EQ(count("se_resnext101_32x4d").params, 44177704.0 + 33.0 * blocks_channels + 16.0 * 33);
}

// torchvision docs: efficientnet_b0 "GFLOPS 0.39" at 224 px, 5,288,548 parameters; efficientnet_b4 "GFLOPS 4.39" at
// 380 px, 19,341,616 parameters (multiply-adds 0.386e9 / 4.394e9 counted with torchvision 0.14's modules and forward
// hooks, the squeeze-and-excitation 1x1 convs included).
TEST(ModelPresets, EfficientNetsHaveTorchvisionsCounts) {
  Counted b0 = count("efficientnet_b0");
  EXPECT_DOUBLE_EQ(b0.params, 5288548.0);
  EXPECT_NEAR(b0.macs, 0.386e9, 0.02 * 0.386e9);
  Counted b4 = count("efficientnet_b4");
  EXPECT_DOUBLE_EQ(b4.params, 19341616.0);
  EXPECT_NEAR(b4.macs, 4.394e9, 0.02 * 4.394e9);
}
