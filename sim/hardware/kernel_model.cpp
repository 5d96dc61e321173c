#include "sim/hardware/kernel_model.hpp"

#include "sim/hardware/accelerator.hpp"

#include <algorithm>
#include <cmath>

namespace mlsim {

namespace {
double fraction_for(const std::map<DType, double>& m, DType d) {
  if (auto it = m.find(d); it != m.end())
    return it->second;
  // bf16 runs the fp16 datapath (same peak on every GPU preset); tf32 has no vector path of its own.
  if (d == DType::bf16)
    if (auto it = m.find(DType::fp16); it != m.end())
      return it->second;
  if (d == DType::tf32)
    if (auto it = m.find(DType::fp32); it != m.end())
      return it->second;
  return 1.0;
}

double tile_area(const std::pair<int, int>& t) { return static_cast<double>(t.first) * t.second; }
} // namespace

double KernelParams::matrix_fraction_for(DType d) const { return fraction_for(matrix_fraction, d); }
double KernelParams::vector_fraction_for(DType d) const { return fraction_for(vector_fraction, d); }

GemmTiming gemm_time(const KernelParams& p, bool matrix_path, double m, double n, double k, FlopsPerSec peak,
                     double fraction, BytesPerSec memory_rate) {
  const auto& tiles = matrix_path ? p.matrix_tiles : p.vector_tiles;
  const double saturating = matrix_path ? p.saturating_reuse : p.vector_saturating_reuse;
  GemmTiming best;
  if (!p.has_tiles() || tiles.empty() || m <= 0 || n <= 0 || k <= 0 || peak.value() <= 0) {
    best.compute = Flops(2.0 * m * n * k) / (peak * fraction);
    best.fraction = fraction;
    return best;
  }
  double largest = 0;
  for (const auto& t : tiles)
    largest = std::max(largest, tile_area(t));
  const double sms = p.sm_count;
  const double per_sm = peak.value() / sms;
  bool first = true;
  for (const auto& t : tiles) {
    const double tm = t.first, tn = t.second;
    const double slots = std::max(1.0, std::floor(largest / tile_area(t)));
    const double reuse = std::min(1.0, (tm * tn / (tm + tn)) / saturating);
    const double out_tiles = std::ceil(m / tm) * std::ceil(n / tn);
    for (int split = 1; split <= 16; split *= 2) {
      if (split > 1 && (out_tiles * split / 2 >= sms * slots || k / split < 64))
        break; // split-k only fills an under-filled machine, and keeps a useful depth per slice
      const double kk = std::ceil(k / split);
      const double waves = std::ceil(out_tiles * split / (sms * slots));
      GemmTiming g;
      g.tile_m = t.first;
      g.tile_n = t.second;
      g.split_k = split;
      g.waves = waves;
      g.fraction = fraction * reuse;
      g.compute = Seconds(waves * slots * 2.0 * tm * tn * kk / (per_sm * g.fraction));
      if (split > 1 && memory_rate.value() > 0)
        g.reduction = Bytes(split * m * n * 4.0) / memory_rate; // fp32 partial sums written and reduced
      g.quantisation = (m * n * k) / (waves * sms * slots * tm * tn * kk);
      if (first || g.total() < best.total())
        best = g;
      first = false;
    }
  }
  return best;
}

WinogradTiming winograd_conv_time(const KernelParams& p, const WinogradConv& c, FlopsPerSec peak, double fraction,
                                  BytesPerSec memory_rate, Seconds launch) {
  WinogradTiming best;
  bool first = true;
  auto over_hbm = [&](Bytes b) { return p.memory_latency + b / memory_rate; };
  auto moved = [&](double elements) { return over_hbm(Bytes(elements * c.element_bytes)); };
  for (int m : {2, 4}) {
    const double points = (m + 2.0) * (m + 2.0);
    const double tiles = c.batch * std::ceil(c.out_height / m) * std::ceil(c.out_width / m);
    // Forward / data gradient: per point, [tiles x C_in] x [C_in x C_out]; weight gradient: [C_in x tiles] x
    // [tiles x C_out]. The batch of `points` GEMMs counts into m, as gemm_view does for batched GEMMs.
    GemmTiming g = c.weight_gradient
        ? gemm_time(p, false, points * c.in_channels, c.out_channels, tiles, peak, fraction, memory_rate)
        : gemm_time(p, false, points * tiles, c.out_channels, c.in_channels, peak, fraction, memory_rate);
    const double x = c.batch * c.out_height * c.out_width * c.in_channels; // stride 1, same padding: H x W in and out
    const double y = c.batch * c.out_height * c.out_width * c.out_channels;
    const double u = points * tiles * c.in_channels, v = points * tiles * c.out_channels;
    // Non-fused: transform both operands into HBM, the GEMMs read them, then the inverse transform (forward and data
    // gradient) or a small filter-sized result (weight gradient).
    Seconds unfused = c.weight_gradient
                          ? moved(x + u) + moved(y + v) + max(g.total(), moved(u + v)) + launch * 2.0
                          : moved(x + u) + max(g.total(), moved(u + v)) + moved(v + y) + launch * 2.0;
    WinogradTiming t{unfused, m, false, g};
    if (first || t.total < best.total)
      best = t;
    first = false;
    if (m == 2 && !c.weight_gradient) { // the fused kernel keeps the 4x4 transformed tiles on chip
      WinogradTiming f{max(g.total(), over_hbm(c.direct_bytes)), m, true, g};
      if (f.total < best.total)
        best = f;
    }
  }
  return best;
}

Seconds memory_time(const KernelParams& p, Bytes bytes, BytesPerSec bandwidth) {
  if (bandwidth.value() <= 0 || bytes.value() <= 0)
    return Seconds(0.0);
  return p.memory_latency + bytes / (bandwidth * p.memory_fraction);
}

std::optional<BatchNormTiming> batch_norm_time(const KernelParams& p, Bytes bytes, BytesPerSec bandwidth,
                                               Hertz clock, bool nchw, bool backward, double channels) {
  if (bandwidth.value() <= 0)
    return std::nullopt;
  const std::string layout = nchw ? "nchw" : "nhwc";
  auto f = p.norm_fraction.find(layout);
  auto c = nchw ? p.norm_channel_rate.find(backward ? "bwd" : "fwd") : p.norm_channel_rate.end();
  const bool channel_limited = c != p.norm_channel_rate.end() && clock.value() > 0 && channels > 0;
  if (f == p.norm_fraction.end() && !channel_limited)
    return std::nullopt;
  BatchNormTiming t;
  t.rate = bandwidth * (f == p.norm_fraction.end() ? p.memory_fraction : f->second);
  if (channel_limited) {
    const BytesPerSec channels_rate(channels * c->second * clock.value());
    if (channels_rate < t.rate) {
      t.rate = channels_rate;
      t.channel_bound = true;
    }
  }
  t.hbm_share = t.rate / bandwidth;
  auto l = p.norm_latency.find(layout);
  t.total = (l == p.norm_latency.end() ? p.memory_latency : l->second) + bytes / t.rate;
  return t;
}

} // namespace mlsim
