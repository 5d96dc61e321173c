#include "kineto_trace.hpp"

#include <fstream>

namespace mlsim::fixtures {

using ojson = nlohmann::ordered_json;

KinetoTrace::KinetoTrace(std::string device) : device_(std::move(device)) {}

void KinetoTrace::cpu(const std::string& name, double ts, double dur, const std::string& cat, long batch_dim) {
  ojson e = {{"ph", "X"}, {"cat", cat}, {"name", name}, {"pid", 1}, {"tid", 1}, {"ts", ts}, {"dur", dur}};
  e["args"] = {{"External id", next_id_++}};
  if (batch_dim > 0)
    e["args"]["Input Dims"] = ojson::array({ojson::array({batch_dim, 64, 56, 56}), ojson::array({64, 64, 3, 3})});
  else if (cat == "cpu_op")
    e["args"]["Input Dims"] = ojson::array({ojson::array({64, 64, 3, 3})});
  events_.push_back(e);
}

void KinetoTrace::kernel(const std::string& name, double launch, double start, double dur, int stream,
                         const std::string& op, long batch_dim) {
  long ext = next_id_;
  cpu(op, launch - 2, 8, "cpu_op", batch_dim);
  long corr = next_id_++;
  events_.push_back({{"ph", "X"}, {"cat", "cuda_runtime"}, {"name", "cudaLaunchKernel"}, {"pid", 1}, {"tid", 1},
                     {"ts", launch}, {"dur", 4}, {"args", {{"External id", ext}, {"correlation", corr}}}});
  events_.push_back({{"ph", "X"}, {"cat", "kernel"}, {"name", name}, {"pid", 0}, {"tid", stream}, {"ts", start},
                     {"dur", dur},
                     {"args", {{"External id", ext}, {"device", 0}, {"stream", stream}, {"correlation", corr}}}});
}

void KinetoTrace::memcpy(const std::string& direction, bool pinned, double bytes, double launch, double start,
                         double dur) {
  long corr = next_id_++;
  std::string host = pinned ? "Pinned" : "Pageable";
  std::string name = "Memcpy " + direction + " (" + (direction == "HtoD" ? host + " -> Device" : "Device -> " + host) + ")";
  events_.push_back({{"ph", "X"}, {"cat", "cuda_runtime"}, {"name", "cudaMemcpyAsync"}, {"pid", 1}, {"tid", 1},
                     {"ts", launch}, {"dur", 5}, {"args", {{"correlation", corr}}}});
  events_.push_back({{"ph", "X"}, {"cat", "gpu_memcpy"}, {"name", name}, {"pid", 0}, {"tid", 7}, {"ts", start},
                     {"dur", dur},
                     {"args", {{"device", 0}, {"stream", 7}, {"correlation", corr}, {"bytes", bytes}}}});
}

void KinetoTrace::nccl_all_reduce(double elements, double launch, double start, double dur) {
  long ext = next_id_++;
  events_.push_back({{"ph", "X"}, {"cat", "cpu_op"}, {"name", "record_param_comms"}, {"pid", 1}, {"tid", 1},
                     {"ts", launch - 3}, {"dur", 10},
                     {"args", {{"External id", ext}, {"In msg nelems", elements}, {"Out msg nelems", elements},
                               {"dtype", "Float"}}}});
  long corr = next_id_++;
  events_.push_back({{"ph", "X"}, {"cat", "cuda_runtime"}, {"name", "cudaLaunchKernel"}, {"pid", 1}, {"tid", 1},
                     {"ts", launch}, {"dur", 4}, {"args", {{"External id", ext}, {"correlation", corr}}}});
  events_.push_back({{"ph", "X"}, {"cat", "kernel"},
                     {"name", "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"},
                     {"pid", 0}, {"tid", 20}, {"ts", start}, {"dur", dur},
                     {"args", {{"External id", ext}, {"device", 0}, {"stream", 20}, {"correlation", corr}}}});
}

std::string KinetoTrace::json() const {
  ojson doc = {{"schemaVersion", 1},
              {"deviceProperties", ojson::array({{{"id", 0}, {"name", device_}, {"totalGlobalMem", 42505273344}}})},
              {"traceEvents", events_},
              {"traceName", "test"}};
  return doc.dump();
}

void KinetoTrace::write(const std::string& path) const { std::ofstream(path) << json(); }

namespace {
const char* kGemm = "sm80_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x16_stage3_warpsize2x2x1_tensor16x8x8_kernel";
const char* kRelu =
    "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::launch_clamp_scalar"
    "(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()"
    "() const::{lambda()#7}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, float, float)";
const char* kOptimizer = "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<float>(float*, int)";
} // namespace

double per_sample_kernel_us(const GpuStepShape& s) {
  return s.layers * (3 * s.matrix_us + 2 * s.memory_us);
}
double fixed_kernel_us(const GpuStepShape& s) { return s.optimizer_us + s.custom_us; }
double matrix_kernel_us(const GpuStepShape& s) { return s.layers * 3 * s.matrix_us; }
double memory_kernel_us(const GpuStepShape& s) { return s.layers * 2 * s.memory_us + s.optimizer_us; }
double idle_us(const GpuStepShape& s) {
  int kernels = s.layers * 5 + 1 + (s.custom_kernel.empty() ? 0 : 1);
  return kernels * s.gap_us + s.tail_us; // one gap before each kernel (the first after the batch copy)
}

double write_gpu_steps(KinetoTrace& t, const GpuStepShape& s, int steps) {
  double step_us = s.loader_us + s.copy_us + per_sample_kernel_us(s) + fixed_kernel_us(s) + idle_us(s);
  for (int k = 0; k < steps; ++k) {
    double t0 = 1000 + k * step_us;
    t.cpu("ProfilerStep#" + std::to_string(k), t0, step_us, "user_annotation");
    t.cpu("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", t0, s.loader_us, "user_annotation");
    double at = t0 + s.loader_us;
    t.memcpy("HtoD", true, s.copy_bytes, at - 1, at, s.copy_us);
    at += s.copy_us;
    auto run = [&](const char* name, double us, const std::string& op, long dim) {
      at += s.gap_us;
      t.kernel(name, at - 10, at, us, 7, op, dim);
      at += us;
    };
    for (int l = 0; l < s.layers; ++l) {
      run(kGemm, s.matrix_us, "aten::conv2d", s.batch);
      run(kRelu, s.memory_us, "aten::relu", s.batch);
    }
    if (!s.custom_kernel.empty())
      run(s.custom_kernel.c_str(), s.custom_us, "my::fused", -1);
    for (int l = 0; l < s.layers; ++l) {
      run(kRelu, s.memory_us, "aten::threshold_backward", s.batch);
      run(kGemm, s.matrix_us, "aten::convolution_backward", s.batch);
      run(kGemm, s.matrix_us, "aten::convolution_backward", s.batch);
      if (l == 0) // gradients of the last layers are ready: the all-reduce overlaps the rest of backward
        t.nccl_all_reduce(s.grad_elements, at - 5, at + s.gap_us, s.nccl_us); // with the next kernels
    }
    at += s.gap_us;
    t.cpu("Optimizer.step#SGD.step", at - 15, 30, "user_annotation");
    t.kernel(kOptimizer, at - 10, at, s.optimizer_us, 7, "aten::_foreach_add_", -1);
  }
  return step_us;
}

} // namespace mlsim::fixtures
