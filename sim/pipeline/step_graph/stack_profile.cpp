#include "sim/pipeline/step_graph/stack_profile.hpp"

#include "sim/hardware/preset_library.hpp"

#include <memory>

namespace mlsim {

StackProfile parse_stack(const ConfigNode& user) {
  ConfigNode node = resolve_preset(user, "stacks", "stack");
  node.allow_only({"preset", "name", "source", "sixteen_bit", "tf32", "fusion", "allocator"});
  StackProfile s;
  s.name = node.get_string("name", user.is_scalar() ? user.as_string()
                                                    : node.get_string("preset", "inline stack"));
  s.source = node.get_string("source", "");
  s.tf32 = node.get_bool("tf32", true);
  std::string fusion = node.get_choice("fusion", {"none", "xla", "torch_compile"}, std::string("none"));
  s.fusion = fusion == "xla" ? FusionPolicy::xla : fusion == "torch_compile" ? FusionPolicy::torch_compile
                                                                             : FusionPolicy::none;
  if (ConfigNode a = node.child("allocator"); a.defined()) {
    a.allow_only({"block", "segment"});
    s.allocator.block = a.get_quantity<Bytes>("block", s.allocator.block);
    s.allocator.segment = a.get_quantity<Bytes>("segment", s.allocator.segment, false);
  }
  if (ConfigNode paths = node.child("sixteen_bit"); paths.defined()) {
    paths.allow_only({"matmul", "conv", "elementwise", "reduction", "copy"});
    for (const auto& kind : paths.keys()) {
      std::string p = paths.get_choice(kind, {"native", "vector", "fp32_with_casts"});
      s.sixteen_bit[op_kind_from_string(kind)] = p == "native"   ? SixteenBitPath::native
                                                 : p == "vector" ? SixteenBitPath::vector
                                                                 : SixteenBitPath::fp32_with_casts;
    }
  }
  return s;
}

std::string to_string(FusionPolicy p) {
  switch (p) {
  case FusionPolicy::none: return "none";
  case FusionPolicy::xla: return "xla";
  case FusionPolicy::torch_compile: return "torch_compile";
  }
  return "?";
}

StackProfile stack_preset(const std::string& name) {
  auto source = std::make_shared<ConfigSource>();
  source->file = "stack preset '" + name + "'";
  return parse_stack(ConfigNode(YAML::Node(name), "model.stack", source));
}

} // namespace mlsim
