// A layer of a model, as a scenario's `model.layers` list or a preset writes it.
//
// Shapes are per sample, batch excluded: images [height, width, channels],
// token sequences [length] (ids) or [length, width], flat vectors [features].
// A layer reads the previous layer's output unless `inputs` names others
// ("input" is the model's input), which is how skips (U-Net concat, ResNet
// add) are written.
#pragma once

#include "sim/pipeline/step_plan.hpp"

#include <string>
#include <vector>

namespace mlsim {

using Shape = std::vector<long>;
std::string to_string(const Shape& s);

struct LayerSpec {
  std::string type; // see layer_types()
  std::string name;
  std::vector<std::string> inputs;
  OpPlacement placement = OpPlacement::device;

  long filters = 0;           // conv2d, conv2d_transpose
  long groups = 1;            // conv2d: channel groups (ResNeXt's cardinality; = channels for a depthwise conv)
  long units = 0;             // dense
  int kernel = 1;             // conv kernel size, pooling window
  int stride = 0;             // 0: 1 for convs, the window for pooling
  std::string padding = "same"; // same | valid | "<n>" (explicit pixels each side)
  bool bias = true;           // conv2d, conv2d_transpose, dense
  bool tied_weights = false;  // dense: its weight matrix is an embedding table's, counted once (GPT-2's LM head)
  std::string activation;     // activation layers, or fused after conv/dense ("" = none)
  double rate = 0.0;          // dropout; attention: dropout on the attention probabilities
  long vocab = 0;             // embedding
  long width = 0;             // embedding output width
  long positions = 0;         // embedding: learned position table size (0 = none)
  long token_types = 0;       // embedding: segment table size (0 = none)
  int heads = 0;              // attention
  std::string mask = "none";  // attention: none | padding (additive, BERT) | causal (GPT-2)
  bool fused_kernel = false;  // attention: one fused kernel (FlashAttention, SDPA) instead of eager kernels
  std::string loss = "softmax_crossentropy"; // loss
};

// A layer of `type` named `name` reading `inputs` (empty: the previous layer), every other field at its default.
LayerSpec make_layer(const std::string& type, const std::string& name, std::vector<std::string> inputs = {});

// The layer types the builders know.
const std::vector<std::string>& layer_types();

// The keys a layer of `type` accepts besides type, name, inputs and placement.
const std::vector<std::string>& layer_type_keys(const std::string& type);

} // namespace mlsim
