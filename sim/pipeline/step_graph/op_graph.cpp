#include "sim/pipeline/step_graph/op_graph.hpp"

#include "sim/core/base/errors.hpp"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/topological_sort.hpp>

#include <algorithm>
#include <iterator>

namespace mlsim {
namespace {
using BoostDag = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS>;

BoostDag to_boost(const OpGraph& g) {
  BoostDag dag(g.ops.size());
  for (const auto& e : g.edges)
    boost::add_edge(e.from, e.to, dag);
  return dag;
}
} // namespace

std::vector<size_t> OpGraph::producers(size_t op, bool weight_edges) const {
  std::vector<size_t> out;
  for (const auto& e : edges)
    if (e.to == op && e.weight == weight_edges)
      out.push_back(e.from);
  return out;
}

std::vector<size_t> OpGraph::consumers(size_t op) const {
  std::vector<size_t> out;
  for (const auto& e : edges)
    if (e.from == op)
      out.push_back(e.to);
  return out;
}

std::vector<size_t> topological_order(const OpGraph& g) {
  BoostDag dag = to_boost(g);
  std::vector<size_t> reversed;
  try {
    boost::topological_sort(dag, std::back_inserter(reversed));
  } catch (const boost::not_a_dag&) {
    throw InternalError("the step graph has a cycle");
  }
  return {reversed.rbegin(), reversed.rend()};
}

CriticalPath critical_path(const OpGraph& g, const std::vector<Seconds>& durations) {
  if (durations.size() != g.ops.size())
    throw InternalError("critical_path: one duration per op expected");
  BoostDag dag = to_boost(g);
  std::vector<Seconds> finish(g.ops.size(), Seconds(0.0));
  std::vector<long> via(g.ops.size(), -1);
  for (size_t v : topological_order(g)) {
    Seconds start(0.0);
    for (auto [e, end] = boost::in_edges(v, dag); e != end; ++e) {
      size_t u = boost::source(*e, dag);
      if (finish[u] > start) {
        start = finish[u];
        via[v] = static_cast<long>(u);
      }
    }
    finish[v] = start + durations[v];
  }
  CriticalPath cp;
  if (g.ops.empty())
    return cp;
  size_t last = static_cast<size_t>(std::max_element(finish.begin(), finish.end()) - finish.begin());
  cp.length = finish[last];
  for (long v = static_cast<long>(last); v >= 0; v = via[static_cast<size_t>(v)])
    cp.ops.push_back(static_cast<size_t>(v));
  std::reverse(cp.ops.begin(), cp.ops.end());
  return cp;
}

} // namespace mlsim
