#include "sim/pipeline/step_graph/model_presets.hpp"

#include "sim/core/base/errors.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>

namespace mlsim {
namespace {

// Small constructors so the layer lists below read like the papers' tables.
LayerSpec layer(const std::string& type, const std::string& name, std::vector<std::string> inputs = {}) {
  LayerSpec l = make_layer(type, name, std::move(inputs));
  if (type.ends_with("pool"))
    l.padding = "valid";
  return l;
}
LayerSpec conv(const std::string& name, long filters, int kernel, int stride = 1, const std::string& act = "",
               bool bias = true, std::vector<std::string> inputs = {}) {
  LayerSpec l = layer("conv2d", name, std::move(inputs));
  l.filters = filters;
  l.kernel = kernel;
  l.stride = stride;
  l.activation = act;
  l.bias = bias;
  return l;
}
LayerSpec pool(const std::string& type, const std::string& name, int size, int stride = 0,
               const std::string& padding = "valid") {
  LayerSpec l = layer(type, name);
  l.kernel = size;
  l.stride = stride;
  l.padding = padding;
  return l;
}
LayerSpec dense(const std::string& name, long units, const std::string& act = "", bool bias = true) {
  LayerSpec l = layer("dense", name);
  l.units = units;
  l.activation = act;
  l.bias = bias;
  return l;
}
LayerSpec act(const std::string& name, const std::string& fn) {
  LayerSpec l = layer("activation", name);
  l.activation = fn;
  return l;
}
LayerSpec dropout(const std::string& name, double rate, std::vector<std::string> inputs = {}) {
  LayerSpec l = layer("dropout", name, std::move(inputs));
  l.rate = rate;
  return l;
}
LayerSpec loss(const std::string& kind) {
  LayerSpec l = layer("loss", "loss");
  l.loss = kind;
  return l;
}

ModelPreset case4_cnn(const PresetOptions&) {
  ModelPreset p{{}, {224, 336, 3}};
  auto& L = p.layers;
  long filters[] = {32, 32, 64, 64};
  for (int i = 0; i < 4; ++i) {
    L.push_back(conv("conv" + std::to_string(i + 1), filters[i], 3, 1, "relu"));
    L.push_back(pool("max_pool", "pool" + std::to_string(i + 1), 2));
  }
  L.push_back(pool("avg_pool", "avg_pool", 2));
  L.push_back(layer("flatten", "flatten"));
  L.push_back(dense("dense", 1, "sigmoid"));
  L.push_back(loss("binary_crossentropy"));
  return p;
}

ModelPreset unet(const PresetOptions& o) {
  ModelPreset p{{}, {128, 128, 3}};
  auto& L = p.layers;
  std::vector<std::string> skips;
  auto double_conv = [&](const std::string& name, long filters) {
    L.push_back(conv(name + "_a", filters, 3, 1, "leaky_relu"));
    L.push_back(conv(name + "_b", filters, 3, 1, "leaky_relu"));
  };
  for (int level = 0; level < o.depth; ++level) {
    std::string name = "down" + std::to_string(level);
    double_conv(name, o.filters << level);
    std::string skip = name + "_b";
    if (level == o.depth - 1 && o.dropout > 0) { // dropout on the deepest levels, as in the common Keras U-Net
      L.push_back(dropout(name + "_dropout", o.dropout));
      skip = name + "_dropout";
    }
    skips.push_back(skip);
    L.push_back(pool("max_pool", name + "_pool", 2));
  }
  double_conv("bottom", o.filters << o.depth);
  if (o.dropout > 0)
    L.push_back(dropout("bottom_dropout", o.dropout));
  for (int level = o.depth - 1; level >= 0; --level) {
    std::string name = "up" + std::to_string(level);
    LayerSpec up = layer("conv2d_transpose", name + "_upconv");
    up.filters = o.filters << level;
    up.kernel = 2;
    up.stride = 2;
    up.activation = "leaky_relu";
    L.push_back(up);
    L.push_back(layer("concat", name + "_concat", {skips[static_cast<size_t>(level)], name + "_upconv"}));
    double_conv(name, o.filters << level);
  }
  L.push_back(conv("output", o.classes > 0 ? o.classes : 1, 1, 1, "sigmoid"));
  L.push_back(loss("binary_crossentropy"));
  return p;
}

// conv (no bias) + batch norm (+ an activation layer `<name>_<fn>`), the unit ResNets and EfficientNets are built of.
void conv_bn(std::vector<LayerSpec>& L, const std::string& name, long filters, int kernel, int stride,
             const std::string& fn, std::vector<std::string> inputs = {}, long groups = 1) {
  L.push_back(conv(name, filters, kernel, stride, "", false, std::move(inputs)));
  L.back().groups = groups;
  L.push_back(layer("batch_norm", name + "_bn"));
  if (!fn.empty())
    L.push_back(act(name + "_" + fn, fn));
}

// ResNet (He et al. 2016) as torchvision builds it (the stride on the 3x3: "v1.5"); with `groups` > 1 the
// bottleneck's 3x3 is grouped and `width_per_group` channels a group set its width: ResNeXt (Xie et al. 2017,
// "Aggregated Residual Transformations", the 32x4d templates of Table 1). `se_units` > 0 gates each block's output
// by squeeze-and-excitation (Hu et al. 2018) as NVIDIA's ConvNets build it (image_classification/resnet.py): the
// channel means through Linear(C, se_units) + ReLU and Linear(se_units, C) + sigmoid scale the output before the
// residual add (there one addcmul kernel, here a multiply and the add).
ModelPreset resnet(const PresetOptions& o, bool bottleneck, const std::vector<int>& blocks, long groups = 1,
                   long width_per_group = 64, long se_units = 0) {
  ModelPreset p{{}, {224, 224, 3}};
  auto& L = p.layers;
  conv_bn(L, "conv1", 64, 7, 2, "relu");
  L.push_back(pool("max_pool", "pool1", 3, 2, "same"));
  std::string x = "pool1";
  for (size_t stage = 0; stage < blocks.size(); ++stage) {
    long planes = 64L << stage;
    long width = bottleneck ? planes * width_per_group / 64 * groups : planes;
    long out = bottleneck ? 4 * planes : planes;
    for (int b = 0; b < blocks[stage]; ++b) {
      std::string n = "layer" + std::to_string(stage + 1) + "." + std::to_string(b);
      int stride = (b == 0 && stage > 0) ? 2 : 1;
      bool project = b == 0 && (stride != 1 || bottleneck);
      std::string shortcut = x;
      if (project) {
        conv_bn(L, n + "_downsample", out, 1, stride, "", {x});
        shortcut = n + "_downsample_bn";
      }
      if (bottleneck) {
        conv_bn(L, n + "_conv1", width, 1, 1, "relu", {x});
        conv_bn(L, n + "_conv2", width, 3, stride, "relu", {}, groups);
        conv_bn(L, n + "_conv3", out, 1, 1, "");
        if (se_units > 0) {
          L.push_back(layer("global_avg_pool", n + "_se_mean"));
          L.push_back(dense(n + "_se_squeeze", se_units, "relu"));
          L.push_back(dense(n + "_se_expand", out, "sigmoid"));
          L.push_back(layer("multiply", n + "_se_scale", {n + "_conv3_bn", n + "_se_expand"}));
        }
      } else {
        conv_bn(L, n + "_conv1", width, 3, stride, "relu", {x});
        conv_bn(L, n + "_conv2", width, 3, 1, "");
      }
      L.push_back(layer("add", n + "_add", {shortcut, L.back().name}));
      L.push_back(act(n + "_relu", "relu"));
      x = n + "_relu";
    }
  }
  L.push_back(layer("global_avg_pool", "avgpool"));
  L.push_back(dense("fc", o.classes > 0 ? o.classes : 1000));
  L.push_back(loss("softmax_crossentropy"));
  return p;
}

// torchvision's _make_divisible: channels rounded to a multiple of 8, never below 90 % of the scaled count.
long make_divisible(double v) {
  long n = std::max(8L, static_cast<long>(v + 4.0) / 8 * 8);
  return n < 0.9 * v ? n + 8 : n;
}

// EfficientNet (Tan & Le 2019, Table 1 for B0; width and depth multipliers for the others) as torchvision builds
// it: MBConv blocks of a 1x1 expansion (+ BN + SiLU), a depthwise k x k conv (groups = channels; + BN + SiLU), a
// squeeze-and-excitation gate (block input channels / 4, SiLU, sigmoid), a 1x1 projection (+ BN) and, where shape
// allows, stochastic depth and the residual add. Stochastic depth (a per-sample keep mask) is written as a dropout
// layer of the block's rate: one elementwise pass, as the real one, but its saved mask is counted per element.
ModelPreset efficientnet(const PresetOptions& o, double width_mult, double depth_mult, long resolution,
                         double classifier_dropout) {
  struct Stage {
    int expand, kernel, stride;
    long out;
    int repeats;
  };
  const Stage stages[] = {{1, 3, 1, 16, 1},  {6, 3, 2, 24, 2},  {6, 5, 2, 40, 2}, {6, 3, 2, 80, 3},
                          {6, 5, 1, 112, 3}, {6, 5, 2, 192, 4}, {6, 3, 1, 320, 1}};
  auto repeats = [&](const Stage& s) { return static_cast<int>(std::ceil(s.repeats * depth_mult)); };
  int total = 0;
  for (const auto& s : stages)
    total += repeats(s);
  ModelPreset p{{}, {resolution, resolution, 3}};
  auto& L = p.layers;
  long in = make_divisible(32 * width_mult);
  conv_bn(L, "stem", in, 3, 2, "silu");
  std::string x = "stem_silu";
  int block = 0;
  for (size_t s = 0; s < std::size(stages); ++s) {
    const Stage& st = stages[s];
    const long out = make_divisible(st.out * width_mult);
    for (int r = 0; r < repeats(st); ++r, ++block) {
      const std::string n = "features." + std::to_string(s + 1) + "." + std::to_string(r);
      const int stride = r == 0 ? st.stride : 1;
      const long expanded = make_divisible(static_cast<double>(in * st.expand));
      std::string h = x;
      if (st.expand != 1) {
        conv_bn(L, n + "_expand", expanded, 1, 1, "silu", {x});
        h = n + "_expand_silu";
      }
      conv_bn(L, n + "_depthwise", expanded, st.kernel, stride, "silu", {h}, expanded);
      L.push_back(layer("global_avg_pool", n + "_se_mean"));
      L.push_back(dense(n + "_se_squeeze", std::max(1L, in / 4), "silu"));
      L.push_back(dense(n + "_se_expand", expanded, "sigmoid"));
      L.push_back(layer("multiply", n + "_se_scale", {n + "_depthwise_silu", n + "_se_expand"}));
      conv_bn(L, n + "_project", out, 1, 1, "");
      if (stride == 1 && in == out) {
        L.push_back(dropout(n + "_stochastic_depth", 0.2 * block / total));
        L.push_back(layer("add", n + "_add", {x, n + "_stochastic_depth"}));
      }
      x = L.back().name;
      in = out;
    }
  }
  conv_bn(L, "head", 4 * in, 1, 1, "silu", {x});
  L.push_back(layer("global_avg_pool", "avgpool"));
  L.push_back(dropout("classifier_dropout", classifier_dropout));
  L.push_back(dense("fc", o.classes > 0 ? o.classes : 1000));
  L.push_back(loss("softmax_crossentropy"));
  return p;
}

ModelPreset vgg16(const PresetOptions& o) {
  ModelPreset p{{}, {224, 224, 3}};
  auto& L = p.layers;
  std::vector<std::vector<long>> stages{{64, 64}, {128, 128}, {256, 256, 256}, {512, 512, 512}, {512, 512, 512}};
  for (size_t s = 0; s < stages.size(); ++s) {
    for (size_t i = 0; i < stages[s].size(); ++i)
      L.push_back(conv("conv" + std::to_string(s + 1) + "_" + std::to_string(i + 1), stages[s][i], 3, 1, "relu"));
    L.push_back(pool("max_pool", "pool" + std::to_string(s + 1), 2));
  }
  L.push_back(layer("flatten", "flatten"));
  L.push_back(dense("fc6", 4096, "relu"));
  L.push_back(dropout("drop6", 0.5));
  L.push_back(dense("fc7", 4096, "relu"));
  L.push_back(dropout("drop7", 0.5));
  L.push_back(dense("fc8", o.classes > 0 ? o.classes : 1000));
  L.push_back(loss("softmax_crossentropy"));
  return p;
}

} // namespace

// model_presets_transformers.cpp
ModelPreset transformer_preset(const std::string& name, const PresetOptions& o);
bool is_transformer_preset(const std::string& name);

const std::vector<std::string>& model_preset_names() {
  static const std::vector<std::string> names{
      "bert_base", "bert_large",      "case4_cnn",       "efficientnet_b0",  "efficientnet_b4",     "gpt2_large",
      "gpt2_medium", "gpt2_small",    "gpt2_xl",         "resnet18",         "resnet50",            "resnet101",
      "resnet152", "resnext50_32x4d", "resnext101_32x4d", "se_resnext101_32x4d", "unet",             "vgg16"};
  return names;
}

std::vector<std::string> model_preset_options(const std::string& name) {
  if (name == "unet")
    return {"classes", "depth", "filters", "dropout"};
  if (is_transformer_preset(name))
    return {"sequence", "layers", "width", "heads", "vocab", "attention"};
  if (name == "case4_cnn")
    return {};
  return {"classes"};
}

ModelPreset model_preset(const std::string& name, const PresetOptions& o, const Shape& input) {
  ModelPreset p;
  if (name == "case4_cnn")
    p = case4_cnn(o);
  else if (name == "unet")
    p = unet(o);
  else if (name == "resnet18")
    p = resnet(o, false, {2, 2, 2, 2});
  else if (name == "resnet50")
    p = resnet(o, true, {3, 4, 6, 3});
  else if (name == "resnet101")
    p = resnet(o, true, {3, 4, 23, 3});
  else if (name == "resnet152")
    p = resnet(o, true, {3, 8, 36, 3});
  else if (name == "resnext50_32x4d")
    p = resnet(o, true, {3, 4, 6, 3}, 32, 4);
  else if (name == "resnext101_32x4d")
    p = resnet(o, true, {3, 4, 23, 3}, 32, 4);
  else if (name == "se_resnext101_32x4d")
    p = resnet(o, true, {3, 4, 23, 3}, 32, 4, 16);
  else if (name == "vgg16")
    p = vgg16(o);
  else if (name == "efficientnet_b0")
    p = efficientnet(o, 1.0, 1.0, 224, 0.2);
  else if (name == "efficientnet_b4")
    p = efficientnet(o, 1.4, 1.8, 380, 0.4);
  else if (is_transformer_preset(name))
    p = transformer_preset(name, o);
  else
    throw InternalError("unknown model preset '" + name + "'");
  if (!input.empty())
    p.input = input;
  return p;
}

} // namespace mlsim
