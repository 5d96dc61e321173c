// The `model:` section of a scenario and the planning of one training step.
//
// Minimal form: a per-sample roofline. forward FLOPs f and bytes m per
// sample; a training step costs 3f FLOP (forward + 2x backward) per sample at
// the dtype's peak, or its bytes at HBM bandwidth, whichever is slower.
// Gradients (parameters x 4 bytes) are all-reduced in one bucket at the end.
#pragma once

#include "sim/core/config_node.hpp"
#include "sim/hardware/accelerator.hpp"
#include "sim/pipeline/step_plan.hpp"

#include <string>

namespace mlsim {

struct ModelSpec {
  std::string name;
  Flops forward_flops_per_sample{0.0};
  Bytes bytes_per_sample{0.0};
  double parameters = 0.0;
  DType dtype = DType::fp32;
};

ModelSpec parse_model(const ConfigNode& node);

struct StepContext {
  const AcceleratorSpec* accelerator = nullptr;
  long batch_per_device = 1;
};

StepPlan plan_step(const ModelSpec& model, const StepContext& ctx);

} // namespace mlsim
