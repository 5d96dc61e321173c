// The model's forms, from YAML (model_load.hpp); the step graph's parts are in graph_load.cpp and the
// trace form in trace_load.cpp.
#include "sim/core/run/load/model_load.hpp"

#include "sim/core/run/load/hardware_load.hpp"
#include "sim/pipeline/step_graph/model_presets.hpp"

namespace mlsim {

std::vector<std::string> with_loop_keys(std::vector<std::string> form_keys) {
  form_keys.push_back("gradient_accumulation");
  form_keys.push_back("gradient_sync");
  form_keys.push_back("loss_readback");
  form_keys.push_back("gradient_compression");
  return form_keys;
}

namespace {

ModelSpec parse_roofline(const ConfigNode& node) {
  node.allow_only(with_loop_keys({"name", "forward_flops_per_sample", "bytes_per_sample", "parameters", "dtype"}));
  ModelSpec m;
  m.name = node.get_string("name", "model");
  m.forward_flops_per_sample = node.get_quantity<Flops>("forward_flops_per_sample");
  m.bytes_per_sample = node.get_quantity<Bytes>("bytes_per_sample", Bytes(0.0), false);
  m.parameters = node.get_number("parameters", 0.0, 0.0);
  if (node.has("dtype"))
    m.dtype = node.child("dtype").as_enum<DType>();
  return m;
}

ModelSpec parse_fixed_step(const ConfigNode& node) {
  node.allow_only(with_loop_keys({"name", "step_time", "parameters"}));
  ModelSpec m;
  m.name = node.get_string("name", "model");
  m.step_time = node.get_quantity<Seconds>("step_time");
  m.parameters = node.get_number("parameters", 0.0, 0.0);
  return m;
}


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

const std::vector<std::string> kCommonKeys = with_loop_keys({"name", "precision", "stack", "optimizer",
                                                            "gradient_bucket", "input_dtype", "layout"});

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
    o.layers = static_cast<int>(node.get_integer("layers", 0, 1, 1000));
    o.width = node.get_integer("width", 0, 1);
    o.heads = static_cast<int>(node.get_integer("heads", 0, 1, 1024));
    o.vocab = node.get_integer("vocab", 0, 1);
    o.fused_attention = node.get_choice("attention", {"eager", "fused"}, "eager") == "fused";
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
    m.precision = node.child("precision").as_enum<PrecisionPolicy>();
  if (node.has("stack"))
    m.stack = parse_stack(node.child("stack"));
  if (node.has("optimizer"))
    m.optimizer = node.child("optimizer").as_enum<Optimizer>();
  m.gradient_bucket = node.get_quantity<Bytes>("gradient_bucket", Bytes(25e6));
  if (node.has("input_dtype"))
    m.input_dtype = node.child("input_dtype").as_enum<DType>();
  m.layout = node.get_enum<ActivationLayout>("layout", ActivationLayout::nhwc);
  return m;
}

namespace {
ModelSpec parse_model_form(const ConfigNode& node) {
  if (node.has("step_time"))
    return parse_fixed_step(node);
  if (node.has("trace")) {
    ModelSpec m;
    m.trace = parse_trace_model(node);
    m.name = m.trace->name;
    return m;
  }
  if (node.has("forward_flops_per_sample")) {
    for (const char* other : {"preset", "layers", "ops"})
      if (node.has(other))
        node.child(other).fail("either forward_flops_per_sample (a roofline) or a " + std::string(other) +
                                   " model, not both",
                               "both");
    return parse_roofline(node);
  }
  ModelSpec m;
  m.graph = parse_graph_model(node);
  m.name = m.graph->name;
  return m;
}

} // namespace

ModelSpec parse_model(const ConfigNode& node) {
  // fp16 and bf16 move the same 2 bytes an element; the name says which hook a user runs. Checked before the
  // model's form is read: a trace's buckets are the message sizes it measured, in the dtype it ran.
  const bool compress = node.get_choice("gradient_compression", {"none", "fp16", "bf16"}, "none") != "none";
  if (compress && node.has("trace")) {
    const ConfigNode key = node.child("gradient_compression");
    key.fail("none (a trace's buckets are the message sizes it measured, in the dtype it ran)", key.quoted());
  }
  ModelSpec m = parse_model_form(node);
  m.gradient_accumulation = node.get_integer("gradient_accumulation", 1, 1, 1 << 20);
  m.reduce_every_micro_batch = node.get_choice("gradient_sync", {"step", "micro_batch"}, "step") == "micro_batch";
  m.readback_every_micro_batch = node.get_choice("loss_readback", {"none", "micro_batch"}, "none") == "micro_batch";
  m.compress_gradients_16bit = compress;
  return m;
}

} // namespace mlsim
