// The limiter named from a run's figures (sim/core/studies/limiter.hpp), on
// figures written by hand so that each case has its closed form:
//   CPU period P = sum x_i x B / min(W, c); device work T_dev = step x (1 - stall).
#include "sim/core/studies/limiter.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

using namespace mlsim;

namespace {

// One A100 node, batch 256, 8 cores, decode 3.1 ms/sample (the scenario only gives B and the framework).
Scenario scenario(int prefetch = 2) {
  return fixtures::load(fixtures::base_scenario(1, 3.1),
                        {"pipeline.batch_size=256", "hardware.nodes.0.cpu.cores=8",
                         "pipeline.prefetch=" + std::to_string(prefetch)});
}

// A run whose step waits `stall` of `step` for input, with W workers on c cores.
RunMetrics run(double step, double stall, int workers, double cores, double cpu_use) {
  RunMetrics m;
  m.step_mean = step;
  m.breakdown.input = stall;
  m.workers_per_node = workers;
  m.worker_cores = cores;
  m.pipeline_cpu_utilization = cpu_use;
  m.stages.push_back({"read", 1e9, 0.0, 0.0, 0.0});
  m.stages.push_back({"decode", std::min(workers, static_cast<int>(cores)) / 3.1e-3, cpu_use, 1.0, 3.1e-3});
  m.slowest_link = {"pcie-switch0", "pcie", 25e9, 0.43};
  m.bottleneck_kind = "stage";
  m.bottleneck_name = "decode";
  return m;
}

} // namespace

TEST(Limiter, CoresBindTheStage) {
  // 3.1 ms x 256 / 8 = 99.2 ms per step; the step is 99.2 ms with 19.2 % waiting: T_dev = 80.15 ms.
  RunMetrics m = run(0.0992, 0.192, 8, 8, 1.0);
  Limiter l = find_limiter(scenario(), m, 0.05);
  EXPECT_EQ(l.kind, "stage");
  EXPECT_EQ(l.name, "decode");
  EXPECT_NE(l.text.find("stage decode: 3.10 ms/sample x 256 samples / 8 cores = 99.20 ms per step > 80.15 ms"),
            std::string::npos)
      << l.text;
}

TEST(Limiter, FewerWorkersThanCoresBindTheWorkers) {
  RunMetrics m = run(0.1984, 0.596, 4, 8, 1.0); // 3.1 x 256 / 4 = 198.4 ms
  Limiter l = find_limiter(scenario(), m, 0.05);
  EXPECT_EQ(l.kind, "workers");
  EXPECT_NE(l.text.find("/ 4 workers (of 8 cores) = 198.40 ms per step"), std::string::npos) << l.text;
}

TEST(Limiter, ABusyLinkBindsBeforeAnIdleCpu) {
  RunMetrics m = run(0.11, 0.27, 8, 8, 0.28);
  m.slowest_link.utilization = 0.97;
  Limiter l = find_limiter(scenario(), m, 0.05);
  EXPECT_EQ(l.kind, "link");
  EXPECT_EQ(l.name, "pcie-switch0");
  EXPECT_NE(l.text.find("97.0 % of its 25.0 GB/s"), std::string::npos) << l.text;
}

TEST(Limiter, LowCpuUseAndHighStallIsBuffering) {
  // The case that used to be blamed on a 43 % link: CPU 28 % used, stall 27 %: nothing binds.
  RunMetrics m = run(0.11, 0.27, 8, 8, 0.28);
  Limiter l = find_limiter(scenario(0), m, 0.05);
  EXPECT_EQ(l.kind, "prefetch");
  EXPECT_NE(l.text.find("no capacity binds"), std::string::npos) << l.text;
  EXPECT_NE(l.text.find("prefetch 0"), std::string::npos) << l.text;
  EXPECT_NE(l.text.find("not cores"), std::string::npos) << l.text;
  // P = 99.2 ms > T_dev = 80.3 ms: made ahead the cores would still bind, and it says so.
  EXPECT_NE(l.text.find("would still take 99.20 ms per step > 80.30 ms: more cores too"), std::string::npos) << l.text;
}

TEST(Limiter, NoStallNoInputLimiter) {
  RunMetrics m = run(0.1, 0.01, 8, 8, 0.5);
  EXPECT_EQ(find_limiter(scenario(), m, 0.05).kind, "device");
}
