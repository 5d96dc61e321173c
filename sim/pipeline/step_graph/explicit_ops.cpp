#include "sim/pipeline/step_graph/explicit_ops.hpp"

#include <map>

namespace mlsim {

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
  std::string pc = node.get_choice("precision", {"matrix", "follow_input", "needs_fp32"},
                                   is_matrix_kind(op.kind)         ? "matrix"
                                   : op.kind == OpKind::reduction ? "needs_fp32"
                                                                  : "follow_input");
  op.precision_class = pc == "matrix"         ? PrecisionClass::matrix
                       : pc == "needs_fp32" ? PrecisionClass::needs_fp32
                                            : PrecisionClass::follow_input;
  op.placement = node.get_choice("placement", {"device", "host"}, "device") == "host" ? OpPlacement::host
                                                                                     : OpPlacement::device;
  if (ConfigNode dims = node.child("dims"); dims.defined()) {
    dims.allow_only({"m", "n", "k", "in_channels", "out_channels"});
    for (const auto& k : dims.keys())
      op.dims[k] = dims.get_integer(k, std::nullopt, 1);
  }
  if (ConfigNode in = node.child("inputs"); in.defined()) {
    if (in.is_scalar())
      e.inputs.push_back(in.as_string());
    else
      for (const auto& i : in.items())
        e.inputs.push_back(i.as_string());
  }
  return e;
}

OpGraph build_explicit_graph(const std::vector<ExplicitOp>& ops, long batch) {
  OpGraph g;
  std::map<std::string, size_t> ids;
  double b = static_cast<double>(batch);
  for (size_t i = 0; i < ops.size(); ++i) {
    Op op = ops[i].per_sample;
    op.flops = op.flops * b;
    op.in_elements *= b;
    op.out_elements *= b;
    op.dims["batch"] = batch;
    if (op.dims.count("m"))
      op.dims["m"] *= batch;
    std::vector<std::string> inputs = ops[i].inputs;
    if (inputs.empty())
      inputs.push_back(i == 0 ? "input" : ops[i - 1].per_sample.name);
    std::vector<size_t> producers;
    for (const auto& n : inputs) {
      if (n == "input") {
        op.reads_model_input = true;
        continue;
      }
      auto it = ids.find(n);
      if (it == ids.end())
        throw InputError("", "model.ops '" + op.name + "'.inputs", "the name of an earlier op or 'input'",
                         "'" + n + "'");
      producers.push_back(it->second);
    }
    if (ids.count(op.name))
      throw InputError("", "model.ops '" + op.name + "'", "a unique op name", "a second op of that name");
    std::string name = op.name;
    size_t id = g.add(std::move(op));
    for (size_t p : producers)
      g.connect(p, id);
    ids[name] = id;
  }
  return g;
}

} // namespace mlsim
