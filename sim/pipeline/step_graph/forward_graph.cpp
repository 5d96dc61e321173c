#include "sim/pipeline/step_graph/forward_graph.hpp"

#include "sim/core/base/errors.hpp"
#include "sim/pipeline/step_graph/layer_builders.hpp"

#include <limits>
#include <map>

namespace mlsim {
namespace {
constexpr size_t kModelInput = std::numeric_limits<size_t>::max();

struct Produced {
  Shape shape;
  size_t op = kModelInput; // the op whose output this is (kModelInput: the batch itself)
};
} // namespace

ForwardGraph build_forward_graph(const std::vector<LayerSpec>& layers, const Shape& input, long batch) {
  ForwardGraph fg;
  std::map<std::string, Produced> outputs{{"input", {input, kModelInput}}};
  std::string previous = "input";
  for (const auto& layer : layers) {
    if (outputs.count(layer.name))
      throw InputError("", "model.layers '" + layer.name + "'", "a unique layer name", "a second layer of that name");
    std::vector<std::string> names = layer.inputs.empty() ? std::vector<std::string>{previous} : layer.inputs;
    std::vector<Shape> shapes;
    std::vector<size_t> producers;
    for (const auto& n : names) {
      auto it = outputs.find(n);
      if (it == outputs.end())
        throw InputError("", "model.layers '" + layer.name + "'.inputs",
                         "the name of an earlier layer or 'input'", "'" + n + "'");
      shapes.push_back(it->second.shape);
      producers.push_back(it->second.op);
    }
    LayerOutput built = build_layer(layer, shapes, batch);
    size_t last = producers.front();
    for (size_t i = 0; i < built.ops.size(); ++i) {
      Op op = std::move(built.ops[i]);
      fg.parameters += op.owned_parameters;
      bool first = i == 0;
      if (first)
        for (size_t p : producers)
          op.reads_model_input = op.reads_model_input || p == kModelInput;
      size_t id = fg.graph.add(std::move(op));
      if (first) {
        for (size_t p : producers)
          if (p != kModelInput)
            fg.graph.connect(p, id);
      } else {
        fg.graph.connect(last, id);
      }
      last = id;
    }
    outputs[layer.name] = {built.shape, last};
    previous = layer.name;
    fg.output = built.shape;
  }
  return fg;
}

} // namespace mlsim
