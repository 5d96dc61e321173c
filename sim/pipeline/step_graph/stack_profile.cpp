#include "sim/pipeline/step_graph/stack_profile.hpp"



namespace mlsim {

std::string to_string(FusionPolicy p) {
  switch (p) {
  case FusionPolicy::none: return "none";
  case FusionPolicy::xla: return "xla";
  case FusionPolicy::torch_compile: return "torch_compile";
  }
  return "?";
}

} // namespace mlsim
