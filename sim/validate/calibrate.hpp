// `mlsim calibrate`: measure this host (and its GPU) and build a Profile.
//
// Order: the calibration photo set (cached), the loader stages single core and
// all cores, host GEMM (the CPU consumer of validate), fp16 emulation, memcpy,
// the disk holding the cache directory, then the GPU when asked for and present.
// Ignores: what other tenants do meanwhile — the 1-minute load average at the
// start is recorded in the profile so a noisy run can be recognised.
#pragma once

#include "sim/validate/profile.hpp"

#include <ostream>
#include <string>

namespace mlsim::validate {

enum class GpuMode { automatic, off, required };

struct CalibrateOptions {
  bool quick = false;
  GpuMode gpu = GpuMode::automatic;
  std::string cache_dir; // empty: default_cache_dir()
  int reps = 0;          // 0: 3 in quick mode, 7 otherwise
  bool include_disk = true;
};

// The CPU model name from /proc/cpuinfo ("unknown CPU" if absent).
std::string cpu_model_name();
std::string host_name();

// Runs the measurements, printing one line per finding to `log`. Throws
// std::runtime_error when the GPU is required and absent.
Profile run_calibration(const CalibrateOptions& opt, std::ostream& log);

// A profile of a GPU measured on another host (mlsim-gpu-measure's JSON, gpu_results_json.hpp): the
// accelerator and PCIe sections only (Profile::host_measured false). InputError on a bad file.
Profile profile_from_gpu_results(const std::string& path, std::ostream& log);

} // namespace mlsim::validate
