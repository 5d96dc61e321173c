#include "sim/pipeline/step_graph/op_cost.hpp"

#include "sim/core/base/units_parse.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>

namespace mlsim {

bool meets_alignment(const Op& op, const AcceleratorSpec& acc) {
  if (acc.fast_path_alignment <= 0)
    return true;
  auto rule = acc.fast_path_dims.find(to_string(op.kind));
  if (rule == acc.fast_path_dims.end())
    return true;
  for (const auto& dim : rule->second) {
    auto it = op.dims.find(dim);
    if (it != op.dims.end() && it->second % acc.fast_path_alignment != 0)
      return false;
  }
  return true;
}

double matrix_unit_padding(const Op& op, const AcceleratorSpec& acc) {
  if (acc.matrix_unit_size <= 0)
    return 1.0;
  double factor = 1.0;
  double size = acc.matrix_unit_size;
  for (const auto& dim : acc.matrix_unit_dims) {
    auto it = op.dims.find(dim);
    if (it == op.dims.end() || it->second <= 0)
      continue;
    double d = static_cast<double>(it->second);
    factor *= std::ceil(d / size) * size / d;
  }
  return factor;
}

namespace {
double dim(const Op& op, const char* name) {
  auto it = op.dims.find(name);
  return it == op.dims.end() ? 0.0 : static_cast<double>(it->second);
}

// The op as one GEMM m x n x k: a batched GEMM (FLOPs > 2mnk) counts its extra multiplicity into m.
bool gemm_view(const Op& op, double& m, double& n, double& k) {
  m = dim(op, "m"), n = dim(op, "n"), k = dim(op, "k");
  if (!is_matrix_kind(op.kind) || m <= 0 || n <= 0 || k <= 0)
    return false;
  m *= std::max(1.0, op.flops.value() / (2.0 * m * n * k));
  return true;
}

// cuDNN offers Winograd for 3x3 stride-1 convolutions and its autotuner (cudnn.benchmark, TensorFlow's default)
// takes it when it is faster than the implicit GEMM. Only on the vector path: cuDNN's tensor-core convolutions are
// implicit GEMMs.
std::optional<WinogradTiming> winograd(const Op& op, const AcceleratorSpec& acc, bool matrix_path, FlopsPerSec peak,
                                       double fraction, Bytes bytes) {
  auto get = [&](const char* name) { return dim(op, name); };
  const KernelParams& kp = acc.kernels;
  if (op.kind != OpKind::conv || matrix_path || !kp.has_tiles() || kp.vector_tiles.empty() ||
      acc.matrix_unit_size > 0 || get("kernel_size") != 3 || get("stride") != 1 || get("out_height") <= 0 ||
      get("groups") > 1) // Winograd's transformed GEMMs are per group too; not modelled for grouped convs
    return std::nullopt;
  WinogradConv c{get("batch"), get("out_height"), get("out_width"), get("in_channels"), get("out_channels"),
                 op.weight_gradient, bytes, element_size(op.in_dtype).value()};
  return winograd_conv_time(kp, c, peak, fraction, acc.memory_bandwidth * kp.memory_fraction, acc.launch_overhead);
}

std::string gemm_why(const GemmTiming& g, int sms) {
  std::string s = fmt::format("tile {}x{}", g.tile_m, g.tile_n);
  if (g.split_k > 1)
    s += fmt::format(" split-k {}", g.split_k);
  return s + fmt::format(", {} wave{} over {} SMs, {:.0f} % of tile work useful, {:.0f} % of peak per tile", g.waves,
                         g.waves == 1 ? "" : "s", sms, 100 * g.quantisation, 100 * g.fraction);
}
} // namespace

OpCost cost_device_op(const Op& op, const AcceleratorSpec& acc) {
  OpCost c;
  c.bytes = op.bytes();
  auto matrix_peak = acc.matrix_peak_for(op.compute_dtype);
  bool matrix_candidate = is_matrix_kind(op.kind) && matrix_peak && !op.forced_vector_path;
  if (matrix_candidate && acc.matrix_unit_size > 0) {
    c.matrix_path = true;
    c.matrix_unit_utilization = 1.0 / matrix_unit_padding(op, acc);
  } else if (matrix_candidate && meets_alignment(op, acc)) {
    c.matrix_path = true;
  }
  c.path = c.matrix_path ? acc.matrix_path_name() : acc.vector_path_name();
  c.peak = c.matrix_path ? *matrix_peak : acc.vector_peak_for(op.compute_dtype);
  c.executed_flops = op.flops / c.matrix_unit_utilization;
  const KernelParams& kp = acc.kernels;
  double fraction = c.matrix_path ? kp.matrix_fraction_for(op.compute_dtype) : kp.vector_fraction_for(op.compute_dtype);
  const auto& tiles = c.matrix_path ? kp.matrix_tiles : kp.vector_tiles;
  Seconds compute = c.executed_flops / (c.peak * fraction);
  double m = 0, n = 0, k = 0;
  if (op.fused_attention && c.matrix_path && kp.attention_fraction > 0) {
    // A fused attention kernel at the fraction of the peak published for such kernels on this GPU.
    compute = c.executed_flops / (c.peak * kp.attention_fraction);
    c.why = fmt::format("fused attention kernel at {:.0f} % of peak (kernels.attention_fraction)",
                        100 * kp.attention_fraction);
  } else if (kp.has_tiles() && !tiles.empty() && acc.matrix_unit_size == 0 && gemm_view(op, m, n, k)) {
    GemmTiming g = gemm_time(kp, c.matrix_path, m, n, k, c.peak, fraction, acc.memory_bandwidth * kp.memory_fraction);
    compute = g.total();
    c.why = gemm_why(g, kp.sm_count);
  } else if (c.matrix_unit_utilization < 1.0) {
    c.why = fmt::format("padded to the {0}x{0} matrix unit: {1:.1f} % of executed FLOPs useful",
                        acc.matrix_unit_size, 100 * c.matrix_unit_utilization);
  }
  Seconds memory = memory_time(kp, c.bytes, acc.memory_bandwidth);
  // A batch norm as cuDNN runs it, where the profile measured its kernels (a fused one is the fusion's kernel, a
  // compiled one its compiler's reduction).
  std::optional<BatchNormTiming> norm;
  if (op.channel_statistics && op.fusion.empty() && !op.compiled)
    norm = batch_norm_time(kp, c.bytes, acc.memory_bandwidth, acc.boost_clock, op.nchw_activations,
                           op.phase == Phase::backward, dim(op, "channels"));
  if (norm)
    memory = norm->total;
  Seconds body = max(compute, memory);
  if (memory > compute && norm) {
    c.why = fmt::format("memory-bound cuDNN batch norm ({}): {} at {:.0f} % of HBM bandwidth",
                        op.nchw_activations ? "nchw" : "nhwc", format_bytes(c.bytes), 100 * norm->hbm_share);
    if (norm->channel_bound)
      c.why += fmt::format(", bound by its {:.0f} channels (one CTA each, {:.1f} GB/s a channel)",
                           dim(op, "channels"), norm->rate.value() / dim(op, "channels") / 1e9);
  } else if (memory > compute) {
    c.why = fmt::format("memory-bound: {} at {:.0f} % of HBM bandwidth", format_bytes(c.bytes),
                        100 * kp.memory_fraction);
  }
  if (auto w = winograd(op, acc, c.matrix_path, c.peak, fraction, c.bytes); w && w->total < body) {
    body = w->total;
    const double cut = 9.0 * w->tile * w->tile / ((w->tile + 2.0) * (w->tile + 2.0)); // multiplies saved
    c.why = fmt::format("Winograd F({0}x{0},3x3){1}: {2:.2f}x fewer multiplies; ", w->tile,
                        w->fused ? " fused" : " in 3 kernels", cut) +
            gemm_why(w->gemm, kp.sm_count);
  }
  // A grouped convolution also has direct kernels (cuDNN's grouped and depthwise kernels, PyTorch's depthwise
  // convolution) that fill no GEMM tiles: the vector path's rate on the useful FLOPs, or the memory roofline.
  // cudnn.benchmark takes one where it beats the batched implicit GEMM, whose tiles a few channels a group
  // leave mostly idle.
  bool direct = false;
  if (op.kind == OpKind::conv && dim(op, "groups") > 1 && acc.matrix_unit_size == 0) {
    FlopsPerSec vector_peak = acc.vector_peak_for(op.compute_dtype);
    Seconds direct_compute = op.flops / (vector_peak * kp.vector_fraction_for(op.compute_dtype));
    if (Seconds t = max(direct_compute, memory); t < body) {
      body = t;
      direct = true;
      c.matrix_path = false;
      c.path = acc.vector_path_name();
      c.peak = vector_peak;
      c.executed_flops = op.flops;
      c.why = fmt::format("direct grouped kernel ({} groups of {} channels): {}", dim(op, "groups"),
                          dim(op, "in_channels"),
                          memory > direct_compute ? fmt::format("memory-bound, {} at {:.0f} % of HBM bandwidth",
                                                                format_bytes(c.bytes), 100 * kp.memory_fraction)
                                                  : fmt::format("{:.0f} % of the vector peak",
                                                                100 * kp.vector_fraction_for(op.compute_dtype)));
    }
  }
  // A kernel bound by its instructions (the stack's max pool): its SM cycles over all SMs at the boost clock.
  if (op.sm_cycles > 0 && kp.sm_count > 0 && acc.boost_clock.value() > 0) {
    Seconds issue(op.sm_cycles / (kp.sm_count * acc.boost_clock.value()));
    if (issue > body) {
      body = issue;
      c.why = fmt::format("instruction-bound: the framework's max-pool kernel, {:.3g} SM cycles on {} SMs at {:.0f} MHz "
                          "({:.0f} % of HBM bandwidth)",
                          op.sm_cycles, kp.sm_count, acc.boost_clock.value() / 1e6,
                          100 * (c.bytes / issue / acc.memory_bandwidth));
    }
  }
  if (op.kind == OpKind::conv && acc.matrix_unit_size == 0 && !direct) // fitted to implicit GEMM and Winograd
    if (auto e = kp.conv_efficiency.find(op.compute_dtype); e != kp.conv_efficiency.end()) {
      body = body / e->second;
      c.why += fmt::format("; cuDNN at {:.0f} % of this (measured)", 100 * e->second);
    }
  // Each kernel of an op that launches several (a per-op optimizer update) pays the launch floor and waits
  // for its first memory access; its bytes are already the sum of their passes.
  const double extra_kernels = std::max(0, op.kernels - 1);
  c.duration = acc.launch_overhead * (1.0 + extra_kernels) + kp.memory_latency * extra_kernels +
               body / acc.efficiency_for(to_string(op.kind));
  if (op.kernels > 1)
    c.why += fmt::format("{}{} kernels, one after another", c.why.empty() ? "" : "; ", op.kernels);
  if (c.matrix_path && op.nchw_activations && acc.matrix_unit_size == 0) {
    // cuDNN's tensor-core convolutions compute in NHWC: each activation it reads or writes in NCHW is
    // transposed by a kernel of its own that reads and writes it once.
    Bytes moved = (element_size(op.in_dtype) * op.in_elements + element_size(op.out_dtype) * op.out_elements) * 2.0;
    double kernels = (op.in_elements > 0 ? 1.0 : 0.0) + (op.out_elements > 0 ? 1.0 : 0.0);
    c.duration += acc.launch_overhead * kernels + memory_time(kp, moved, acc.memory_bandwidth);
    c.bytes += moved;
    c.why += fmt::format("; NCHW<->NHWC transposes move {}", format_bytes(moved));
  }
  c.utilization = c.duration.value() > 0 ? (op.flops / c.duration) / c.peak : 0.0;
  return c;
}

OpCost cost_host_op(const Op& op, const HostSpeed& host) {
  OpCost c;
  c.path = "host";
  c.bytes = op.bytes();
  c.executed_flops = op.flops;
  c.peak = is_16bit(op.compute_dtype) ? host.core_peak / host.sixteen_bit_slowdown : host.core_peak;
  c.duration = op.flops / c.peak;
  c.utilization = 1.0;
  return c;
}

} // namespace mlsim
