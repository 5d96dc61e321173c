// A TensorFlow profiler trace (trace viewer JSON): devices are processes named "/device:GPU:N", their
// kernels on "Stream #N" threads next to derived lines ("TensorFlow Ops") that repeat them, no
// correlation ids, no ProfilerStep markers (the step op is named), memcpy sizes in memcpy_details.
#include "test_support.hpp"

#include "sim/pipeline/trace/measured_step.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>

using namespace mlsim;
using ojson = nlohmann::ordered_json;

namespace {

struct TfShape {
  double loader_us = 200, copy_us = 95.2, copy_bytes = 2.4e6;
  double gemm_us = 300, relu_us = 50, gap_us = 10, tail_us = 50;
  int layers = 3;
  double kernels_us() const { return layers * (gemm_us + relu_us); }
  double idle_us() const { return 2 * layers * gap_us + tail_us; }
  double step_us() const { return loader_us + copy_us + kernels_us() + idle_us(); }
};

std::string write_tf_trace(const TfShape& s, int steps) {
  ojson events = ojson::array();
  auto meta = [&](int pid, int tid, const char* what, const char* name) {
    ojson e = {{"ph", "M"}, {"pid", pid}, {"name", what}, {"args", {{"name", name}}}};
    if (tid >= 0)
      e["tid"] = tid;
    events.push_back(e);
  };
  meta(1, -1, "process_name", "/device:GPU:0");
  meta(1, 7, "thread_name", "Stream #7(Compute)");
  meta(1, 100, "thread_name", "TensorFlow Ops");
  meta(2, -1, "process_name", "/host:CPU");
  meta(2, 1, "thread_name", "python");
  auto x = [&](int pid, int tid, const std::string& name, double ts, double dur, ojson args = ojson::object()) {
    events.push_back({{"ph", "X"}, {"pid", pid}, {"tid", tid}, {"name", name}, {"ts", ts}, {"dur", dur}, {"args", args}});
  };
  for (int k = 0; k < steps; ++k) {
    double t0 = 500 + k * s.step_us();
    x(2, 1, "train_function", t0, s.step_us());
    x(2, 1, "IteratorGetNext", t0, s.loader_us);
    double at = t0 + s.loader_us;
    x(1, 7, "MemcpyH2D", at, s.copy_us,
      {{"memcpy_details", "kind_src:pinned kind_dst:device size:" + std::to_string(long(s.copy_bytes))}});
    at += s.copy_us;
    double ops_start = at;
    for (int l = 0; l < s.layers; ++l) {
      at += s.gap_us;
      x(1, 7, "volta_sgemm_128x64_nn", at, s.gemm_us, {{"tf_op", "model/dense/MatMul:MatMul"}});
      at += s.gemm_us + s.gap_us;
      x(1, 7, "Relu_GPU_DT_FLOAT_DT_FLOAT_kernel", at, s.relu_us, {{"tf_op", "model/dense/Relu:Relu"}});
      at += s.relu_us;
    }
    x(1, 100, "MatMul", ops_start, at - ops_start); // a derived line: must not count twice
  }
  ojson doc = {{"displayTimeUnit", "ns"}, {"metadata", {{"highres-ticks", true}}}, {"traceEvents", events}};
  std::string path = mlsim::fixtures::scratch_dir() + "tf.trace.json";
  std::ofstream(path) << doc.dump();
  return path;
}

} // namespace

TEST(TraceTensorflow, StepsFromANamedOpAndKernelsFromStreamLines) {
  TfShape s;
  MeasuredStep m = measure_step(read_trace(write_tf_trace(s, 6)), {"train_function", 1, 4});
  EXPECT_EQ(m.format, "tensorflow");
  EXPECT_EQ(m.steps, (std::vector<long>{1, 2, 3, 4}));
  EXPECT_NEAR(m.step_time.value(), s.step_us() * 1e-6, 1e-9);
  EXPECT_NEAR(m.input_wait.value(), s.loader_us * 1e-6, 1e-9);
  EXPECT_NEAR(m.batch_copy.value(), s.copy_us * 1e-6, 1e-9);
  EXPECT_NEAR(m.batch_copy_bytes.value(), s.copy_bytes, 1e-6);
  EXPECT_NEAR(device_timeline(m).value(), (s.kernels_us() + s.idle_us()) * 1e-6, 1e-9);
  int gemms = 0;
  for (const auto& op : m.ops)
    if (op.kind == MeasuredKind::kernel && op.info.cls == KernelClass::matrix && op.info.dtype == DType::fp32)
      ++gemms;
  EXPECT_EQ(gemms, s.layers);
}

// Replayed on its own hardware with a pipeline that keeps up: the step less its input wait, with
// the batch copy over the scenario's PCIe 4.0 x16 at 80 % (25.2 GB/s).
TEST(TraceTensorflow, ReplayReproducesTheStepLessItsInputWait) {
  TfShape s;
  std::string path = write_tf_trace(s, 6);
  auto j = fixtures::run(fixtures::base_scenario(1),
                         {"model={trace: " + path + ", step_op: train_function, batch: 16}", "dataset.sample_size=150 kB",
                          "pipeline.batch_size=16", "pipeline.prefetch=4", "pipeline.copy=serialized",
                          "pipeline.stages=[read, {name: decode, cost: {per_sample: 1 us}}]"});
  double expected = (s.step_us() - s.loader_us - s.copy_us) * 1e-6 + 1e-6 + s.copy_bytes / 25.2e9;
  EXPECT_NEAR(j["step_time_s"]["mean"].get<double>(), expected, 0.01 * expected);
}
