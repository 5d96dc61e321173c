// Shared helpers for tests: a small base scenario and ways to run it.
#pragma once

#include "sim/core/run/isolated.hpp"
#include "sim/core/run/scenario.hpp"
#include "sim/pipeline/step_plan.hpp"
#include "sim/pipeline/step_graph/op.hpp"

#include <string>
#include <vector>

namespace mlsim::fixtures {

// One node, `gpus` A100s on NVLink 3, 16 cores, data in RAM, one decode stage
// of `decode_ms` per sample, a roofline model of `gflop` forward GFLOP per sample.
std::string base_scenario(int gpus = 1, double decode_ms = 1.0, double gflop = 1.0, double params = 0.0);

// Runs the scenario (with overrides) in a child process and returns its JSON report.
inline nlohmann::ordered_json run(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  return simulate_scenario_text(yaml, overrides, "test.yaml");
}

// Loads a scenario from YAML text with overrides, in this process (no simulation).
inline Scenario load(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  ConfigNode root = ConfigNode::load_string(yaml, "test.yaml");
  if (!overrides.empty())
    root = ConfigNode::with_overrides(root, overrides);
  return load_scenario(root);
}

// A device matmul m x n x k computing and storing in `d` (dims m, n, k and batch = m).
Op gemm_op(long m, long n, long k, DType d);

// A conv2d layer's forward op (no bias, "same" padding) over `batch` hw x hw x cin images into cout channels in
// `groups` groups, computing and storing in `d`, as the step graph builds it.
Op conv_op(long hw, long cin, long cout, int kernel, int stride, long batch, DType d, long groups = 1);

// Plans one step of `model` (a `model:` mapping in flow YAML, e.g. "{preset: resnet50, precision: fp32}")
// on one `accelerator` preset at `batch` samples per device, without simulating. Throws InputError when
// the step does not fit in device memory.
StepPlan plan_model(const std::string& model, const std::string& accelerator, long batch);
// The plan's device time: its device ops one after another on one stream (no input, no all-reduce).
double device_seconds(const StepPlan& plan);

// This test process's folder for the files it writes (TempDir()/mlsim-test-<pid>/, with the slash), made on
// first use and removed with everything in it when the process exits: ctest runs each test in a process of
// its own, so repeated runs leave nothing behind.
const std::string& scratch_dir();

// Path of a file in the source tree.
std::string source_path(const std::string& relative);

// Path of the mlsim executable under test.
std::string mlsim_binary();

// Runs `mlsim ARGS` and returns its exit code and output (stdout and stderr together).
struct CliResult {
  int code = -1;
  std::string output;
};
CliResult run_mlsim(const std::string& args);

} // namespace mlsim::fixtures
