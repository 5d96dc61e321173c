#include "sim/pipeline/step_graph/explicit_ops.hpp"

#include "sim/core/base/errors.hpp"

#include <map>

namespace mlsim {

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
