// The executable: exit codes, no partial output on bad input, outputs written.
#include "test_support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sys/wait.h>

namespace {
int run_cli(const std::string& args) {
  int status = std::system((mlsim::fixtures::mlsim_binary() + " " + args + " > /dev/null 2>&1").c_str());
  return WEXITSTATUS(status);
}
std::string quickstart() { return mlsim::fixtures::source_path("scenarios/quickstart.yaml"); }
} // namespace

TEST(Cli, CheckAcceptsQuickstart) { EXPECT_EQ(run_cli("check " + quickstart()), 0); }

TEST(Cli, BadOverrideExitsTwoAndWritesNothing) {
  std::string out = mlsim::fixtures::scratch_dir() + "bad.json";
  std::filesystem::remove(out);
  EXPECT_EQ(run_cli("run " + quickstart() + " --set hardware.nodes.0.cpu.cores=0 --json " + out), 2);
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(Cli, MissingScenarioExitsTwo) { EXPECT_EQ(run_cli("run /nonexistent.yaml"), 2); }
TEST(Cli, UnknownOptionExitsTwo) { EXPECT_EQ(run_cli("run " + quickstart() + " --frobnicate"), 2); }
TEST(Cli, HelpExitsZero) { EXPECT_EQ(run_cli("run --help"), 0); }
// --launches are the pytorch client's in-loop processes: with the C++ client it is refused before any measuring.
TEST(Cli, CalibrateLaunchesWithoutThePytorchClientExitsTwo) {
  std::string out = mlsim::fixtures::scratch_dir() + "launches.yaml";
  std::filesystem::remove(out);
  EXPECT_EQ(run_cli("calibrate --quick --launches 4 --out " + out), 2);
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(Cli, JsonAndTraceAreWritten) {
  std::string dir = mlsim::fixtures::scratch_dir();
  ASSERT_EQ(run_cli("run " + quickstart() + " --json " + dir + "q.json --trace " + dir + "q.trace.json"), 0);
  auto j = nlohmann::json::parse(std::ifstream(dir + "q.json"));
  for (const char* key : {"scenario", "steps_simulated", "step_time_s", "throughput_samples_per_s", "breakdown",
                          "input_bound", "accelerator_utilization", "op_placement", "precision", "bottleneck"})
    EXPECT_TRUE(j.contains(key)) << key;
  auto t = nlohmann::json::parse(std::ifstream(dir + "q.trace.json"));
  ASSERT_TRUE(t.contains("traceEvents"));
  bool has_gpu_track = false, has_worker_track = false, has_span = false;
  for (auto& e : t["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") {
      std::string n = e["args"]["name"];
      has_gpu_track |= n == "gpu0";
      has_worker_track |= n.rfind("worker", 0) == 0;
    }
    has_span |= e["ph"] == "X";
  }
  EXPECT_TRUE(has_gpu_track);
  EXPECT_TRUE(has_worker_track);
  EXPECT_TRUE(has_span);
}
