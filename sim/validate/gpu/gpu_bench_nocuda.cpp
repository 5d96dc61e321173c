// Without the CUDA toolkit: no GPU measurements, a clear reason instead.
#include "sim/validate/gpu/gpu_bench.hpp"

#include <stdexcept>

namespace mlsim::validate {

GpuInfo probe_gpu() {
  GpuInfo g;
  g.reason = "mlsim was built without CUDA (no toolkit found at configure time)";
  return g;
}
GpuBenchResult run_gpu_bench(int, bool) { throw std::runtime_error(probe_gpu().reason); }
struct GpuGemmStack {};
void GpuGemmStackDeleter::operator()(GpuGemmStack* s) const { delete s; }
GpuGemmStackPtr make_gpu_gemm_stack(int, int, size_t) { return nullptr; }
void gpu_gemm_stack_step(GpuGemmStack&, const void*, size_t) { throw std::runtime_error(probe_gpu().reason); }

} // namespace mlsim::validate
