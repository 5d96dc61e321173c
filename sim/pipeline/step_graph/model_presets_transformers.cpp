// BERT-base (post-LayerNorm encoder + masked-LM head) and GPT-2 small
// (pre-LayerNorm decoder + LM head tied to the token embedding), as layer lists.
// BERT: Devlin et al. 2019 (L=12, H=768, A=12, vocab 30522, 512 positions,
// 2 segments); GPT-2: Radford et al. 2019 and the released 124M checkpoint
// (L=12, d=768, 12 heads, vocab 50257, 1024 positions).
#include "sim/pipeline/step_graph/model_presets.hpp"

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
LayerSpec dropout(const std::string& name) {
  LayerSpec l = make("dropout", name);
  l.rate = 0.1;
  return l;
}
LayerSpec attention(const std::string& name, int heads) {
  LayerSpec l = make("attention", name);
  l.heads = heads;
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

constexpr long kWidth = 768, kFfn = 3072;
constexpr int kLayers = 12, kHeads = 12;

ModelPreset bert_base(const PresetOptions& o) {
  long seq = o.sequence > 0 ? o.sequence : 128; // BERT pre-training phase 1 length
  ModelPreset p{{}, {seq}};
  auto& L = p.layers;
  L.push_back(embedding(30522, kWidth, 512, 2));
  L.push_back(make("layer_norm", "embeddings_ln"));
  L.push_back(dropout("embeddings_dropout"));
  std::string x = "embeddings_dropout";
  for (int i = 0; i < kLayers; ++i) {
    std::string n = std::string("layer") + std::to_string(i);
    L.push_back(make("attention", n + "_attention", {x}));
    L.back().heads = kHeads;
    L.push_back(dropout(n + "_attention_dropout"));
    L.push_back(make("add", n + "_attention_add", {x, n + "_attention_dropout"}));
    L.push_back(make("layer_norm", n + "_attention_ln"));
    L.push_back(dense(n + "_intermediate", kFfn, "gelu"));
    L.push_back(dense(n + "_output", kWidth));
    L.push_back(dropout(n + "_output_dropout"));
    L.push_back(make("add", n + "_output_add", {n + "_attention_ln", n + "_output_dropout"}));
    L.push_back(make("layer_norm", n + "_output_ln"));
    x = n + "_output_ln";
  }
  // Masked-LM head over every position (as Hugging Face's BertForMaskedLM computes it).
  L.push_back(dense("mlm_transform", kWidth, "gelu"));
  L.push_back(make("layer_norm", "mlm_ln"));
  LayerSpec decoder = dense("mlm_decoder", 30522);
  decoder.tied_weights = true; // the word-embedding table; only its bias is new
  L.push_back(decoder);
  L.push_back(make("loss", "loss"));
  return p;
}

ModelPreset gpt2_small(const PresetOptions& o) {
  long seq = o.sequence > 0 ? o.sequence : 1024;
  ModelPreset p{{}, {seq}};
  auto& L = p.layers;
  L.push_back(embedding(50257, kWidth, 1024, 0));
  L.push_back(dropout("embeddings_dropout"));
  std::string x = "embeddings_dropout";
  for (int i = 0; i < kLayers; ++i) {
    std::string n = std::string("h") + std::to_string(i);
    L.push_back(make("layer_norm", n + "_ln1", {x}));
    L.push_back(attention(n + "_attention", kHeads));
    L.push_back(dropout(n + "_attention_dropout"));
    L.push_back(make("add", n + "_attention_add", {x, n + "_attention_dropout"}));
    L.push_back(make("layer_norm", n + "_ln2"));
    L.push_back(dense(n + "_fc", kFfn, "gelu"));
    L.push_back(dense(n + "_proj", kWidth));
    L.push_back(dropout(n + "_mlp_dropout"));
    L.push_back(make("add", n + "_mlp_add", {n + "_attention_add", n + "_mlp_dropout"}));
    x = n + "_mlp_add";
  }
  L.push_back(make("layer_norm", "ln_f"));
  LayerSpec head = dense("lm_head", 50257);
  head.bias = false;
  head.tied_weights = true; // GPT-2 ties the LM head to the token embedding
  L.push_back(head);
  L.push_back(make("loss", "loss"));
  return p;
}

} // namespace

ModelPreset transformer_preset(const std::string& name, const PresetOptions& o) {
  return name == "bert_base" ? bert_base(o) : gpt2_small(o);
}

} // namespace mlsim
