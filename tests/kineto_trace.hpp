// Writes GPU-shaped traces that follow Kineto's Chrome-trace schema (as torch.profiler exports them):
// CPU ops with "External id" and "Input Dims", cudaLaunchKernel / cudaMemcpyAsync runtime events with
// "correlation", kernels and memcpys on streams with the same correlation, NCCL kernels whose message
// size is on their record_param_comms op, ProfilerStep#N and Optimizer.step annotations.
// The test decides every time, so it knows the step's figures by construction.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace mlsim::fixtures {

class KinetoTrace {
public:
  explicit KinetoTrace(std::string device = "NVIDIA A100-SXM4-40GB");

  // A CPU annotation or op on the main thread (pid 1, tid 1).
  void cpu(const std::string& name, double ts, double dur, const std::string& cat = "cpu_op", long batch_dim = -1);
  // A kernel launched at `launch` by CPU op `op` (first input dim `batch_dim`, -1: weights only), run on `stream`.
  void kernel(const std::string& name, double launch, double start, double dur, int stream = 7,
              const std::string& op = "aten::conv2d", long batch_dim = -1);
  // A memcpy ("HtoD", "DtoH") of `bytes`, pinned or pageable on the host side.
  void memcpy(const std::string& direction, bool pinned, double bytes, double launch, double start, double dur);
  // An NCCL all-reduce of `elements` floats, on stream 20.
  void nccl_all_reduce(double elements, double launch, double start, double dur);

  std::string json() const;
  void write(const std::string& path) const;

private:
  nlohmann::ordered_json events_ = nlohmann::ordered_json::array();
  std::string device_;
  long next_id_ = 1;
};

// A one-GPU training step repeated `steps` times (ProfilerStep#0..), with fixed figures:
struct GpuStepShape {
  long batch = 16;
  double loader_us = 300;        // enumerate(DataLoader) at the step's start
  double copy_bytes = 2.4e6;     // the batch, HtoD pinned
  double copy_us = 95.2;         // 2.4 MB at 25.2 GB/s (PCIe 4.0 x16 at 80 %), the scenario's link
  double matrix_us = 400;        // each forward/backward GEMM (tf32 tensor cores), per sample batch
  double memory_us = 100;        // each elementwise kernel (float)
  int layers = 4;                // forward: GEMM + ReLU per layer; backward: 2 GEMMs + ReLU grad per layer
  double gap_us = 20;            // idle between kernels (launch-bound)
  double optimizer_us = 150;     // multi_tensor_apply (weights only)
  double grad_elements = 6.25e6; // 25 MB of fp32 gradients, one all-reduce
  double nccl_us = 200;          // measured, hidden behind the backward pass
  double tail_us = 100;          // after the last kernel, before the next step
  std::string custom_kernel;     // if set, one more kernel of this name per step (dtype unknown)
  double custom_us = 0;
};

// Writes the trace and returns the measured step duration (us), identical for every step.
double write_gpu_steps(KinetoTrace& t, const GpuStepShape& s, int steps);
// Sum of the kernel times that scale with the batch, and of those that do not (us), per step.
double per_sample_kernel_us(const GpuStepShape& s);
double fixed_kernel_us(const GpuStepShape& s);
double matrix_kernel_us(const GpuStepShape& s);
double memory_kernel_us(const GpuStepShape& s);
double idle_us(const GpuStepShape& s);

} // namespace mlsim::fixtures
