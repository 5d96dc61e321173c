// mlsim-gpu-measure: the GPU measurements of `mlsim calibrate` on a host that
// has the CUDA toolkit but not mlsim. Prints the raw results as JSON on
// stdout (gpu_results_json.hpp); `mlsim calibrate --gpu-results FILE` fits
// them and writes the profile. Exit 2 without a usable GPU.
//   mlsim-gpu-measure [--quick] [--reps N] > gpu.json
#include "sim/validate/gpu/gpu_bench.hpp"
#include "sim/validate/gpu/gpu_results_json.hpp"

#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>

int main(int argc, char** argv) {
  bool quick = false;
  int reps = 0;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick"))
      quick = true;
    else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc)
      reps = std::atoi(argv[++i]);
    else {
      std::cerr << "usage: mlsim-gpu-measure [--quick] [--reps N] > gpu.json\n";
      return 2;
    }
  }
  if (reps <= 0)
    reps = quick ? 3 : 7;
  mlsim::validate::GpuInfo g = mlsim::validate::probe_gpu();
  if (!g.available) {
    std::cerr << "mlsim-gpu-measure: " << g.reason << "\n";
    return 2;
  }
  try {
    mlsim::validate::write_gpu_results_json(mlsim::validate::run_gpu_bench(reps, quick), std::cout);
  } catch (const std::exception& e) {
    std::cerr << "mlsim-gpu-measure: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
