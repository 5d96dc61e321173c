// A trace made here by torch.profiler (Debian's python3-torch, CPU ops of a small CNN): imported and
// replayed, it reproduces its own step. Skipped where /usr/bin/python3 has no torch.
#include "test_support.hpp"

#include "sim/core/base/errors.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <fstream>

using namespace mlsim;

namespace {

bool have_torch() { return std::system("/usr/bin/python3 -c 'import torch' > /dev/null 2>&1") == 0; }

// One profiled run per test binary process: ProfilerStep#1..#6 of batch 16.
const std::string& torch_trace() {
  static std::string path = [] {
    std::string p = mlsim::fixtures::scratch_dir() + "torch-cnn.pt.trace.json";
    std::string cmd = "/usr/bin/python3 " + fixtures::source_path("tests/data/make_torch_trace.py") + " " + p +
                      " > /dev/null 2>&1";
    return std::system(cmd.c_str()) == 0 ? p : std::string();
  }();
  return path;
}

// Read straight from the JSON: step n's duration minus its data-loader time (us).
double step_without_loader_us(const std::string& path, long n) {
  auto doc = nlohmann::json::parse(std::ifstream(path));
  auto& events = doc.is_array() ? doc : doc["traceEvents"];
  double start = -1, dur = 0, loader = 0;
  for (const auto& e : events)
    if (e.value("name", "") == "ProfilerStep#" + std::to_string(n)) {
      start = e["ts"].get<double>();
      dur = e["dur"].get<double>();
    }
  for (const auto& e : events)
    if (e.value("name", "").rfind("enumerate(DataLoader)", 0) == 0 && e["ts"].get<double>() >= start &&
        e["ts"].get<double>() < start + dur)
      loader += e["dur"].get<double>();
  return start < 0 ? -1 : dur - loader;
}

// base_scenario with the trace as its model and a pipeline that never makes the step wait
// (1 kB samples: the batch copy is 16 kB, 1.6 us).
std::vector<std::string> with_trace(const std::string& model) {
  return {"model=" + model, "pipeline.batch_size=16", "pipeline.prefetch=4", "pipeline.copy=serialized",
          "pipeline.stages=[read, {name: decode, cost: {per_sample: 1 us}}]"};
}

} // namespace

TEST(TraceTorch, ReplayReproducesAProfiledStep) {
  if (!have_torch())
    GTEST_SKIP() << "/usr/bin/python3 has no torch";
  ASSERT_FALSE(torch_trace().empty()) << "torch.profiler failed";
  double expected = step_without_loader_us(torch_trace(), 3) * 1e-6;
  ASSERT_GT(expected, 0);
  auto j = fixtures::run(fixtures::base_scenario(1), with_trace("{trace: " + torch_trace() + ", steps: [3, 3], batch: 16}"));
  double copy = 1e-6 + 16e3 / 25.2e9;
  EXPECT_NEAR(j["step_time_s"]["mean"].get<double>(), expected + copy, 0.02 * expected);
  EXPECT_LT(j["breakdown"]["input"].get<double>(), 0.01);
}

// Several steps of a noisy run: the replay is one of them or their op-by-op mean, so it lies within
// the range of the measured steps.
TEST(TraceTorch, ReplayOfSeveralStepsLiesWithinThem) {
  if (!have_torch())
    GTEST_SKIP() << "/usr/bin/python3 has no torch";
  ASSERT_FALSE(torch_trace().empty());
  double lo = 1e9, hi = 0;
  for (long n = 2; n <= 6; ++n) {
    lo = std::min(lo, step_without_loader_us(torch_trace(), n) * 1e-6);
    hi = std::max(hi, step_without_loader_us(torch_trace(), n) * 1e-6);
  }
  auto j = fixtures::run(fixtures::base_scenario(1), with_trace("{trace: " + torch_trace() + ", steps: [2, 6], batch: 16}"));
  double t = j["step_time_s"]["mean"].get<double>();
  EXPECT_GE(t, lo);
  EXPECT_LE(t, hi * 1.01);
}

// What a CPU-only trace cannot answer: another accelerator, another batch (this torch build exports
// no input shapes, so per-sample ops cannot be told from per-step ones).
TEST(TraceTorch, RefusesWhatACpuTraceCannotAnswer) {
  if (!have_torch())
    GTEST_SKIP() << "/usr/bin/python3 has no torch";
  ASSERT_FALSE(torch_trace().empty());
  auto message = [](const std::vector<std::string>& overrides) {
    try {
      fixtures::load(fixtures::base_scenario(1), overrides);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  std::string m = message(with_trace("{trace: " + torch_trace() + ", batch: 16, measured_on: a100-sxm4-40gb}"));
  EXPECT_NE(m.find("CPU-only"), std::string::npos) << m;
  auto other_batch = with_trace("{trace: " + torch_trace() + ", batch: 16}");
  other_batch.push_back("pipeline.batch_size=32");
  m = message(other_batch);
  EXPECT_NE(m.find("pipeline.batch_size"), std::string::npos) << m;
  EXPECT_NE(m.find("no input shapes"), std::string::npos) << m;
}
