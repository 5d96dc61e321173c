// Steady-state fast-forward: a run that repeats itself stops early and reports the same figures as the
// full run; one that never repeats (random sample sizes) is simulated to its last step.
#include "bench/bench_scenario.hpp"
#include "sim/core/run/isolated.hpp"
#include "sim/pipeline/steady_state.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

namespace {

using json = nlohmann::ordered_json;

// Every number of `a` within `rel` of the same number of `b` (what was simulated, steps and nodes, excepted).
void expect_same_figures(const json& a, const json& b, double rel, const std::string& path = "") {
  if (a.is_object()) {
    for (auto it = a.begin(); it != a.end(); ++it)
      if (it.key() != "steps_simulated" && it.key() != "simulated_trainer_nodes" && b.contains(it.key()))
        expect_same_figures(it.value(), b.at(it.key()), rel, path + "." + it.key());
  } else if (a.is_array()) {
    ASSERT_EQ(a.size(), b.size()) << path;
    for (size_t i = 0; i < a.size(); ++i)
      expect_same_figures(a[i], b[i], rel, path + "[" + std::to_string(i) + "]");
  } else if (a.is_number()) {
    double x = a.get<double>(), y = b.get<double>();
    EXPECT_LE(std::abs(x - y), rel * std::max(std::abs(x), std::abs(y)) + 1e-9) << path << ": " << x << " vs " << y;
  } else {
    EXPECT_EQ(a, b) << path;
  }
}

} // namespace

TEST(FastForward, APeriodicRunStopsEarlyWithTheFullRunsFigures) {
  // Constant sample sizes, 4 accelerators with an all-reduce: every step repeats once the buffers fill.
  std::string yaml = mlsim::fixtures::base_scenario(4, 2.0, 1.0, 25e6);
  auto fast = mlsim::fixtures::run(yaml, {"run.steps=1000"});
  auto full = mlsim::fixtures::run(yaml, {"run.steps=1000", "run.fast_forward=false"});
  EXPECT_EQ(full["steps_simulated"], 1000);
  EXPECT_EQ(fast["steps_requested"], 1000);
  EXPECT_LT(fast["steps_simulated"].get<long>(), 300);
  EXPECT_GE(fast["steps_simulated"].get<long>(), 10 + 2 * mlsim::SteadyStateMonitor::kWindow);
  expect_same_figures(full, fast, 0.005);
}

TEST(FastForward, RandomSampleSizesNeverRepeatSoNothingIsSkipped) {
  std::string yaml = mlsim::fixtures::base_scenario(1, 2.0);
  auto r = mlsim::fixtures::run(yaml, {"run.steps=300", "dataset.sample_size={distribution: lognormal, mean: 1 kB, stddev: 0.5 kB}"});
  EXPECT_EQ(r["steps_simulated"], 300);
}

TEST(FastForward, OffSimulatesEveryStep) {
  auto r = mlsim::fixtures::run(mlsim::fixtures::base_scenario(1, 2.0), {"run.steps=300", "run.fast_forward=false"});
  EXPECT_EQ(r["steps_simulated"], 300);
}

// Every scenario shipped, run long enough for a fast-forward to be possible: the same figures either way.
class FastForwardScenario : public ::testing::TestWithParam<std::string> {};

TEST_P(FastForwardScenario, SameFiguresWithAndWithout) {
  std::string file = mlsim::fixtures::source_path(GetParam());
  std::vector<std::string> overrides{"run.steps=250"};
  // Hundreds of accumulated micro-batches a step (the BERT recipes) make 250 full steps minutes of simulation;
  // the steady state is the step's, so 4 micro-batches test the same thing.
  if (mlsim::load_scenario_file(file).model.gradient_accumulation > 4)
    overrides.push_back("model.gradient_accumulation=4");
  auto fast = mlsim::simulate_file_in_child(file, overrides);
  overrides.push_back("run.fast_forward=false");
  auto full = mlsim::simulate_file_in_child(file, overrides);
  expect_same_figures(full, fast, 0.005);
}

// No shipped scenario has one trainer group of more than kFoldAbove nodes today: the benchmark's job
// (sim_speed large, 5-stage pipeline, ring all-reduce) at 16 nodes x 8 instead.
TEST(Folding, SixteenNodesSameFiguresFoldedAndUnfolded) {
  auto folded = mlsim::fixtures::run(mlsim::bench::scenario(16, 60, true));
  auto unfolded = mlsim::fixtures::run(mlsim::bench::scenario(16, 60, false));
  expect_same_figures(unfolded, folded, 0.005);
}

std::vector<std::string> shipped_scenarios() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(mlsim::fixtures::source_path("scenarios")))
    if (e.path().extension() == ".yaml")
      out.push_back(std::filesystem::relative(e.path(), mlsim::fixtures::source_path("")).string());
  std::sort(out.begin(), out.end());
  return out;
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string n = info.param;
  for (char& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c)))
      c = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(Shipped, FastForwardScenario, ::testing::ValuesIn(shipped_scenarios()), test_name);
