#include "sim/pipeline/step_graph/backward_rules.hpp"

#include <algorithm>
#include <limits>

namespace mlsim {

int optimizer_state_tensors(Optimizer o) {
  switch (o) {
  case Optimizer::sgd: return 0;
  case Optimizer::momentum: return 1;
  case Optimizer::rmsprop: return 1;
  case Optimizer::adam: return 2;
  case Optimizer::lamb: return 2; // Adam's two moments
  }
  return 0;
}

UpdatePasses update_passes(Optimizer optimizer, OptimizerKernels kernels) {
  const double states = optimizer_state_tensors(optimizer);
  UpdatePasses p{1, 2.0 + states, 1.0 + states}; // fused: weights, gradient, state in; weights, state out
  // Fused LAMB (apex's FusedLAMB): stage 1 reads gradient, moments and weights and writes the moments and the
  // update; the norms read the weights and the update; stage 2 reads both and writes the weights.
  if (optimizer == Optimizer::lamb)
    p = {1, 4.0 + 2.0 + 2.0, 3.0 + 1.0};
  if (kernels == OptimizerKernels::per_op) {
    switch (optimizer) {
    case Optimizer::sgd: p = {1, 2.0, 1.0}; break;
    case Optimizer::momentum: p = {3, 5.0, 3.0}; break;
    case Optimizer::rmsprop: p = {5, 8.0, 5.0}; break;
    case Optimizer::adam: p = {8, 12.0, 8.0}; break;
    // Adam's eight, then norm(w), norm(u), u += wd w, w -= lr ratio u: two reductions and two axpys.
    case Optimizer::lamb: p = {12, 18.0, 10.0}; break;
    }
  }
  return p;
}

namespace {
constexpr size_t kNone = std::numeric_limits<size_t>::max();

// FLOPs per weight of one update step (a few multiply-adds and, for RMSprop/Adam, a sqrt and a division).
double optimizer_flops_per_weight(Optimizer o) {
  switch (o) {
  case Optimizer::sgd: return 2.0;
  case Optimizer::momentum: return 4.0;
  case Optimizer::rmsprop: return 6.0;
  case Optimizer::adam: return 12.0;
  case Optimizer::lamb: return 18.0; // Adam's, two squared norms, the weight decay and the scaled step
  }
  return 2.0;
}

Op backward_of(const Op& fwd, const std::string& suffix) {
  Op b = fwd;
  b.name = fwd.name + "/" + suffix;
  b.phase = Phase::backward;
  b.owned_parameters = 0.0;
  b.in_dtype = fwd.out_dtype;
  b.out_dtype = fwd.in_dtype;
  b.reads_model_input = false;
  return b;
}

} // namespace

Op input_gradient(const Op& fwd) {
  Op b = backward_of(fwd, "dgrad");
  b.in_elements = fwd.out_elements;
  b.out_elements = fwd.in_elements;
  b.param_elements = fwd.param_elements; // reads the weights
  auto& d = b.dims;
  if (fwd.kind == OpKind::conv && d.count("in_channels")) {
    long kernel_area = d["k"] / std::max(1L, d["in_channels"]);
    std::swap(d["in_channels"], d["out_channels"]);
    d["n"] = d["out_channels"];
    d["k"] = d["in_channels"] * kernel_area;
  } else if (d.count("n") && d.count("k")) {
    std::swap(d["n"], d["k"]);
  }
  return b;
}

Op weight_gradient(const Op& fwd) {
  Op b = backward_of(fwd, "wgrad");
  b.in_elements = fwd.out_elements + fwd.in_elements; // output gradient and saved input
  b.out_elements = 0.0;
  b.param_elements = fwd.owned_parameters; // writes the weight gradient
  b.weight_gradient = true;
  return b;
}

// FlashAttention's backward (Dao 2023, FlashAttention-2, section 3.2): recomputes the scores from Q and K and runs
// five GEMMs to the forward's two, 2.5x its FLOPs; reads Q, K, V, the output and its gradient (and the row
// statistics), writes the gradients of Q, K and V.
Op fused_attention_gradient(const Op& fwd) {
  Op b = backward_of(fwd, "grad");
  b.flops = fwd.flops * 2.5;
  const double context = fwd.in_elements / 3.0; // B S D
  b.in_elements = fwd.in_elements + fwd.out_elements + context;
  b.out_elements = fwd.in_elements;
  b.param_elements = 0.0;
  return b;
}

Op generic_gradient(const Op& fwd) {
  Op b = backward_of(fwd, fwd.kind == OpKind::cast ? "cast_back" : "grad");
  if (fwd.kind == OpKind::cast) {
    b.in_elements = fwd.out_elements;
    b.out_elements = fwd.in_elements;
  } else {
    b.in_elements = fwd.out_elements + fwd.in_elements;
    b.out_elements = fwd.in_elements;
    b.param_elements = fwd.owned_parameters; // parameter gradients (norm scales, embedding tables)
  }
  if (fwd.statistics_pass) { // a reduction pass over input and output gradient, then the elementwise pass
    b.in_elements = 2.0 * fwd.out_elements + fwd.in_elements; // fwd.in_elements counts the input twice already
    b.out_elements = fwd.out_elements;
  }
  return b;
}

namespace {

// The sum of the gradients that reach an output read by several ops (autograd accumulates them, one add each).
Op gradient_sum(const Op& fwd, size_t gradients) {
  Op b = backward_of(fwd, "grad_sum");
  b.kind = OpKind::elementwise;
  b.in_dtype = b.out_dtype = b.compute_dtype = fwd.out_dtype;
  b.in_elements = fwd.out_elements * static_cast<double>(gradients);
  b.out_elements = fwd.out_elements;
  b.param_elements = 0.0;
  b.flops = Flops(fwd.out_elements * static_cast<double>(gradients - 1));
  b.dims.clear();
  b.statistics_pass = b.gradient_passes_through = b.channel_statistics = b.argmax_pool = false;
  return b;
}
} // namespace

TrainingGraph add_backward_and_optimizer(const OpGraph& forward, Optimizer optimizer, DType master, OptimizerRun run) {
  TrainingGraph t;
  t.graph = forward;
  OpGraph& g = t.graph;
  size_t n = forward.ops.size();

  std::vector<bool> needs_grad(n, false);
  for (const auto& e : forward.edges)
    if (e.weight)
      needs_grad[e.from] = true;
  for (size_t i = 0; i < n; ++i) {
    needs_grad[i] = needs_grad[i] || forward.ops[i].owned_parameters > 0;
    for (size_t p : forward.producers(i))
      needs_grad[i] = needs_grad[i] || needs_grad[p];
  }

  t.backward_begin = g.ops.size();
  std::vector<size_t> grad_in(n, kNone), grad_w(n, kNone);
  for (size_t r = n; r-- > 0;) {
    if (!needs_grad[r])
      continue;
    const Op& fwd = forward.ops[r];
    std::vector<size_t> upstream;
    for (const auto& e : forward.edges)
      if (e.from == r) {
        size_t u = e.weight ? grad_w[e.to] : grad_in[e.to];
        if (u != kNone)
          upstream.push_back(u);
      }
    if (upstream.size() > 1) {
      size_t sum = g.add(gradient_sum(fwd, upstream.size()));
      for (size_t u : upstream)
        g.connect(u, sum);
      upstream = {sum};
    }
    if (fwd.gradient_passes_through) {
      grad_in[r] = grad_w[r] = upstream.empty() ? kNone : upstream.front();
      continue;
    }
    bool upstream_needs = false;
    for (size_t p : forward.producers(r))
      upstream_needs = upstream_needs || needs_grad[p];
    std::vector<size_t> made;
    if (fwd.fused_attention) {
      made.push_back(grad_in[r] = g.add(fused_attention_gradient(fwd)));
    } else if (is_matrix_kind(fwd.kind)) {
      if (upstream_needs)
        made.push_back(grad_in[r] = g.add(input_gradient(fwd)));
      bool has_weights = fwd.param_elements > 0; // tied weights (no owned parameters) still get a gradient
      if (has_weights)
        made.push_back(grad_w[r] = g.add(weight_gradient(fwd)));
    } else {
      size_t b = g.add(generic_gradient(fwd));
      made.push_back(b);
      grad_in[r] = grad_w[r] = b;
    }
    for (size_t b : made) {
      g.connect(r, b); // saved activations
      for (size_t u : upstream)
        g.connect(u, b);
    }
  }

  for (size_t i = 0; i < n; ++i) {
    const Op& fwd = forward.ops[i];
    if (fwd.owned_parameters <= 0)
      continue;
    auto weight_sources = forward.producers(i, true);
    size_t ready = weight_sources.empty() ? grad_w[i] : grad_w[weight_sources.front()];
    t.gradients.push_back({ready, fwd.owned_parameters, std::max(1, fwd.owned_tensors)});
  }
  std::sort(t.gradients.begin(), t.gradients.end(),
            [](const GradientReady& a, const GradientReady& b) { return a.op < b.op; });

  // AccumulateGrad's in-place adds (backward_rules.hpp), each after the op that completes its gradients.
  t.accumulate_begin = g.ops.size();
  std::vector<size_t> gradient_source;
  for (const auto& grad : t.gradients) {
    gradient_source.push_back(grad.op);
    if (!run.accumulate)
      continue;
    Op a;
    a.layer = g.ops[grad.op].layer;
    a.name = a.layer + "/accumulate_grad";
    a.kind = OpKind::elementwise;
    a.phase = Phase::accumulate;
    a.placement = g.ops[grad.op].placement;
    a.compute_dtype = a.in_dtype = a.out_dtype = a.param_dtype = master;
    a.in_elements = 2.0 * grad.parameters; // the held gradient and the new one
    a.out_elements = grad.parameters;
    a.kernels = grad.tensors;
    a.flops = Flops(grad.parameters);
    gradient_source.back() = g.add(a);
    g.connect(grad.op, gradient_source.back());
  }

  t.optimizer_begin = g.ops.size();
  const UpdatePasses passes = update_passes(optimizer, run.kernels);
  const bool zero_fill = run.zero_grad == ZeroGrad::zero_fill;
  for (size_t k = 0; k < t.gradients.size(); ++k) {
    const auto& grad = t.gradients[k];
    Op u;
    u.layer = g.ops[grad.op].layer;
    u.name = u.layer + "/update_" + to_string(optimizer);
    u.kind = OpKind::elementwise;
    u.phase = Phase::optimizer;
    u.placement = g.ops[grad.op].placement;
    u.compute_dtype = u.in_dtype = u.out_dtype = u.param_dtype = master;
    u.in_elements = grad.parameters * passes.reads;
    u.out_elements = grad.parameters * (passes.writes + (zero_fill ? 1.0 : 0.0)); // the fill writes the gradient
    if (run.write_back_16bit) // the fp16 model weights from the masters: 2 bytes a weight, in master units
      u.out_elements += grad.parameters * element_size(DType::fp16).value() / element_size(master).value();
    // Fused: one kernel for the group; per op: each step of the update over each tensor in turn; a fill per tensor.
    u.kernels = (run.kernels == OptimizerKernels::per_op ? passes.kernels * grad.tensors : 1) +
                (zero_fill ? grad.tensors : 0) +
                (run.write_back_16bit ? (run.kernels == OptimizerKernels::per_op ? grad.tensors : 1) : 0);
    u.flops = Flops(grad.parameters * optimizer_flops_per_weight(optimizer));
    g.connect(gradient_source[k], g.add(u));
  }
  return t;
}

} // namespace mlsim
