// Co-running slowdown of CPU cores (sim/hardware/cpu.hpp):
//   n of c cores busy -> each runs at v * e(n), e(n) = 1 - (1 - E)(n - 1)/(c - 1), E = all_cores_efficiency;
//   the host delivers min(n, c) * v * e(min(n, c)), shared fairly, each exec capped at one core.
// Expected values are derived by hand below; every case also has a control that the default (E = 1)
// would fail.
#include "sim/core/base/engine.hpp"
#include "sim/core/base/errors.hpp"
#include "sim/core/run/isolated.hpp"
#include "sim/core/run/scenario.hpp"
#include "sim/hardware/platform.hpp"
#include "test_support.hpp"

#include <simgrid/s4u.hpp>

#include <gtest/gtest.h>

#include <sstream>

using namespace mlsim;
namespace sg4 = simgrid::s4u;

namespace {
using fixtures::load;

// base_scenario: decode 10 ms per sample on a reference core, a model of 1 MFLOP per sample (the
// accelerator never waits long), data in RAM at 1000 GB/s: the run is bound by the decode workers.
double throughput(int workers, int cores, double efficiency) {
  std::vector<std::string> o{"pipeline.workers=" + std::to_string(workers),
                             "hardware.nodes.0.cpu.cores=" + std::to_string(cores), "run.steps=80",
                             "run.warmup_steps=20"};
  if (efficiency > 0)
    o.push_back("hardware.nodes.0.cpu.all_cores_efficiency=" + std::to_string(efficiency));
  return fixtures::run(fixtures::base_scenario(1, 10.0, 0.001), o)["throughput_samples_per_s"].get<double>();
}
} // namespace

TEST(CpuCorunning, FunctionIsLinearBetweenTheEnds) {
  CpuSpec cpu;
  cpu.cores = 4;
  cpu.all_cores_efficiency = 0.8;
  EXPECT_DOUBLE_EQ(corunning_efficiency(cpu, 1), 1.0);
  EXPECT_DOUBLE_EQ(corunning_efficiency(cpu, 2), 1.0 - 0.2 / 3.0);
  EXPECT_DOUBLE_EQ(corunning_efficiency(cpu, 3), 1.0 - 0.4 / 3.0);
  EXPECT_DOUBLE_EQ(corunning_efficiency(cpu, 4), 0.8);
  EXPECT_DOUBLE_EQ(corunning_efficiency(cpu, 9), 0.8); // more execs than cores: all cores busy
  cpu.cores = 1;
  EXPECT_DOUBLE_EQ(corunning_efficiency(cpu, 3), 1.0); // one core never co-runs
}

// 4 workers on 4 cores, E = 0.8: every core busy, each at 0.8 of a reference core, 10 ms per sample:
// 4 x 0.8 / 0.010 s = 320 samples/s. Control: E = 1 gives 4 / 0.010 = 400.
TEST(CpuCorunning, AllCoresBusyRunAtAllCoresEfficiency) {
  EXPECT_NEAR(throughput(4, 4, 0.8), 320.0, 3.2);
  EXPECT_NEAR(throughput(4, 4, -1), 400.0, 4.0); // default: no slowdown
}

// 2 workers on 4 cores, E = 0.8: e(2) = 1 - (1 - 0.8)(2 - 1)/(4 - 1) = 0.93333,
// 2 x 0.93333 / 0.010 s = 186.67 samples/s (E = 1 would give 200, all-cores E would give 160).
TEST(CpuCorunning, PartlyBusyCpuInterpolatesLinearly) {
  const double e2 = 1.0 - (1.0 - 0.8) * (2.0 - 1.0) / (4.0 - 1.0);
  EXPECT_NEAR(throughput(2, 4, 0.8), 2.0 * e2 / 0.010, 0.01 * 2.0 * e2 / 0.010);
}

// 6 workers on 4 cores: the 4 cores are all busy (e(4) = 0.8) and shared by 6 execs:
// 4 x 0.8 / 0.010 = 320 samples/s, as with 4 workers. One core: e(1) = 1 whatever E is,
// 2 workers share it: 1 / 0.010 = 100 samples/s.
TEST(CpuCorunning, OversubscribedAndSingleCore) {
  EXPECT_NEAR(throughput(6, 4, 0.8), 320.0, 3.2);
  EXPECT_NEAR(throughput(2, 1, 0.5), 100.0, 1.0);
}

TEST(CpuCorunning, EfficiencyOutsideZeroOneIsRejected) {
  for (const char* bad : {"0", "-0.5", "1.5"}) {
    try {
      load(fixtures::base_scenario(), {std::string("hardware.nodes.0.cpu.all_cores_efficiency=") + bad});
      ADD_FAILURE() << bad << " accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("all_cores_efficiency"), std::string::npos) << e.what();
    }
  }
  EXPECT_DOUBLE_EQ(load(fixtures::base_scenario()).nodes.front().cpu.all_cores_efficiency, 1.0);
  EXPECT_DOUBLE_EQ(
      load(fixtures::base_scenario(), {"hardware.nodes.0.cpu.all_cores_efficiency=1"}).nodes.front().cpu.all_cores_efficiency,
      1.0);
}

// Execs straight on the platform's CPU host (in a child: one engine per process). 4 cores, E = 0.8,
// execs of 1, 2, 3, 4 reference core-seconds started together:
//   4 busy, e = 0.8:     the first ends at 1 / 0.8                          = 1.25
//   3 busy, e = 13/15:   the second has 2 - 1 = 1 left: 1.25 + 1 / (13/15)   = 2.403846
//   2 busy, e = 14/15:   the third has 1 left:          + 1 / (14/15)        = 3.475275
//   1 busy, e = 1:       the fourth has 1 left:         + 1                  = 4.475275
TEST(CpuCorunning, ExecsOnTheHostFollowTheStepwiseRates) {
  const std::string text = run_in_child([] {
    Scenario s = fixtures::load(fixtures::base_scenario(), {"hardware.nodes.0.cpu.cores=4",
                                                       "hardware.nodes.0.cpu.all_cores_efficiency=0.8"});
    auto engine = make_engine();
    Platform platform(s.platform_spec());
    auto* cpu = platform.trainers().front().cpu;
    std::vector<double> done(4, -1);
    for (int i = 0; i < 4; ++i)
      sg4::Actor::create("w" + std::to_string(i), cpu, [&done, i] {
        sg4::this_actor::execute((i + 1) * kWorkPerSecond);
        done[static_cast<size_t>(i)] = sg4::Engine::get_clock();
      });
    engine->run();
    std::ostringstream out;
    out.precision(17);
    for (double d : done)
      out << d << ' ';
    return out.str();
  });
  std::istringstream in(text);
  std::vector<double> done(4);
  for (double& d : done)
    in >> d;
  const double t1 = 1.0 / 0.8, t2 = t1 + 1.0 / (13.0 / 15.0), t3 = t2 + 1.0 / (14.0 / 15.0), t4 = t3 + 1.0;
  EXPECT_NEAR(done[0], t1, 1e-6);
  EXPECT_NEAR(done[1], t2, 1e-6);
  EXPECT_NEAR(done[2], t3, 1e-6);
  EXPECT_NEAR(done[3], t4, 1e-6);
}
