#include "sim/pipeline/step_graph/layer_spec.hpp"

#include <map>
#include <utility>

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
      {"conv2d", {"filters", "kernel", "stride", "padding", "bias", "activation", "groups"}},
      {"conv2d_transpose", {"filters", "kernel", "stride", "padding", "bias", "activation"}},
      {"dense", {"units", "bias", "activation", "tied_weights"}},
      {"max_pool", {"size", "stride", "padding"}},
      {"avg_pool", {"size", "stride", "padding"}},
      {"global_avg_pool", {}},
      {"activation", {"activation"}},
      {"dropout", {"rate"}},
      {"concat", {}},
      {"add", {}},
      {"multiply", {}},
      {"flatten", {}},
      {"batch_norm", {}},
      {"layer_norm", {}},
      {"softmax", {}},
      {"embedding", {"vocab", "width", "positions", "token_types"}},
      {"attention", {"heads", "rate", "mask", "implementation"}},
      {"loss", {"loss"}},
  };
  return keys;
}
} // namespace

const std::vector<std::string>& layer_type_keys(const std::string& type) { return type_keys().at(type); }

const std::vector<std::string>& layer_types() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& [k, v] : type_keys())
      n.push_back(k);
    return n;
  }();
  return names;
}

LayerSpec make_layer(const std::string& type, const std::string& name, std::vector<std::string> inputs) {
  LayerSpec l;
  l.type = type;
  l.name = name;
  l.inputs = std::move(inputs);
  return l;
}

} // namespace mlsim
