// The ops of one training step as a DAG (Boost.Graph).
//
// Vertices are ops; an edge u -> v says v reads what u wrote. An edge is
// marked `weight` when it carries parameters (a weight cast feeding a matmul),
// so the backward rules can send the weight gradient back along it.
// critical_path: the longest path through the DAG with each op weighted by
// its duration, i.e. the step time with unlimited concurrent streams; a
// single stream instead runs the sum of durations. Ignores: contention
// between concurrent ops.
// Reference: Boost.Graph topological_sort; CLRS 24.2 (DAG shortest/longest paths).
#pragma once

#include "sim/pipeline/step_graph/op.hpp"

#include <cstddef>
#include <vector>

namespace mlsim {

struct OpEdge {
  size_t from = 0;
  size_t to = 0;
  bool weight = false; // carries parameters rather than activations
};

struct OpGraph {
  std::vector<Op> ops;
  std::vector<OpEdge> edges;

  size_t add(Op op) {
    ops.push_back(std::move(op));
    return ops.size() - 1;
  }
  void connect(size_t from, size_t to, bool weight = false) { edges.push_back({from, to, weight}); }
  std::vector<size_t> producers(size_t op, bool weight_edges = false) const;
  std::vector<size_t> consumers(size_t op) const;
};

// Op indices in a topological order; throws InternalError if the graph has a cycle.
std::vector<size_t> topological_order(const OpGraph& g);

struct CriticalPath {
  Seconds length{0.0};
  std::vector<size_t> ops; // from first to last
};

// The longest path when op i takes durations[i].
CriticalPath critical_path(const OpGraph& g, const std::vector<Seconds>& durations);

} // namespace mlsim
