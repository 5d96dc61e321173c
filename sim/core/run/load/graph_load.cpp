// A step graph's parts from YAML: layers, explicit ops, precision, optimizer, stack (model_load.hpp).
#include "sim/core/run/load/model_load.hpp"

#include "sim/core/run/load/preset_library.hpp"

#include <memory>
#include <string>
#include <vector>

namespace mlsim {
namespace {

// `inputs`: a name or a list of names of earlier layers or ops ("input": the model's input); none: [].
std::vector<std::string> input_names(const ConfigNode& in) {
  std::vector<std::string> names;
  if (!in.defined())
    return names;
  if (in.is_scalar())
    names.push_back(in.as_string());
  else
    for (const auto& i : in.items())
      names.push_back(i.as_string());
  return names;
}

} // namespace

LayerSpec parse_layer(const ConfigNode& node, size_t index) {
  LayerSpec l;
  l.type = node.get_choice("type", layer_types());
  std::vector<std::string> allowed{"type", "name", "inputs", "placement"};
  for (const auto& k : layer_type_keys(l.type))
    allowed.push_back(k);
  node.allow_only(allowed);
  l.name = node.get_string("name", l.type + "_" + std::to_string(index));
  l.inputs = input_names(node.child("inputs"));
  l.placement = node.get_enum<OpPlacement>("placement", OpPlacement::device);
  l.filters = node.get_integer("filters", l.type.starts_with("conv") ? std::nullopt : std::optional<long long>(0), 1);
  l.groups = node.get_integer("groups", 1, 1);
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
  l.activation = node.get_choice("activation", {"relu", "leaky_relu", "sigmoid", "tanh", "gelu", "silu", "linear"},
                                 l.type == "activation" ? std::nullopt : std::optional<std::string>(""));
  l.rate = node.get_number("rate", l.type == "dropout" ? std::nullopt : std::optional<double>(0.0), 0.0, 0.999);
  l.vocab = node.get_integer("vocab", l.type == "embedding" ? std::nullopt : std::optional<long long>(0), 1);
  l.width = node.get_integer("width", l.type == "embedding" ? std::nullopt : std::optional<long long>(0), 1);
  l.positions = node.get_integer("positions", 0, 0);
  l.token_types = node.get_integer("token_types", 0, 0);
  l.heads = static_cast<int>(node.get_integer("heads", l.type == "attention" ? std::nullopt
                                                                             : std::optional<long long>(0),
                                              1, 1024));
  l.mask = node.get_choice("mask", {"none", "padding", "causal"}, "none");
  l.fused_kernel = node.get_choice("implementation", {"eager", "fused"}, "eager") == "fused";
  l.loss = node.get_choice("loss", {"softmax_crossentropy", "binary_crossentropy", "mse"}, "softmax_crossentropy");
  return l;
}

ExplicitOp parse_explicit_op(const ConfigNode& node, size_t index) {
  node.allow_only({"name", "kind", "flops", "bytes_read", "bytes_written", "parameters", "dims", "placement",
                   "inputs", "precision"});
  ExplicitOp e;
  Op& op = e.per_sample;
  std::string kind = node.get_choice("kind", {"matmul", "conv", "elementwise", "reduction", "cast", "copy",
                                              "collective"});
  op.kind = op_kind_from_string(kind);
  op.name = node.get_string("name", kind + "_" + std::to_string(index));
  op.layer = op.name;
  op.flops = node.get_quantity<Flops>("flops", Flops(0.0), false);
  // Bytes are given as an fp32 op moves them; elements are what the precision policy rescales.
  op.in_elements = node.get_quantity<Bytes>("bytes_read", Bytes(0.0), false).value() / 4.0;
  op.out_elements = node.get_quantity<Bytes>("bytes_written", Bytes(0.0), false).value() / 4.0;
  op.owned_parameters = node.get_number("parameters", 0.0, 0.0);
  op.param_elements = op.owned_parameters;
  op.precision_class = node.get_enum<PrecisionClass>("precision", is_matrix_kind(op.kind) ? PrecisionClass::matrix
                                                                 : op.kind == OpKind::reduction
                                                                     ? PrecisionClass::needs_fp32
                                                                     : PrecisionClass::follow_input);
  op.placement = node.get_enum<OpPlacement>("placement", OpPlacement::device);
  if (ConfigNode dims = node.child("dims"); dims.defined()) {
    dims.allow_only({"m", "n", "k", "in_channels", "out_channels"});
    for (const auto& k : dims.keys())
      op.dims[k] = dims.get_integer(k, std::nullopt, 1);
  }
  e.inputs = input_names(node.child("inputs"));
  return e;
}

StackProfile parse_stack(const ConfigNode& user) {
  ConfigNode node = resolve_preset(user, "stacks", "stack");
  node.allow_only({"preset", "name", "source", "sixteen_bit", "tf32", "fusion", "allocator", "optimizer_kernels",
                   "zero_grad", "host_issue", "loss_scale_sync", "max_pool"});
  StackProfile s;
  s.name = node.get_string("name", user.is_scalar() ? user.as_string()
                                                    : node.get_string("preset", "inline stack"));
  s.source = node.get_string("source", "");
  s.tf32 = node.get_bool("tf32", true);
  s.fusion = node.get_enum<FusionPolicy>("fusion", FusionPolicy::none);
  s.optimizer_kernels = node.get_enum<OptimizerKernels>("optimizer_kernels", OptimizerKernels::fused);
  s.zero_grad = node.get_enum<ZeroGrad>("zero_grad", ZeroGrad::set_to_none);
  if (ConfigNode h = node.child("host_issue"); h.defined()) {
    h.allow_only({"per_op", "per_optimizer_call"});
    s.host_per_op = h.get_quantity<Seconds>("per_op", Seconds(0.0), false);
    s.host_per_optimizer_call = h.get_quantity<Seconds>("per_optimizer_call", Seconds(0.0), false);
  }
  s.loss_scale_sync = node.get_bool("loss_scale_sync", false);
  if (ConfigNode m = node.child("max_pool"); m.defined()) {
    m.allow_only({"forward_cycles", "backward_cycles", "index_bytes"});
    s.max_pool_index_bytes = m.get_quantity<Bytes>("index_bytes", Bytes(0.0), false).value();
    auto per_layout = [](const ConfigNode& c, std::map<std::string, double>& out) {
      if (!c.defined())
        return;
      c.allow_only({"nhwc", "nchw"});
      for (const auto& layout : c.keys())
        out[layout] = c.get_number(layout, std::nullopt, 0.0, 1e6);
    };
    per_layout(m.child("forward_cycles"), s.max_pool_forward_cycles);
    per_layout(m.child("backward_cycles"), s.max_pool_backward_cycles);
  }
  if (ConfigNode a = node.child("allocator"); a.defined()) {
    a.allow_only({"block", "segment"});
    s.allocator.block = a.get_quantity<Bytes>("block", s.allocator.block);
    s.allocator.segment = a.get_quantity<Bytes>("segment", s.allocator.segment, false);
  }
  if (ConfigNode paths = node.child("sixteen_bit"); paths.defined()) {
    paths.allow_only({"matmul", "conv", "elementwise", "reduction", "copy"});
    for (const auto& kind : paths.keys()) {
      s.sixteen_bit[op_kind_from_string(kind)] = paths.get_enum<SixteenBitPath>(kind);
    }
  }
  return s;
}

StackProfile stack_preset(const std::string& name) {
  auto source = std::make_shared<ConfigSource>();
  source->file = "stack preset '" + name + "'";
  return parse_stack(ConfigNode(YAML::Node(name), "model.stack", source));
}

} // namespace mlsim
