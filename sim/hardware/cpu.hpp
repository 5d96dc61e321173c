// CPU of one node: cores shared by concurrent work.
//
// Work is measured in core-seconds on the reference machine (the one the
// stage costs were calibrated on); a core of this CPU does `core_speed`
// reference core-seconds per second. SimGrid's multi-core host shares cores
// fairly: k busy workers on c cores each progress at min(1, c/k) of a core.
// Host fp16 arithmetic is emulated in software on most CPUs: work that
// produces float16 costs `fp16_emulation_factor` times its fp32 cost.
// Ignores: SMT, turbo/frequency scaling, NUMA, cache contention (memory
// bandwidth is the RAM model's).
#pragma once

#include "sim/core/config_node.hpp"
#include "sim/core/units.hpp"

#include <map>
#include <string>

namespace mlsim {

// A calibrated per-sample cost: per_sample + per_byte * bytes + per_pixel * pixels (core-seconds).
struct StageCost {
  Seconds per_sample{0.0};
  Seconds per_byte{0.0};
  Seconds per_pixel{0.0};

  Seconds for_sample(double bytes, double pixels) const {
    return per_sample + per_byte * bytes + per_pixel * pixels;
  }
};
StageCost parse_stage_cost(const ConfigNode& node);

struct CpuSpec {
  std::string name = "cpu";
  int cores = 1;
  double core_speed = 1.0;
  double fp16_emulation_factor = 1.0;
  // One reference core's dense fp32 matmul rate, for host-placed ops. The default is of the order a
  // single-thread Eigen GEMM reaches on a current x86 core (mlsim calibrate measures it: host_gemm_fp32).
  FlopsPerSec core_flops{32e9};
  std::map<std::string, StageCost> stage_costs; // from calibration profiles
};

CpuSpec parse_cpu(const ConfigNode& node);

} // namespace mlsim
