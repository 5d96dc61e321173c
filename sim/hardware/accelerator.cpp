#include "sim/hardware/accelerator.hpp"

#include "sim/hardware/preset_library.hpp"

#include <algorithm>
#include <memory>

namespace mlsim {

std::string to_string(DType d) {
  switch (d) {
  case DType::fp32: return "fp32";
  case DType::tf32: return "tf32";
  case DType::fp16: return "fp16";
  case DType::bf16: return "bf16";
  }
  return "?";
}

DType parse_dtype(const ConfigNode& node) {
  std::string s = node.as_string();
  if (s == "fp32") return DType::fp32;
  if (s == "tf32") return DType::tf32;
  if (s == "fp16") return DType::fp16;
  if (s == "bf16") return DType::bf16;
  node.fail("one of fp32, tf32, fp16, bf16", node.quoted());
}

Bytes element_size(DType d) { return Bytes(is_16bit(d) ? 2.0 : 4.0); }

FlopsPerSec AcceleratorSpec::vector_peak_for(DType d) const {
  if (auto it = vector_peak.find(d); it != vector_peak.end())
    return it->second;
  return vector_peak.at(DType::fp32);
}

std::optional<FlopsPerSec> AcceleratorSpec::matrix_peak_for(DType d) const {
  if (auto it = matrix_peak.find(d); it != matrix_peak.end())
    return it->second;
  return std::nullopt;
}

double AcceleratorSpec::efficiency_for(const std::string& kind) const {
  auto it = efficiency.find(kind);
  return it == efficiency.end() ? 1.0 : it->second;
}

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
    peaks[parse_dtype(ConfigNode(YAML::Node(key), c.path(), nullptr))] = node.get_quantity<FlopsPerSec>(key);
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
} // namespace

AcceleratorSpec parse_accelerator(const ConfigNode& node) {
  node.allow_only({"preset", "count", "name", "source", "matrix_peak", "vector_peak", "fast_path_alignment",
                   "fast_path_dims", "matrix_unit_size", "matrix_unit_dims", "memory_bandwidth", "memory_size",
                   "launch_overhead", "efficiency", "kernels", "nvlink"});
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
  if (ConfigNode eff = node.child("efficiency"); eff.defined()) {
    eff.allow_only(kOpKinds);
    for (const auto& k : eff.keys())
      a.efficiency[k] = eff.get_number(k, std::nullopt, 0.001, 1.0);
  }
  a.kernels = parse_kernel_params(node.child("kernels"));
  return a;
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
