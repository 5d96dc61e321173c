#include "sim/pipeline/step_graph/graph_model.hpp"

#include "sim/pipeline/step_graph/model_presets.hpp"

namespace mlsim {
namespace {

Shape parse_shape(const ConfigNode& node) {
  Shape s;
  if (!node.is_sequence() || node.items().empty() || node.items().size() > 4)
    node.fail("a per-sample shape such as [224, 224, 3] or [128]", node.quoted());
  for (const auto& d : node.items()) {
    long long v = d.as_integer();
    if (v < 1)
      d.fail("a dim >= 1", d.quoted());
    s.push_back(static_cast<long>(v));
  }
  return s;
}

const std::vector<std::string> kCommonKeys{"name", "precision", "stack", "optimizer", "gradient_bucket",
                                           "input_dtype"};

} // namespace

GraphModel parse_graph_model(const ConfigNode& node) {
  GraphModel m;
  m.where = node.where();
  std::vector<std::string> allowed = kCommonKeys;
  int forms = node.has("preset") + node.has("layers") + node.has("ops");
  if (forms != 1)
    node.fail("exactly one of preset, layers, ops or forward_flops_per_sample",
              forms == 0 ? "none of them" : std::to_string(forms) + " of them");
  if (node.has("preset")) {
    std::string preset = node.get_choice("preset", model_preset_names());
    allowed.push_back("preset");
    allowed.push_back("input");
    for (const auto& o : model_preset_options(preset))
      allowed.push_back(o);
    node.allow_only(allowed);
    PresetOptions o;
    o.classes = node.get_integer("classes", 0, 1);
    o.depth = static_cast<int>(node.get_integer("depth", 4, 1, 8));
    o.filters = node.get_integer("filters", 64, 1);
    o.dropout = node.get_number("dropout", 0.5, 0.0, 0.999);
    o.sequence = node.get_integer("sequence", 0, 1);
    ModelPreset p = model_preset(preset, o, node.has("input") ? parse_shape(node.child("input")) : Shape{});
    m.layers = std::move(p.layers);
    m.input = p.input;
    m.name = preset;
  } else if (node.has("layers")) {
    allowed.push_back("layers");
    allowed.push_back("input");
    node.allow_only(allowed);
    m.input = parse_shape(node.required("input"));
    auto items = node.child("layers").items();
    if (items.empty())
      node.child("layers").fail("at least one layer", "an empty list");
    for (size_t i = 0; i < items.size(); ++i)
      m.layers.push_back(parse_layer(items[i], i));
  } else {
    allowed.push_back("ops");
    node.allow_only(allowed);
    auto items = node.child("ops").items();
    if (items.empty())
      node.child("ops").fail("at least one op", "an empty list");
    for (size_t i = 0; i < items.size(); ++i)
      m.ops.push_back(parse_explicit_op(items[i], i));
  }
  m.name = node.get_string("name", m.name);
  if (node.has("precision"))
    m.precision = parse_precision(node.child("precision"));
  if (node.has("stack"))
    m.stack = parse_stack(node.child("stack"));
  if (node.has("optimizer"))
    m.optimizer = parse_optimizer(node.child("optimizer"));
  m.gradient_bucket = node.get_quantity<Bytes>("gradient_bucket", Bytes(25e6));
  if (node.has("input_dtype"))
    m.input_dtype = parse_dtype(node.child("input_dtype"));
  return m;
}

} // namespace mlsim
