// The accelerator and its kernel model, from YAML (hardware_load.hpp).
#include "sim/core/run/load/hardware_load.hpp"

#include "sim/core/run/load/preset_library.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <vector>

namespace mlsim {

namespace {
const std::vector<std::string> kDimNames{"batch", "m", "n", "k", "in_channels", "out_channels"};
const std::vector<std::string> kOpKinds{"matmul", "conv", "elementwise", "reduction", "cast", "copy", "collective"};

std::map<DType, FlopsPerSec> parse_peaks(const ConfigNode& node) {
  std::map<DType, FlopsPerSec> peaks;
  if (!node.defined())
    return peaks;
  node.allow_only({"fp32", "tf32", "fp16", "bf16"});
  for (const auto& key : node.keys()) {
    ConfigNode c = node.child(key);
    peaks[ConfigNode(YAML::Node(key), c.path(), nullptr).as_enum<DType>()] = node.get_quantity<FlopsPerSec>(key);
  }
  return peaks;
}

std::vector<std::string> parse_dim_names(const ConfigNode& list) {
  std::vector<std::string> out;
  std::string expected = "a list of dim names (batch, m, n, k, in_channels, out_channels)";
  if (!list.is_sequence())
    list.fail(expected, list.quoted());
  for (const auto& item : list.items()) {
    std::string name = item.as_string();
    if (std::find(kDimNames.begin(), kDimNames.end(), name) == kDimNames.end())
      item.fail(expected, item.quoted());
    out.push_back(name);
  }
  return out;
}

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
    out[ConfigNode(YAML::Node(key), node.child(key).path(), nullptr).as_enum<DType>()] =
        node.get_number(key, std::nullopt, 0.01, 1.0);
  return out;
}
} // namespace

AcceleratorSpec parse_accelerator(const ConfigNode& node) {
  node.allow_only({"preset", "count", "name", "source", "matrix_peak", "vector_peak", "fast_path_alignment",
                   "fast_path_dims", "matrix_unit_size", "matrix_unit_dims", "memory_bandwidth", "memory_size",
                   "launch_overhead", "boost_clock", "efficiency", "kernels", "nvlink"});
  AcceleratorSpec a;
  a.name = node.get_string("name", node.has("preset") ? node.get_string("preset") : "accelerator");
  a.matrix_peak = parse_peaks(node.child("matrix_peak"));
  a.vector_peak = parse_peaks(node.child("vector_peak"));
  if (!a.vector_peak.count(DType::fp32))
    node.missing("vector_peak.fp32", "the fp32 peak of the vector path");
  a.fast_path_alignment = static_cast<int>(node.get_integer("fast_path_alignment", 0, 0, 1024));
  a.matrix_unit_size = static_cast<int>(node.get_integer("matrix_unit_size", 0, 0, 4096));
  if (a.fast_path_alignment > 0 && a.matrix_unit_size > 0)
    node.fail("either fast_path_alignment (tensor cores) or matrix_unit_size (a matrix unit), not both",
              "both");
  if (ConfigNode dims = node.child("fast_path_dims"); dims.defined()) {
    dims.allow_only({"conv", "matmul"});
    for (const auto& kind : dims.keys())
      a.fast_path_dims[kind] = parse_dim_names(dims.child(kind));
  }
  if (ConfigNode dims = node.child("matrix_unit_dims"); dims.defined())
    a.matrix_unit_dims = parse_dim_names(dims);
  a.memory_bandwidth = node.get_quantity<BytesPerSec>("memory_bandwidth");
  a.memory_size = node.get_quantity<Bytes>("memory_size");
  a.launch_overhead = node.get_quantity<Seconds>("launch_overhead", Seconds(5e-6), false);
  a.boost_clock = node.get_quantity<Hertz>("boost_clock", Hertz(0.0), false);
  if (ConfigNode eff = node.child("efficiency"); eff.defined()) {
    eff.allow_only(kOpKinds);
    for (const auto& k : eff.keys())
      a.efficiency[k] = eff.get_number(k, std::nullopt, 0.001, 1.0);
  }
  a.kernels = parse_kernel_params(node.child("kernels"));
  return a;
}

KernelParams parse_kernel_params(const ConfigNode& node) {
  KernelParams p;
  if (!node.defined())
    return p;
  node.allow_only({"source", "sm_count", "matrix_tiles", "vector_tiles", "saturating_reuse",
                   "vector_saturating_reuse", "matrix_fraction", "vector_fraction", "memory_fraction",
                   "memory_latency", "norm_fraction", "norm_latency", "norm_channel_rate", "conv_efficiency",
                   "attention_fraction"});
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
  if (ConfigNode f = node.child("norm_fraction"); f.defined()) {
    f.allow_only({"nhwc", "nchw"});
    for (const auto& layout : f.keys())
      p.norm_fraction[layout] = f.get_number(layout, std::nullopt, 0.01, 1.0);
  }
  if (ConfigNode l = node.child("norm_latency"); l.defined()) {
    l.allow_only({"nhwc", "nchw"});
    for (const auto& layout : l.keys())
      p.norm_latency[layout] = l.get_quantity<Seconds>(layout, Seconds(0.0), false);
  }
  if (ConfigNode r = node.child("norm_channel_rate"); r.defined()) { // bytes per SM cycle, a plain number
    r.allow_only({"fwd", "bwd"});
    for (const auto& pass : r.keys())
      p.norm_channel_rate[pass] = r.get_number(pass, std::nullopt, 0.01, 4096.0);
  }
  p.conv_efficiency = parse_fractions(node.child("conv_efficiency"));
  p.attention_fraction = node.get_number("attention_fraction", 0.0, 0.0, 1.0);
  return p;
}

AcceleratorSpec accelerator_preset(const std::string& name) {
  YAML::Node user(YAML::NodeType::Map);
  user["preset"] = name;
  auto source = std::make_shared<ConfigSource>();
  source->file = "accelerator preset '" + name + "'";
  ConfigNode node(user, "accelerator", source);
  return parse_accelerator(resolve_preset(node, "accelerators", "accelerator"));
}

} // namespace mlsim
