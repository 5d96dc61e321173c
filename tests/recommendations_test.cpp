// Recommendations are simulated what-ifs: each one's numbers equal a separate
// `mlsim run` with its overrides, and closed-form cases get the expected advice.
#include "test_support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <sys/wait.h>
#include <unistd.h>

using namespace mlsim;
using json = nlohmann::json;

namespace {

std::string temp(const std::string& name) {
  return mlsim::fixtures::scratch_dir() + "recs_" + ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" +
         std::to_string(::getpid()) + "_" + name;
}

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s)
    q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

json run_json(const std::string& scenario, const std::vector<std::string>& overrides, bool recommendations) {
  std::string out = temp("run.json");
  std::string cmd = mlsim::fixtures::mlsim_binary() + " run " + scenario + " --quiet --json " + out;
  for (const auto& o : overrides)
    cmd += " --set " + quote(o);
  if (!recommendations)
    cmd += " --no-recommendations";
  int status = std::system((cmd + " 2>&1").c_str());
  EXPECT_EQ(WEXITSTATUS(status), 0) << cmd;
  return json::parse(std::ifstream(out));
}

std::string scenario_file(const std::string& yaml) {
  std::string p = temp("scenario.yaml");
  std::ofstream(p) << yaml;
  return p;
}

double copy_time() { return 1e-6 + 32 * 1e3 / (16 * (16e9 * 128.0 / 130.0 / 8.0) * 0.8); }

} // namespace

TEST(Recommendations, EachOneEqualsASeparateRunWithItsOverrides) {
  std::string q = fixtures::source_path("scenarios/quickstart.yaml");
  json base = run_json(q, {}, true);
  const json& recs = base["recommendations"];
  ASSERT_GE(recs.size(), 1u) << "quickstart is input-bound: something must help";
  ASSERT_LE(recs.size(), 5u);
  double previous_gain = 1e300;
  for (const auto& r : recs) {
    std::vector<std::string> ov = r["overrides"].get<std::vector<std::string>>();
    json alt = run_json(q, ov, false);
    SCOPED_TRACE(r["change"].get<std::string>());
    EXPECT_DOUBLE_EQ(r["step_time_s"]["before"].get<double>(), base["step_time_s"]["mean"].get<double>());
    EXPECT_DOUBLE_EQ(r["stall"]["before"].get<double>(), base["breakdown"]["input"].get<double>());
    EXPECT_DOUBLE_EQ(r["step_time_s"]["after"].get<double>(), alt["step_time_s"]["mean"].get<double>());
    EXPECT_DOUBLE_EQ(r["stall"]["after"].get<double>(), alt["breakdown"]["input"].get<double>());
    EXPECT_DOUBLE_EQ(r["throughput_samples_per_s"]["after"].get<double>(), alt["throughput_samples_per_s"].get<double>());
    EXPECT_DOUBLE_EQ(r["cost_per_million_samples_usd"]["after"].get<double>(),
                     alt["cost"]["per_million_samples_usd"].get<double>());
    // It helps, and the list is ranked by gain.
    double gain = r["throughput_samples_per_s"]["after"].get<double>() / base["throughput_samples_per_s"].get<double>();
    EXPECT_GE(gain, 1.01);
    EXPECT_NEAR(r["gain"].get<double>(), gain, 1e-12);
    EXPECT_LE(gain, previous_gain);
    previous_gain = gain;
  }
}

TEST(Recommendations, TooFewWorkersGetsMoreWorkersThenMixedPrecisionAndNothingUseless) {
  // 4 workers at 1 ms per sample deliver 4000 samples/s; the fp32 device takes 32 samples per T32.
  // More workers alone: min(8000, 32 / T32) -- the device becomes the limit, so more workers and
  // fp16 together: min(8000, 32 / T16). fp16 alone, more cores (workers fixed), deeper prefetch and
  // more readers (data in RAM) change nothing in this closed form and must not be recommended.
  json j = run_json(scenario_file(fixtures::base_scenario(1, 1.0, 1.0)), {}, true);
  double t32 = 3 * 1e9 * 32 / 19.5e12 + copy_time(), t16 = 3 * 1e9 * 32 / 312e12 + copy_time();
  EXPECT_NEAR(j["throughput_samples_per_s"].get<double>(), 4000, 40);
  const json& recs = j["recommendations"];
  ASSERT_EQ(recs.size(), 2u) << recs.dump(1);
  EXPECT_EQ(recs[0]["overrides"], json::array({"pipeline.workers=8", "model.dtype=fp16"}));
  EXPECT_NEAR(recs[0]["throughput_samples_per_s"]["after"].get<double>(), std::min(8000.0, 32 / t16), 0.01 * 8000);
  EXPECT_EQ(recs[1]["overrides"], json::array({"pipeline.workers=8"}));
  EXPECT_NEAR(recs[1]["throughput_samples_per_s"]["after"].get<double>(), std::min(8000.0, 32 / t32), 0.01 * 8000);
  EXPECT_NEAR(recs[1]["stall"]["after"].get<double>(), 0.0, 0.01);
}

TEST(Recommendations, ComputeBoundFp32GetsMixedPrecisionNotABiggerBatch) {
  // Device-bound at fp32 on the vector units (19.5 TFLOP/s); fp16 runs on tensor cores (312 TFLOP/s).
  // A roofline step is linear in the batch, so doubling it gains nothing.
  json j = run_json(scenario_file(fixtures::base_scenario(1, 0.01, 100.0)), {}, true);
  const json& recs = j["recommendations"];
  ASSERT_EQ(recs.size(), 1u) << recs.dump(1);
  EXPECT_EQ(recs[0]["overrides"], json::array({"model.dtype=fp16"}));
  double fp16 = 3 * 100e9 * 32 / 312e12;
  EXPECT_NEAR(recs[0]["step_time_s"]["after"].get<double>(), fp16 + copy_time(), 0.01 * fp16);
}

TEST(Recommendations, NoneWithTheFlagOff) {
  json j = run_json(fixtures::source_path("scenarios/quickstart.yaml"), {}, false);
  EXPECT_TRUE(j["recommendations"].empty());
}
