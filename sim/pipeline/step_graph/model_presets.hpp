// Model presets: layer lists computed from a few shape options.
//
// The presets are builder code rather than YAML because their layer lists are
// generated (ResNet-50 has 16 bottleneck blocks, GPT-2 twelve transformer
// blocks); each is a plain list of LayerSpec a scenario could also write out.
//   case4_cnn   SEED-CASES.md case 4 (Keras CNN on 224x336x3, Dense 1 + sigmoid)
//   unet        SEED-CASES.md case 5: depth 4, Conv2D / Conv2DTranspose /
//               dropout / leaky ReLU / max pooling / concat, no batch norm
//               (Ronneberger et al. 2015 layout with "same" padding)
//   resnet18, resnet50, resnet101, resnet152   He et al. 2016, torchvision layout (stride on the 3x3, "v1.5")
//   resnext50_32x4d, resnext101_32x4d   Xie et al. 2017: ResNet-50 / -101 with 32 groups of 4 channels in the
//               first stage's 3x3 (widths 128, 256, 512, 1024), as torchvision and NVIDIA's ConvNets build them
//   se_resnext101_32x4d   ResNeXt-101 32x4d with NVIDIA ConvNets' squeeze-and-excitation gate on every block
//               (16 hidden units, not the paper's C/16)
//   vgg16       Simonyan & Zisserman 2015, configuration D
//   efficientnet_b0, efficientnet_b4   Tan & Le 2019 as torchvision builds them (224 / 380 px, SiLU, depthwise
//               convs, squeeze-and-excitation, stochastic depth as a dropout pass)
//   bert_base, bert_large   Devlin et al. 2019: 12 / 24 layers, width 768 / 1024, 12 / 16 heads, MLM head
//   gpt2_small, gpt2_medium, gpt2_large, gpt2_xl   Radford et al. 2019: 12 / 24 / 36 / 48 layers, width 768 /
//               1024 / 1280 / 1600, 12 / 16 / 20 / 25 heads, tied LM head
//   (transformers take layers / width / heads / vocab to override the published size: e.g. a vocabulary padded
//   to a multiple of 8, as NVIDIA's BERT recipes do, for the tensor cores)
#pragma once

#include "sim/pipeline/step_graph/layer_spec.hpp"

#include <string>
#include <vector>

namespace mlsim {

struct PresetOptions {
  long classes = 0;      // 0: the preset's default
  int depth = 4;         // unet
  long filters = 64;     // unet base filters
  double dropout = 0.5;  // unet
  long sequence = 0;     // transformers: tokens per sample (0: the preset's default)
  int layers = 0;        // transformers: 0 = the preset's published size, likewise width, heads, vocab
  long width = 0;
  int heads = 0;
  long vocab = 0;
  bool fused_attention = false; // transformers: attention: fused (FlashAttention / SDPA) instead of eager kernels
};

struct ModelPreset {
  std::vector<LayerSpec> layers;
  Shape input; // default input shape per sample
};

// The preset names, sorted.
const std::vector<std::string>& model_preset_names();
// The options (YAML keys) each preset accepts.
std::vector<std::string> model_preset_options(const std::string& name);
// `input` overrides the default input shape when not empty. Throws InternalError for an unknown name.
ModelPreset model_preset(const std::string& name, const PresetOptions& options, const Shape& input = {});

} // namespace mlsim
