// The forward ops of a model, wired into a graph from its layer list.
//
// Each layer reads the previous layer's output unless it names its `inputs`;
// within a layer its ops form a chain. `flatten` emits no op (a reshape).
#pragma once

#include "sim/pipeline/step_graph/layer_spec.hpp"
#include "sim/pipeline/step_graph/op_graph.hpp"

namespace mlsim {

struct ForwardGraph {
  OpGraph graph;
  Shape output;
  double parameters = 0.0;
};

// Throws InputError for an unknown input name, a duplicate layer name or shapes that do not fit.
ForwardGraph build_forward_graph(const std::vector<LayerSpec>& layers, const Shape& input, long batch);

} // namespace mlsim
