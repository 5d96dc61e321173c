// The GPU measurements live in a module mlsim loads only when asked for a GPU
// (gpu_module.hpp): a scenario run never maps CUDA's libraries, calibrate
// loads the module, and a missing module is named with exit 2.
// The dynamic loader's own log (LD_DEBUG=files) is the witness of what a
// process mapped.
#include "tests/cli_runner.hpp"
#include "tests/test_support.hpp"

#include "sim/validate/gpu/gpu_bench.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace {

using mlsim::fixtures::mlsim_binary;
using mlsim::fixtures::ProcessOptions;
using mlsim::fixtures::run_process;

bool module_built() {
  return std::filesystem::exists(std::filesystem::path(mlsim_binary()).parent_path() / "libmlsim-gpu.so");
}

ProcessOptions loader_log() {
  ProcessOptions o;
  o.env = {"LD_DEBUG=files"};
  return o;
}

TEST(GpuModule, AScenarioRunNeverMapsCuda) {
  const auto r = run_process({"run", mlsim::fixtures::source_path("scenarios/quickstart.yaml"),
                              "--quiet", "--no-recommendations", "--no-cores-needed"},
                             loader_log());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_NE(r.err.find("calling init"), std::string::npos) << "the loader's log is missing: the test would prove nothing";
  EXPECT_EQ(r.err.find("libcublas"), std::string::npos);
  EXPECT_EQ(r.err.find("libcudart"), std::string::npos);
  EXPECT_EQ(r.err.find("libmlsim-gpu"), std::string::npos);
}

TEST(GpuModule, CalibrateWithAGpuLoadsTheModule) {
  if (!module_built())
    GTEST_SKIP() << "built without CUDA: there is no module";
  if (mlsim::validate::probe_gpu().available)
    GTEST_SKIP() << "a GPU is present: a required-GPU calibration would run in full";
  const std::string out = (std::filesystem::temp_directory_path() / "mlsim-gpu-module-test.yaml").string();
  const auto r = run_process({"calibrate", "--quick", "--gpu", "required", "--out", out}, loader_log());
  EXPECT_EQ(r.exit_code, 2) << r.err; // no usable GPU here, said plainly
  EXPECT_NE(r.err.find("libmlsim-gpu.so"), std::string::npos);
  EXPECT_NE(r.err.find("libcublas"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(GpuModule, AMissingModuleIsNamedAndExitsTwo) {
  ProcessOptions o;
  o.env = {"MLSIM_GPU_MODULE=/nonexistent/libmlsim-gpu.so"};
  const auto r = run_process({"calibrate", "--quick", "--gpu", "required", "--out",
                              (std::filesystem::temp_directory_path() / "mlsim-gpu-module-missing.yaml").string()},
                             o);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("/nonexistent/libmlsim-gpu.so"), std::string::npos) << r.err;
}

} // namespace
