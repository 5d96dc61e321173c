// The GPU measurements as a module loaded on first use (libmlsim-gpu.so next to
// the executable, or <prefix>/lib/mlsim/ when installed). Linked into mlsim,
// cuBLAS's start-up alone costs every process ~0.3 s of CPU and ~200 MB of
// resident memory, for code that only `calibrate` and `validate` with a GPU
// reach; loaded this way a run of a scenario never pays it.
//
// gpu_module_loader.cpp implements gpu_bench.hpp's functions in mlsim by
// looking the module up (probe_gpu says why when it cannot be loaded);
// gpu_module_entry.cpp is the module's one exported symbol. Both sides are
// built by the same compiler from the same headers: the table passes C++ types.
#pragma once

#include "sim/validate/gpu/gpu_bench.hpp"

#include <cstddef>

namespace mlsim::validate {

inline constexpr int kGpuModuleAbi = 1; // raise when the table or a type it passes changes

struct GpuModule {
  int abi = kGpuModuleAbi;
  GpuInfo (*probe_gpu)();
  GpuBenchResult (*run_gpu_bench)(int reps, bool quick);
  GpuGemmStack* (*make_gemm_stack)(int n, int layers, size_t max_batch_bytes); // nullptr without a GPU
  void (*gemm_stack_step)(GpuGemmStack& s, const void* host_batch, size_t bytes);
  void (*free_gemm_stack)(GpuGemmStack* s);
};

} // namespace mlsim::validate

// The module's entry point, looked up by this name.
extern "C" const mlsim::validate::GpuModule* mlsim_gpu_module();
