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

Seconds memory_time(const KernelParams& p, Bytes bytes, BytesPerSec bandwidth) {
  if (bandwidth.value() <= 0 || bytes.value() <= 0)
    return Seconds(0.0);
  return p.memory_latency + bytes / (bandwidth * p.memory_fraction);
}

namespace {
std::vector<std::pair<int, int>> parse_tiles(const ConfigNode& list) {
  std::vector<std::pair<int, int>> out;
  const std::string expected = "a list of tiles [rows, cols], e.g. [[256, 128], [128, 128]]";
  if (!list.is_sequence())
    list.fail(expected, list.quoted());
  for (const auto& item : list.items()) {
    auto dims = item.is_sequence() ? item.items() : std::vector<ConfigNode>{};
    if (dims.size() != 2)
      item.fail(expected, item.quoted());
    long long a = dims[0].as_integer(), b = dims[1].as_integer();
    if (a < 8 || b < 8 || a > 1024 || b > 1024)
      item.fail("tile sides between 8 and 1024", item.quoted());
    out.emplace_back(static_cast<int>(a), static_cast<int>(b));
  }
  return out;
}

std::map<DType, double> parse_fractions(const ConfigNode& node) {
  std::map<DType, double> out;
  if (!node.defined())
    return out;
  node.allow_only({"fp32", "tf32", "fp16", "bf16"});
  for (const auto& key : node.keys())
    out[parse_dtype(ConfigNode(YAML::Node(key), node.child(key).path(), nullptr))] =
        node.get_number(key, std::nullopt, 0.01, 1.0);
  return out;
}
} // namespace

KernelParams parse_kernel_params(const ConfigNode& node) {
  KernelParams p;
  if (!node.defined())
    return p;
  node.allow_only({"source", "sm_count", "matrix_tiles", "vector_tiles", "saturating_reuse",
                   "vector_saturating_reuse", "matrix_fraction", "vector_fraction", "memory_fraction",
                   "memory_latency"});
  p.source = node.get_string("source", "");
  p.sm_count = static_cast<int>(node.get_integer("sm_count", 0, 0, 100000));
  if (node.has("matrix_tiles"))
    p.matrix_tiles = parse_tiles(node.child("matrix_tiles"));
  if (node.has("vector_tiles"))
    p.vector_tiles = parse_tiles(node.child("vector_tiles"));
  if (p.sm_count > 0 && p.matrix_tiles.empty() && p.vector_tiles.empty())
    node.missing("matrix_tiles", "the CTA tiles the kernel library uses (sm_count alone says nothing)");
  p.saturating_reuse = node.get_number("saturating_reuse", 64.0, 1.0, 1024.0);
  p.vector_saturating_reuse = node.get_number("vector_saturating_reuse", 16.0, 1.0, 1024.0);
  p.matrix_fraction = parse_fractions(node.child("matrix_fraction"));
  p.vector_fraction = parse_fractions(node.child("vector_fraction"));
  p.memory_fraction = node.get_number("memory_fraction", 1.0, 0.01, 1.0);
  p.memory_latency = node.get_quantity<Seconds>("memory_latency", Seconds(0.0), false);
  return p;
}

} // namespace mlsim
