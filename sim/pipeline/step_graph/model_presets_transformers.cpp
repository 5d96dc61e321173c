// BERT (post-LayerNorm encoder + masked-LM head, 512 positions, 2 segments)
// and GPT-2 (pre-LayerNorm decoder + LM head tied to the token embedding,
// 1024 positions), as layer lists, at the published sizes below or any
// layers / width / heads / vocab a scenario sets (feed-forward 4 x width, as
// both papers use).
#include "sim/pipeline/step_graph/model_presets.hpp"

#include <map>

namespace mlsim {
namespace {

LayerSpec make(const std::string& type, const std::string& name, std::vector<std::string> inputs = {}) {
  return make_layer(type, name, std::move(inputs));
}
LayerSpec dense(const std::string& name, long units, const std::string& act = "") {
  LayerSpec l = make("dense", name);
  l.units = units;
  l.activation = act;
  return l;
}
constexpr double kDropout = 0.1; // hidden and attention-probability dropout of both papers' training recipes

LayerSpec dropout(const std::string& name) {
  LayerSpec l = make("dropout", name);
  l.rate = kDropout;
  return l;
}
LayerSpec embedding(long vocab, long width, long positions, long token_types) {
  LayerSpec l = make("embedding", "embeddings");
  l.vocab = vocab;
  l.width = width;
  l.positions = positions;
  l.token_types = token_types;
  return l;
}

// A transformer's size. Published sizes (the presets below) are data; a scenario may override any of them.
struct TransformerSize {
  int layers;
  long width;
  int heads;
  long vocab;
};

// BERT: Devlin et al. 2019, Table/Section 3 (BASE L=12 H=768 A=12, LARGE L=24 H=1024 A=16), vocab 30522.
// GPT-2: Radford et al. 2019, Table 2 (117M/345M/762M/1542M: 12/24/36/48 layers, width 768/1024/1280/1600);
// heads 12/16/20/25 and vocab 50257 from the released checkpoints' configurations.
const std::map<std::string, TransformerSize>& transformer_sizes() {
  static const std::map<std::string, TransformerSize> sizes{
      {"bert_base", {12, 768, 12, 30522}},    {"bert_large", {24, 1024, 16, 30522}},
      {"gpt2_small", {12, 768, 12, 50257}},   {"gpt2_medium", {24, 1024, 16, 50257}},
      {"gpt2_large", {36, 1280, 20, 50257}},  {"gpt2_xl", {48, 1600, 25, 50257}},
  };
  return sizes;
}

TransformerSize size_of(const std::string& name, const PresetOptions& o) {
  TransformerSize z = transformer_sizes().at(name);
  if (o.layers > 0) z.layers = o.layers;
  if (o.width > 0) z.width = o.width;
  if (o.heads > 0) z.heads = o.heads;
  if (o.vocab > 0) z.vocab = o.vocab;
  return z;
}

LayerSpec attention(const std::string& name, int heads, const std::string& mask, const PresetOptions& o,
                    std::vector<std::string> inputs = {}) {
  LayerSpec l = make("attention", name, std::move(inputs));
  l.heads = heads;
  l.mask = mask;
  l.rate = kDropout;
  l.fused_kernel = o.fused_attention;
  return l;
}

ModelPreset bert(const TransformerSize& z, const PresetOptions& o) {
  long seq = o.sequence > 0 ? o.sequence : 128; // BERT pre-training phase 1 length
  ModelPreset p{{}, {seq}};
  auto& L = p.layers;
  L.push_back(embedding(z.vocab, z.width, 512, 2));
  L.push_back(make("layer_norm", "embeddings_ln"));
  L.push_back(dropout("embeddings_dropout"));
  std::string x = "embeddings_dropout";
  for (int i = 0; i < z.layers; ++i) {
    std::string n = std::string("layer") + std::to_string(i);
    L.push_back(attention(n + "_attention", z.heads, "padding", o, {x}));
    L.push_back(dropout(n + "_attention_dropout"));
    L.push_back(make("add", n + "_attention_add", {x, n + "_attention_dropout"}));
    L.push_back(make("layer_norm", n + "_attention_ln"));
    L.push_back(dense(n + "_intermediate", 4 * z.width, "gelu"));
    L.push_back(dense(n + "_output", z.width));
    L.push_back(dropout(n + "_output_dropout"));
    L.push_back(make("add", n + "_output_add", {n + "_attention_ln", n + "_output_dropout"}));
    L.push_back(make("layer_norm", n + "_output_ln"));
    x = n + "_output_ln";
  }
  // Masked-LM head over every position (as Hugging Face's BertForMaskedLM computes it).
  L.push_back(dense("mlm_transform", z.width, "gelu"));
  L.push_back(make("layer_norm", "mlm_ln"));
  LayerSpec decoder = dense("mlm_decoder", z.vocab);
  decoder.tied_weights = true; // the word-embedding table; only its bias is new
  L.push_back(decoder);
  L.push_back(make("loss", "loss"));
  return p;
}

ModelPreset gpt2(const TransformerSize& z, const PresetOptions& o) {
  long seq = o.sequence > 0 ? o.sequence : 1024;
  ModelPreset p{{}, {seq}};
  auto& L = p.layers;
  L.push_back(embedding(z.vocab, z.width, 1024, 0));
  L.push_back(dropout("embeddings_dropout"));
  std::string x = "embeddings_dropout";
  for (int i = 0; i < z.layers; ++i) {
    std::string n = std::string("h") + std::to_string(i);
    L.push_back(make("layer_norm", n + "_ln1", {x}));
    L.push_back(attention(n + "_attention", z.heads, "causal", o));
    L.push_back(dropout(n + "_attention_dropout"));
    L.push_back(make("add", n + "_attention_add", {x, n + "_attention_dropout"}));
    L.push_back(make("layer_norm", n + "_ln2"));
    L.push_back(dense(n + "_fc", 4 * z.width, "gelu"));
    L.push_back(dense(n + "_proj", z.width));
    L.push_back(dropout(n + "_mlp_dropout"));
    L.push_back(make("add", n + "_mlp_add", {n + "_attention_add", n + "_mlp_dropout"}));
    x = n + "_mlp_add";
  }
  L.push_back(make("layer_norm", "ln_f"));
  LayerSpec head = dense("lm_head", z.vocab);
  head.bias = false;
  head.tied_weights = true; // GPT-2 ties the LM head to the token embedding
  L.push_back(head);
  L.push_back(make("loss", "loss"));
  return p;
}

} // namespace

bool is_transformer_preset(const std::string& name) { return transformer_sizes().count(name) > 0; }

ModelPreset transformer_preset(const std::string& name, const PresetOptions& o) {
  TransformerSize z = size_of(name, o);
  return name.starts_with("bert") ? bert(z, o) : gpt2(z, o);
}

} // namespace mlsim
