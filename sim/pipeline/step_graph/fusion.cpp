#include "sim/pipeline/step_graph/fusion.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <numeric>

namespace mlsim {
namespace {

bool joins_chains(OpKind k) { return k == OpKind::elementwise || k == OpKind::cast || k == OpKind::reduction; }

struct Groups {
  std::vector<size_t> head;               // head[i]: first op of i's group
  std::vector<std::vector<size_t>> members; // members[h], for heads h
};

// Chains of ops of one phase, built in stream order (which is topological).
Groups find_groups(const OpGraph& g, FusionPolicy policy) {
  const size_t n = g.ops.size();
  std::vector<std::vector<size_t>> producers(n), consumers(n);
  for (const auto& e : g.edges) {
    producers[e.to].push_back(e.from);
    consumers[e.from].push_back(e.to);
  }
  Groups gr;
  gr.head.resize(n);
  std::iota(gr.head.begin(), gr.head.end(), size_t{0});
  gr.members.resize(n);
  std::vector<bool> closed(n, false); // a group that a reduction ended
  for (size_t j = 0; j < n; ++j) {
    gr.members[j] = {j};
    const Op& op = g.ops[j];
    if (op.placement != OpPlacement::device || !joins_chains(op.kind))
      continue;
    auto same_phase = [&](size_t x) { return g.ops[x].phase == op.phase; };
    std::vector<size_t> ps;
    for (size_t p : producers[j])
      if (same_phase(p))
        ps.push_back(p);
    for (size_t p : ps) {
      size_t h = gr.head[p];
      if (closed[h] || gr.members[h].back() != p || g.ops[p].placement != OpPlacement::device)
        continue;
      bool only_consumer = true;
      for (size_t c : consumers[p])
        only_consumer = only_consumer && (c == j || !same_phase(c));
      bool others_ready = true;
      for (size_t q : ps)
        others_ready = others_ready && (q == p || q < h);
      const Op& head = g.ops[h];
      bool allowed = is_matrix_kind(head.kind) ? policy == FusionPolicy::xla : joins_chains(head.kind);
      if (!only_consumer || !others_ready || !allowed)
        continue;
      gr.head[j] = h;
      gr.members[h].push_back(j);
      gr.members[j].clear();
      closed[h] = op.kind == OpKind::reduction;
      break;
    }
  }
  return gr;
}

bool xla_named(FusionPolicy p) { return p == FusionPolicy::xla || p == FusionPolicy::xla_gpu; }

std::string fusion_kind(const Op& head, bool has_reduction, FusionPolicy policy) {
  if (xla_named(policy))
    return is_matrix_kind(head.kind) ? "output fusion" : has_reduction ? "input fusion" : "loop fusion";
  return has_reduction ? "reduction" : "pointwise";
}

// One op for a group: bytes of the tensors passed inside it are dropped.
Op fused_op(const OpGraph& g, const std::vector<size_t>& members, const std::vector<std::vector<size_t>>& consumers,
            FusionPolicy policy, int number) {
  const Op& head = g.ops[members.front()];
  const Op& tail = g.ops[members.back()];
  Op f = head;
  f.kernels = 1; // the fusion's one kernel
  f.flops = Flops(0.0);
  f.owned_parameters = 0.0;
  f.owned_tensors = 0;
  f.out_dtype = tail.out_dtype;
  double in_bytes = 0, out_bytes = 0, param_bytes = 0;
  bool has_reduction = false;
  for (size_t idx = 0; idx < members.size(); ++idx) {
    const Op& m = g.ops[members[idx]];
    f.flops += m.flops;
    f.owned_parameters += m.owned_parameters;
    f.owned_tensors += m.owned_tensors;
    f.reads_model_input = f.reads_model_input || m.reads_model_input;
    has_reduction = has_reduction || m.kind == OpKind::reduction;
    f.fused.push_back(m.name);
    in_bytes += (element_size(m.in_dtype) * m.in_elements).value();
    param_bytes += (element_size(m.param_dtype) * m.param_elements).value();
    double written = (element_size(m.out_dtype) * m.out_elements).value();
    bool last = idx + 1 == members.size();
    bool read_outside = last; // the group's result
    for (size_t c : consumers[members[idx]])
      read_outside = read_outside || c != members[idx + 1]; // e.g. an activation saved for backward
    if (!last)
      in_bytes -= written; // the next member reads it from registers, not HBM
    if (read_outside)
      out_bytes += written;
  }
  f.in_elements = std::max(0.0, in_bytes) / element_size(f.in_dtype).value();
  f.out_elements = out_bytes / element_size(f.out_dtype).value();
  f.param_elements = param_bytes / element_size(f.param_dtype).value();
  f.fusion = fusion_kind(head, has_reduction, policy);
  if (xla_named(policy))
    f.name = fmt::format("fusion.{}", number);
  else
    f.name = fmt::format("triton_{}_fused_{}_{}", has_reduction ? "red" : "poi", head.layer, number);
  f.note = head.note.empty() ? tail.note : head.note;
  return f;
}

} // namespace

TrainingGraph fuse_ops(const TrainingGraph& t, FusionPolicy policy) {
  if (policy == FusionPolicy::none)
    return t;
  const OpGraph& g = t.graph;
  const size_t n = g.ops.size();
  Groups gr = find_groups(g, policy);
  std::vector<std::vector<size_t>> consumers(n);
  for (const auto& e : g.edges)
    consumers[e.from].push_back(e.to);

  TrainingGraph out;
  std::vector<size_t> new_index(n);
  int number = 0;
  for (size_t h = 0; h < n; ++h) {
    if (gr.members[h].empty())
      continue; // a member of an earlier head's group
    Op op = gr.members[h].size() == 1 ? g.ops[h] : fused_op(g, gr.members[h], consumers, policy, number++);
    // The compiler emits every kernel but the library calls it keeps (a conv or dot under xla_gpu and
    // torch_compile), fused or alone: XLA expands a batch norm into reductions, so does Inductor.
    op.compiled = policy == FusionPolicy::xla || !is_matrix_kind(op.kind);
    size_t at = out.graph.add(std::move(op));
    for (size_t m : gr.members[h])
      new_index[m] = at;
  }
  for (const auto& e : g.edges)
    if (new_index[e.from] != new_index[e.to])
      out.graph.connect(new_index[e.from], new_index[e.to], e.weight);
  auto first_at_or_after = [&](size_t old) { return old < n ? new_index[old] : out.graph.ops.size(); };
  out.backward_begin = first_at_or_after(t.backward_begin);
  out.accumulate_begin = first_at_or_after(t.accumulate_begin);
  out.optimizer_begin = first_at_or_after(t.optimizer_begin);
  for (const auto& grad : t.gradients)
    out.gradients.push_back({new_index[grad.op], grad.parameters, grad.tensors});
  return out;
}

} // namespace mlsim
