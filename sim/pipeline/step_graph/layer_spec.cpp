#include "sim/pipeline/step_graph/layer_spec.hpp"

#include <map>

namespace mlsim {

std::string to_string(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i)
    out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

namespace {
// Keys each layer type accepts besides type, name, inputs and placement.
const std::map<std::string, std::vector<std::string>>& type_keys() {
  static const std::map<std::string, std::vector<std::string>> keys{
      {"conv2d", {"filters", "kernel", "stride", "padding", "bias", "activation"}},
      {"conv2d_transpose", {"filters", "kernel", "stride", "padding", "bias", "activation"}},
      {"dense", {"units", "bias", "activation", "tied_weights"}},
      {"max_pool", {"size", "stride", "padding"}},
      {"avg_pool", {"size", "stride", "padding"}},
      {"global_avg_pool", {}},
      {"activation", {"activation"}},
      {"dropout", {"rate"}},
      {"concat", {}},
      {"add", {}},
      {"flatten", {}},
      {"batch_norm", {}},
      {"layer_norm", {}},
      {"softmax", {}},
      {"embedding", {"vocab", "width", "positions", "token_types"}},
      {"attention", {"heads"}},
      {"loss", {"loss"}},
  };
  return keys;
}
} // namespace

const std::vector<std::string>& layer_types() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& [k, v] : type_keys())
      n.push_back(k);
    return n;
  }();
  return names;
}

LayerSpec parse_layer(const ConfigNode& node, size_t index) {
  LayerSpec l;
  l.type = node.get_choice("type", layer_types());
  std::vector<std::string> allowed{"type", "name", "inputs", "placement"};
  for (const auto& k : type_keys().at(l.type))
    allowed.push_back(k);
  node.allow_only(allowed);
  l.name = node.get_string("name", l.type + "_" + std::to_string(index));
  if (ConfigNode in = node.child("inputs"); in.defined()) {
    if (in.is_scalar())
      l.inputs.push_back(in.as_string());
    else
      for (const auto& i : in.items())
        l.inputs.push_back(i.as_string());
  }
  l.placement = node.get_choice("placement", {"device", "host"}, "device") == "host" ? OpPlacement::host
                                                                                     : OpPlacement::device;
  l.filters = node.get_integer("filters", l.type.starts_with("conv") ? std::nullopt : std::optional<long long>(0), 1);
  l.units = node.get_integer("units", l.type == "dense" ? std::nullopt : std::optional<long long>(0), 1);
  l.kernel = static_cast<int>(node.get_integer("kernel", l.type.starts_with("conv") ? std::nullopt
                                                                                      : std::optional<long long>(1),
                                               1, 64));
  if (l.type.ends_with("pool") && l.type != "global_avg_pool")
    l.kernel = static_cast<int>(node.get_integer("size", 2, 1, 64));
  l.stride = static_cast<int>(node.get_integer("stride", 0, 1, 64));
  std::string default_padding = l.type.ends_with("pool") ? "valid" : "same";
  l.padding = node.get_string("padding", default_padding);
  if (l.padding != "same" && l.padding != "valid")
    node.get_integer("padding", std::nullopt, 0, 64); // an explicit pixel count, else a clear error
  l.bias = node.get_bool("bias", true);
  l.tied_weights = node.get_bool("tied_weights", false);
  l.activation = node.get_choice("activation", {"relu", "leaky_relu", "sigmoid", "tanh", "gelu", "linear"},
                                 l.type == "activation" ? std::nullopt : std::optional<std::string>(""));
  l.rate = node.get_number("rate", l.type == "dropout" ? std::nullopt : std::optional<double>(0.0), 0.0, 0.999);
  l.vocab = node.get_integer("vocab", l.type == "embedding" ? std::nullopt : std::optional<long long>(0), 1);
  l.width = node.get_integer("width", l.type == "embedding" ? std::nullopt : std::optional<long long>(0), 1);
  l.positions = node.get_integer("positions", 0, 0);
  l.token_types = node.get_integer("token_types", 0, 0);
  l.heads = static_cast<int>(node.get_integer("heads", l.type == "attention" ? std::nullopt
                                                                             : std::optional<long long>(0),
                                              1, 1024));
  l.loss = node.get_choice("loss", {"softmax_crossentropy", "binary_crossentropy", "mse"}, "softmax_crossentropy");
  return l;
}

} // namespace mlsim
