#include "test_support.hpp"

#include "sim/core/run/load/hardware_load.hpp"
#include "sim/core/run/load/model_load.hpp"
#include "sim/pipeline/model_spec.hpp"
#include "sim/pipeline/step_graph/layer_builders.hpp"

#include <fmt/format.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <unistd.h>
#include <sys/wait.h>

namespace mlsim::fixtures {

namespace {
struct ScratchDir {
  std::string path;
  ~ScratchDir() {
    std::error_code ignored; // a test that crashed or a child still writing: what can go, goes
    if (!path.empty())
      std::filesystem::remove_all(path, ignored);
  }
};
} // namespace

const std::string& scratch_dir() {
  static ScratchDir dir;
  if (dir.path.empty()) {
    std::string p = ::testing::TempDir() + "mlsim-test-" + std::to_string(::getpid()) + "/";
    std::filesystem::create_directories(p);
    dir.path = p;
  }
  return dir.path;
}

Op gemm_op(long m, long n, long k, DType d) {
  Op op;
  op.name = "gemm";
  op.kind = OpKind::matmul;
  op.flops = Flops(2.0 * m * n * k);
  op.in_elements = static_cast<double>(m * k);
  op.param_elements = static_cast<double>(k * n);
  op.out_elements = static_cast<double>(m * n);
  op.dims = {{"batch", m}, {"m", m}, {"n", n}, {"k", k}};
  op.compute_dtype = op.in_dtype = op.out_dtype = op.param_dtype = d;
  return op;
}

Op conv_op(long hw, long cin, long cout, int kernel, int stride, long batch, DType d, long groups) {
  LayerSpec l = make_layer("conv2d", "c");
  l.filters = cout;
  l.kernel = kernel;
  l.stride = stride;
  l.bias = false;
  l.groups = groups;
  Op op = build_layer(l, {{hw, hw, cin}}, batch).ops.front();
  op.compute_dtype = op.in_dtype = op.out_dtype = op.param_dtype = d;
  return op;
}

StepPlan plan_model(const std::string& model, const std::string& accelerator, long batch) {
  AcceleratorSpec a = accelerator_preset(accelerator);
  StepContext ctx;
  ctx.accelerator = &a;
  ctx.batch_per_device = batch;
  auto node = ConfigNode::load_string("model: " + model + "\n", "plan.yaml");
  return plan_step(parse_model(node.child("model")), ctx);
}

double device_seconds(const StepPlan& plan) {
  double total = 0.0;
  for (const auto& op : plan.ops)
    if (op.placement == OpPlacement::device)
      total += op.duration.value();
  return total;
}

std::string base_scenario(int gpus, double decode_ms, double gflop, double params) {
  return fmt::format(R"(name: test
hardware:
  nodes:
    - name: node
      cpu: {{cores: 16, core_speed: 1.0}}
      ram: {{size: 256 GiB, bandwidth: 1000 GB/s}}
      nic: {{bandwidth: 100 Gb/s, latency: 5 us}}
      pcie: {{generation: 4, lanes: 16, protocol_efficiency: 0.8, latency: 1 us}}
      accelerators: {{preset: a100-sxm4-40gb, count: {gpus}}}
      nvlink: nvlink3
dataset:
  samples: 1000000
  sample_size: 1 kB
  location: ram
pipeline:
  framework: tf.data
  batch_size: 32
  workers: 4
  prefetch: 2
  stages:
    - read
    - {{name: decode, cost: {{per_sample: {decode_ms} ms}}}}
model:
  name: toy
  forward_flops_per_sample: {gflop} GFLOP
  parameters: {params}
  dtype: fp32
run:
  steps: 60
  warmup_steps: 10
  seed: 7
)",
                     fmt::arg("gpus", gpus), fmt::arg("decode_ms", decode_ms), fmt::arg("gflop", gflop),
                     fmt::arg("params", params));
}

std::string source_path(const std::string& relative) { return std::string(MLSIM_SOURCE_DIR) + "/" + relative; }

std::string mlsim_binary() { return MLSIM_BINARY; }

CliResult run_mlsim(const std::string& args) {
  std::string cmd = mlsim_binary() + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  CliResult r;
  if (!p)
    return r;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p))
    r.output.append(buf, n);
  int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

} // namespace mlsim::fixtures
