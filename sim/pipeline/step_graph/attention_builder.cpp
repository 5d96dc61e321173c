// Multi-head self-attention on [S, D] with H heads (head width d = D/H), as an
// eager framework runs it (Hugging Face's and NVIDIA's BERT and GPT-2 modules):
// QKV projection, scores Q K^T (B*H batched S x S x d), the scaling by
// 1/sqrt(d), the mask (BERT's additive padding mask, GPT-2's causal
// torch.where), softmax in fp32 under mixed precision, dropout on the
// probabilities, context P V, output projection. Each step between the two
// batched GEMMs is its own kernel over the B*H*S*S scores: at sequence 512 they
// move more bytes than the GEMMs do. A compiling stack fuses that chain (fusion
// pass). The scores and context GEMMs are counted in full (no causal halving),
// as dense kernels run them.
//
// `implementation: fused` (FlashAttention, PyTorch's scaled_dot_product_attention): one
// kernel from Q, K, V to the context, the scores kept on chip (Dao et al. 2022,
// 2023): FLOPs 4 B S^2 D forward (both GEMMs), half of that under a causal mask
// (blocks above the diagonal skipped), bytes Q, K, V and the output (plus a
// row statistic per head: B H S); its backward recomputes the scores, 2.5x the
// forward's FLOPs (backward_rules.cpp). Its rate is the fraction of the matrix
// peak published for such kernels on the GPU (kernels.attention_fraction) where
// the preset has one, else the GEMM model's. Ignores: the tiles' waves and the short-sequence launch-bound regime of
// the fused kernel; K and V re-read per query block (from L2 at these sizes).
#include "sim/core/base/errors.hpp"
#include "sim/pipeline/step_graph/layer_builders.hpp"

namespace mlsim {

namespace {

struct AttentionShape {
  long batch, s, heads, head, d_model;
  double b, S, D;
};

// Scores, scale, mask, softmax, dropout, context: one kernel each, as eager frameworks run them.
void eager_scores(LayerOutput& out, const LayerSpec& l, const AttentionShape& a) {
  auto make = [&](const std::string& suffix, OpKind kind, PrecisionClass pc) { return base_op(l, suffix, kind, pc); };
  Op scores = make("scores", OpKind::matmul, PrecisionClass::matrix);
  scores.dims = {{"batch", a.batch}, {"m", a.s}, {"n", a.s}, {"k", a.head}};
  scores.flops = Flops(2.0 * a.b * a.S * a.S * a.D);
  scores.in_elements = 2.0 * a.b * a.S * a.D;
  scores.out_elements = a.b * static_cast<double>(a.heads) * a.S * a.S;
  out.ops.push_back(scores);

  // One elementwise kernel over the scores: reads them, writes them.
  auto over_scores = [&](const std::string& suffix, double flops_per_element) {
    Op op = make(suffix, OpKind::elementwise, PrecisionClass::follow_input);
    op.in_elements = op.out_elements = scores.out_elements;
    op.flops = Flops(flops_per_element * scores.out_elements);
    return op;
  };
  out.ops.push_back(over_scores("scale", 1.0));
  if (l.mask == "padding") { // scores + mask[B,1,1,S]: the gradient passes to the scores unchanged
    out.ops.push_back(over_scores("mask", 1.0));
    out.ops.back().gradient_passes_through = true;
  } else if (l.mask == "causal") { // torch.where(causal, scores, -inf): its gradient is a where of its own
    out.ops.push_back(over_scores("causal_mask", 1.0));
  }

  Op softmax = make("softmax", OpKind::reduction, PrecisionClass::needs_fp32);
  softmax.in_elements = 2.0 * scores.out_elements; // max pass + normalising pass
  softmax.out_elements = scores.out_elements;
  softmax.flops = Flops(5.0 * scores.out_elements);
  out.ops.push_back(softmax);
  if (l.rate > 0.0)
    out.ops.push_back(over_scores("probs_dropout", 2.0));

  Op context = make("context", OpKind::matmul, PrecisionClass::matrix);
  context.dims = {{"batch", a.batch}, {"m", a.s}, {"n", a.head}, {"k", a.s}};
  context.flops = Flops(2.0 * a.b * a.S * a.S * a.D);
  context.in_elements = scores.out_elements + a.b * a.S * a.D;
  context.out_elements = a.b * a.S * a.D;
  out.ops.push_back(context);
}

// One kernel from Q, K, V to the context; the scores never leave the chip.
void fused_scores(LayerOutput& out, const LayerSpec& l, const AttentionShape& a) {
  const double causal = l.mask == "causal" ? 0.5 : 1.0; // the blocks above the diagonal are skipped
  Op fused = base_op(l, "fused_attention", OpKind::matmul, PrecisionClass::matrix);
  fused.fused_attention = true;
  fused.dims = {{"batch", a.batch * a.heads}, {"m", a.s}, {"n", a.s}, {"k", a.head}};
  fused.flops = Flops(causal * 4.0 * a.b * a.S * a.S * a.D);
  fused.in_elements = 3.0 * a.b * a.S * a.D; // Q, K, V
  fused.out_elements = a.b * a.S * a.D + a.b * static_cast<double>(a.heads) * a.S; // context, a log-sum-exp a row
  out.ops.push_back(fused);
}

} // namespace

LayerOutput build_attention(const LayerSpec& l, const Shape& in, long batch) {
  if (in.size() != 2)
    throw InputError("", "model.layers '" + l.name + "' (attention)", "a sequence input [length, width]",
                     "input shape " + to_string(in));
  long s = in[0], d_model = in[1];
  if (d_model % l.heads != 0)
    throw InputError("", "model.layers '" + l.name + "'.heads", "a head count that divides the width " +
                     std::to_string(d_model), std::to_string(l.heads));
  const AttentionShape a{batch, s, l.heads, d_model / l.heads, d_model, static_cast<double>(batch),
                         static_cast<double>(s), static_cast<double>(d_model)};
  const double b = a.b, S = a.S, D = a.D;
  LayerOutput out;
  out.shape = in;

  Op qkv = base_op(l, "qkv", OpKind::matmul, PrecisionClass::matrix);
  qkv.dims = {{"batch", batch}, {"m", batch * s}, {"n", 3 * d_model}, {"k", d_model}};
  qkv.flops = Flops(2.0 * b * S * D * 3.0 * D);
  qkv.in_elements = b * S * D;
  qkv.out_elements = 3.0 * b * S * D;
  qkv.owned_parameters = 3.0 * D * D + 3.0 * D;
  qkv.owned_tensors = 2; // in_proj_weight, in_proj_bias
  qkv.param_elements = qkv.owned_parameters;
  out.ops.push_back(qkv);

  if (l.fused_kernel)
    fused_scores(out, l, a);
  else
    eager_scores(out, l, a);

  Op proj = base_op(l, "out_proj", OpKind::matmul, PrecisionClass::matrix);
  proj.dims = {{"batch", batch}, {"m", batch * s}, {"n", d_model}, {"k", d_model}};
  proj.flops = Flops(2.0 * b * S * D * D);
  proj.in_elements = b * S * D;
  proj.out_elements = b * S * D;
  proj.owned_parameters = D * D + D;
  proj.owned_tensors = 2;
  proj.param_elements = proj.owned_parameters;
  out.ops.push_back(proj);
  return out;
}

} // namespace mlsim
