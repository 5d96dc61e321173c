// Inputs shared by the validation tests' hand-made configurations.
#pragma once

#include "sim/validate/job_config.hpp"

namespace mlsim::fixtures {

// One 100 kB JPEG of 500x375 pixels (ImageNet-like), as the loaders' inputs.
inline validate::JobInputs one_500x375_image() {
  validate::JobInputs in;
  in.files = {"a.jpg"};
  in.mean_bytes = 1e5;
  in.mean_pixels = 1.875e5;
  return in;
}

} // namespace mlsim::fixtures
