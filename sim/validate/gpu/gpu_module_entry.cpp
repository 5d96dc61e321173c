// The one symbol libmlsim-gpu.so exports: its table of the measurements in
// gpu_bench.cu and conv_bench_*.
#include "sim/validate/gpu/gpu_module.hpp"

namespace {

using namespace mlsim::validate;

const GpuModule kModule{
    kGpuModuleAbi,
    &probe_gpu,
    &run_gpu_bench,
    [](int n, int layers, size_t max_batch_bytes) { return make_gpu_gemm_stack(n, layers, max_batch_bytes).release(); },
    &gpu_gemm_stack_step,
    [](GpuGemmStack* s) { GpuGemmStackDeleter{}(s); },
};

} // namespace

extern "C" __attribute__((visibility("default"))) const GpuModule* mlsim_gpu_module() { return &kModule; }
