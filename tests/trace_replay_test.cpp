// Replaying a measured step from a Kineto-shaped GPU trace written here: the replay reproduces the
// trace's step time, the input pipeline's stall appears as its closed form says, and the what-ifs
// (batch, accelerator, precision) scale the kernels by their published ratios.
#include "kineto_trace.hpp"
#include "test_support.hpp"

#include "sim/pipeline/trace/measured_step.hpp"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cstdio>

using namespace mlsim;
using fixtures::GpuStepShape;

namespace {

// The scenario around a trace: base_scenario's node with 2 A100s on NVLink and PCIe 4.0 x16 at 80 %
// (25.2 GB/s), 150 kB samples (a batch of 16 is the trace's 2.4 MB copy); `pipeline` makes the batches.
struct ReplayScenario {
  std::string yaml = fixtures::base_scenario(2);
  std::vector<std::string> overrides;
};
ReplayScenario scenario(const std::string& trace, const std::string& model_extra, const std::string& pipeline,
               long batch = 16, const std::string& accelerator = "a100-sxm4-40gb") {
  ReplayScenario s;
  s.overrides = {"model={trace: " + trace + model_extra + "}", "dataset.sample_size=150 kB",
                 fmt::format("pipeline={{batch_size: {}, {}}}", batch, pipeline),
                 "hardware.nodes.0.accelerators={preset: " + accelerator + ", count: 2}", "run.steps=40"};
  return s;
}
nlohmann::ordered_json run(const ReplayScenario& s) { return fixtures::run(s.yaml, s.overrides); }

// The trace's own data loader: synchronous (prefetch 0), 300 us per batch of 16, one per accelerator. The
// decode cost stands for the loader's whole time, so PyTorch's own receive/worker costs are zero here.
const char* kSyncLoader =
    "framework: pytorch, workers: 1, prefetch: 0, stages: [read, {name: decode, cost: {per_sample: 18.75 us}}], "
    "framework_costs: {receive_per_batch: 0 s, receive_per_byte: 0 s, worker_per_batch: 0 s, worker_per_byte: 0 s, "
    "pin_per_byte: 0 s}";
// A pipeline that never makes the device wait; the batch copy serialised with the step, as in the closed forms.
const char* kFastLoader = "framework: tf.data, workers: 4, prefetch: 4, copy: serialized, "
                          "stages: [read, {name: decode, cost: {per_sample: 1 us}}]";

std::string write_trace(const std::string& name, const GpuStepShape& shape, double& step_us) {
  fixtures::KinetoTrace t;
  step_us = fixtures::write_gpu_steps(t, shape, 8);
  std::string path = mlsim::fixtures::scratch_dir() + name;
  t.write(path);
  return path;
}

double step_time(const nlohmann::ordered_json& j) { return j["step_time_s"]["mean"].get<double>(); }

// The batch copy as mlsim's PCIe model makes it: latency + bytes / (16 GT/s x 16 lanes x 128/130 x 0.8).
double copy_s(double bytes) { return 1e-6 + bytes / (16e9 * 16 / 8 * 128.0 / 130.0 * 0.8); }

} // namespace

// The step builder accounts for every microsecond of the step it was given.
TEST(TraceReplay, MeasuredStepAccountsForTheTrace) {
  GpuStepShape shape;
  double step_us = 0;
  std::string path = write_trace("account.json", shape, step_us);
  MeasuredStep m = measure_step(read_trace(path), {"", 2, 6});
  EXPECT_EQ(m.steps, (std::vector<long>{2, 3, 4, 5, 6}));
  EXPECT_EQ(m.batch, 16);
  EXPECT_NEAR(m.step_time.value(), step_us * 1e-6, 1e-9);
  EXPECT_NEAR(m.input_wait.value(), shape.loader_us * 1e-6, 1e-9);
  EXPECT_NEAR(m.batch_copy.value(), shape.copy_us * 1e-6, 1e-9);
  EXPECT_NEAR(m.batch_copy_bytes.value(), shape.copy_bytes, 1e-6);
  EXPECT_TRUE(m.batch_copy_pinned);
  double kernels_us = fixtures::per_sample_kernel_us(shape) + fixtures::fixed_kernel_us(shape);
  EXPECT_NEAR(device_timeline(m).value(), (kernels_us + fixtures::idle_us(shape)) * 1e-6, 1e-9);
  ASSERT_EQ(m.buckets.size(), 1u);
  EXPECT_NEAR(m.buckets[0].bytes.value(), shape.grad_elements * 4, 1e-3);
  EXPECT_EQ(m.buckets[0].algorithm, "ring");
  EXPECT_EQ(m.buckets[0].collective, "all_reduce");
  ASSERT_LT(m.optimizer_begin, m.ops.size());
  EXPECT_TRUE(m.ops[m.optimizer_begin].optimizer);
  EXPECT_NE(m.ops[m.optimizer_begin].name.find("multi_tensor_apply"), std::string::npos);
}

// Nothing changed (the trace's synchronous loader, its PCIe link): the replay is the trace's step.
TEST(TraceReplay, NothingChangedReproducesTheStepTime) {
  GpuStepShape shape;
  double step_us = 0;
  std::string path = write_trace("same.json", shape, step_us);
  auto j = run(scenario(path, ", steps: [2, 6]", kSyncLoader));
  EXPECT_NEAR(step_time(j), step_us * 1e-6, 0.02 * step_us * 1e-6);
}

// A slower pipeline: 4 workers at 5 ms per sample make the node's two batches of 16 every
// 2 x 16 x 5 / 4 = 40 ms; the replayed step (6.37 ms of device time and copy) waits the rest.
TEST(TraceReplay, SlowerPipelineStallsAsItsClosedFormSays) {
  GpuStepShape shape;
  double step_us = 0;
  std::string path = write_trace("stall.json", shape, step_us);
  auto j = run(scenario(path, "",
                        "framework: tf.data, workers: 4, prefetch: 2, stages: [read, {name: decode, cost: {per_sample: 5 ms}}]"));
  double interval = 2 * 16 * 5e-3 / 4;
  double compute = (step_us - shape.loader_us - shape.copy_us) * 1e-6 + copy_s(shape.copy_bytes);
  EXPECT_NEAR(step_time(j), interval, 0.01 * interval);
  EXPECT_NEAR(j["breakdown"]["input"].get<double>(), (interval - compute) / interval, 0.01);
}

// Batch 32 instead of the trace's 16: kernels whose CPU op takes the batch first double; the
// optimizer and the idle waits do not; the copy is twice the bytes.
TEST(TraceReplay, AnotherBatchScalesPerSampleKernels) {
  GpuStepShape shape;
  double step_us = 0;
  std::string path = write_trace("batch.json", shape, step_us);
  auto j = run(scenario(path, "", kFastLoader, 32));
  double expected = (2 * fixtures::per_sample_kernel_us(shape) + fixtures::fixed_kernel_us(shape) +
                     fixtures::idle_us(shape)) * 1e-6 + copy_s(2 * shape.copy_bytes);
  EXPECT_NEAR(step_time(j), expected, 0.01 * expected);
}

// Measured on an A100, run on an H100: GEMMs (tf32) by the tensor-core peaks 156 -> 494.7 TFLOP/s,
// elementwise kernels by HBM 1555 -> 3350 GB/s (datasheets); idle waits for the host unchanged.
TEST(TraceReplay, AnotherAcceleratorScalesByOpClass) {
  GpuStepShape shape;
  double step_us = 0;
  std::string path = write_trace("h100.json", shape, step_us);
  auto j = run(scenario(path, ", measured_on: a100-sxm4-40gb", kFastLoader, 16, "h100-sxm"));
  double expected = (fixtures::matrix_kernel_us(shape) * 156 / 494.7 + fixtures::memory_kernel_us(shape) * 1555 / 3350 +
                     fixtures::idle_us(shape)) * 1e-6 + copy_s(shape.copy_bytes);
  EXPECT_NEAR(step_time(j), expected, 0.01 * expected);
}

// Mixed fp16 on the same A100: the tf32 GEMMs move to the fp16 tensor-core peak (156 -> 312 TFLOP/s).
TEST(TraceReplay, AnotherPrecisionScalesMatrixKernels) {
  GpuStepShape shape;
  double step_us = 0;
  std::string path = write_trace("fp16.json", shape, step_us);
  auto j = run(scenario(path, ", precision: mixed_fp16", kFastLoader));
  double expected = (fixtures::matrix_kernel_us(shape) / 2 + fixtures::memory_kernel_us(shape) +
                     fixtures::idle_us(shape)) * 1e-6 + copy_s(shape.copy_bytes);
  EXPECT_NEAR(step_time(j), expected, 0.01 * expected);
  EXPECT_GT(j["precision"]["fp16"].get<double>(), 0.3);
}

// A kernel whose name says nothing of its dtype holds 1 ms of 7.55 ms: precision what-ifs are refused.
TEST(TraceReplay, PrecisionWhatIfRefusedWhenKernelsHideTheirDtype) {
  GpuStepShape shape;
  shape.custom_kernel = "my_fused_attention_kernel";
  shape.custom_us = 1000;
  double step_us = 0;
  std::string path = write_trace("custom.json", shape, step_us);
  ReplayScenario s = scenario(path, ", precision: mixed_fp16", kFastLoader);
  try {
    fixtures::load(s.yaml, s.overrides);
    ADD_FAILURE() << "a precision what-if on kernels that hide their dtype was accepted";
  } catch (const InputError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("model.precision"), std::string::npos) << m;
    EXPECT_NE(m.find("my_fused_attention_kernel"), std::string::npos) << m;
  }
  // Without the what-if the same trace replays.
  auto j = run(scenario(path, "", kFastLoader));
  EXPECT_GT(step_time(j), 0.0);
}

// The imported section, put into a scenario as it is, replays the trace.
TEST(TraceReplay, ImportTraceWritesASectionThatRuns) {
  GpuStepShape shape;
  double step_us = 0;
  std::string path = write_trace("import.json", shape, step_us);
  std::string out = mlsim::fixtures::scratch_dir() + "section.yaml";
  fixtures::CliResult r = fixtures::run_mlsim("import-trace " + path + " --steps 2:6 --out " + out);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("measured_on"), std::string::npos) << r.output; // matched from the device name
  std::FILE* f = std::fopen(out.c_str(), "r");
  ASSERT_NE(f, nullptr);
  std::string section;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, f))
    section.append(buf, n);
  std::fclose(f);
  EXPECT_NE(section.find("measured_on: a100-sxm4-40gb"), std::string::npos) << section;
  EXPECT_NE(section.find("steps: [2, 6]"), std::string::npos) << section;
  ReplayScenario s = scenario(path, "", kSyncLoader);
  s.overrides.erase(s.overrides.begin()); // the model comes from the section
  std::string text = s.yaml.substr(0, s.yaml.find("model:")) + section + s.yaml.substr(s.yaml.find("run:"));
  auto j = simulate_scenario_text(text, s.overrides, mlsim::fixtures::scratch_dir() + "imported.yaml");
  EXPECT_NEAR(step_time(j), step_us * 1e-6, 0.02 * step_us * 1e-6);
}
