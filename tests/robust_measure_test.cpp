// Measuring on a noisy host (robust_measure.hpp, host_bench.hpp balance delay), on made-up runs:
//  - a run whose reference spin loop drifted beyond the threshold is left out of the medians;
//  - spreads are half the range over the kept runs (throughput relative, stall absolute);
//  - every run drifted: all kept, all counted as rejected;
//  - balance-delay trials: the median is robust to a minority capped at the hold; the capped are counted.
#include "sim/validate/host_bench.hpp"
#include "sim/validate/robust_measure.hpp"

#include <gtest/gtest.h>

#include <sched.h>
#include <sstream>
#include <thread>

using namespace mlsim::validate;

namespace {
Measured run(double throughput, double stall) {
  Measured m;
  m.throughput = throughput;
  m.stall = stall;
  m.step_time_s = 16 / throughput;
  return m;
}
} // namespace

TEST(RobustMeasure, DriftedRunsAreLeftOut) {
  // Runs 0 and 2 kept (drift +2 %, -1 %), run 1 rejected (+25 %: its figure is an outlier).
  const RobustMeasured r = aggregate_runs({run(100, 0.20), run(60, 0.50), run(110, 0.10)}, {1.0, 1.0, 1.0},
                                          {1.02, 1.25, 0.99}, 1.0, 0.10);
  EXPECT_EQ(r.runs, 3);
  EXPECT_EQ(r.rejected, 1);
  EXPECT_DOUBLE_EQ(r.median.throughput, 105.0);
  EXPECT_DOUBLE_EQ(r.median.stall, 0.15);
  EXPECT_NEAR(r.throughput_spread, (110.0 - 100.0) / (2 * 105.0), 1e-12);
  EXPECT_NEAR(r.stall_spread, (0.20 - 0.10) / 2, 1e-12);
  EXPECT_NEAR(r.max_abs_drift, 0.25, 1e-12);
  ASSERT_EQ(r.drifts.size(), 3u);
  EXPECT_NEAR(r.drifts[2], -0.01, 1e-12);
}

TEST(RobustMeasure, AllDriftedKeepsEveryRun) {
  const RobustMeasured r = aggregate_runs({run(100, 0.2), run(120, 0.1)}, {1.0, 1.0}, {1.3, 0.7}, 1.0, 0.10);
  EXPECT_EQ(r.rejected, 2);
  EXPECT_DOUBLE_EQ(r.median.throughput, 110.0);
}

TEST(RobustMeasure, SpeedIsRelativeToTheSessionStart) {
  // The reference took 10 % longer than at the start, before and after: the host runs at 1/1.1.
  const RobustMeasured r = aggregate_runs({run(100, 0.2)}, {1.1}, {1.1}, 1.0, 0.10);
  EXPECT_NEAR(r.speed, 1 / 1.1, 1e-12);
  EXPECT_EQ(r.rejected, 0);
}

TEST(RobustMeasure, SpeedAgainstTheCalibration) {
  // Runs whose reference took 1.2, 1.3 and 1.25 x 1 ms (mean of before and after): the median, 1.25 ms.
  // Calibrated at 1 ms, the cores now run at 1 / 1.25 of that speed.
  const RobustMeasured r = aggregate_runs({run(100, 0.2), run(90, 0.2), run(95, 0.2)}, {1.2e-3, 1.3e-3, 1.2e-3},
                                          {1.2e-3, 1.3e-3, 1.3e-3}, 1e-3, 0.10);
  EXPECT_NEAR(r.reference_s, 1.25e-3, 1e-15);
  EXPECT_NEAR(speed_vs_calibration(1e-3, r.reference_s), 0.8, 1e-12);
  EXPECT_DOUBLE_EQ(speed_vs_calibration(0.0, r.reference_s), 1.0); // a profile without a reference
  EXPECT_GT(reference_spin_s(), 0.0); // on each allowed core, the affinity put back
  cpu_set_t now;
  ASSERT_EQ(sched_getaffinity(0, sizeof now, &now), 0);
  EXPECT_EQ(CPU_COUNT(&now), static_cast<int>(std::thread::hardware_concurrency()));
}

TEST(RobustMeasure, SpreadConfigurationsRunAgain) {
  // Configuration 1 measures 100, 50, 100, 50, ... samples/s (a spread of 1/3 around its median of 75):
  // after the two rounds it runs again, alone, up to four runs in all. Configuration 0 is steady: two runs.
  std::vector<size_t> order;
  std::ostringstream log;
  RobustOptions opt;
  opt.repeats = 2;
  opt.max_repeats = 4;
  opt.drift_threshold = 10.0;
  int flips = 0;
  const auto out = measure_interleaved(
      2, opt,
      [&](size_t i) {
        order.push_back(i);
        return i == 0 ? run(80.0, 0.0) : run(flips++ % 2 ? 50.0 : 100.0, 0.0);
      },
      [](size_t i) { return std::to_string(i); }, log);
  EXPECT_EQ(order, (std::vector<size_t>{0, 1, 1, 0, 1, 1}));
  EXPECT_EQ(out[0].runs, 2);
  EXPECT_EQ(out[1].runs, 4);
  EXPECT_DOUBLE_EQ(out[1].median.throughput, 75.0);
  EXPECT_NE(log.str().find("[3/4 spread]"), std::string::npos) << log.str();
}

TEST(RobustMeasure, InterleavesRepeats) {
  std::vector<size_t> order;
  std::ostringstream log;
  const auto out = measure_interleaved(
      3, {2, 10.0}, [&](size_t i) { order.push_back(i); return run(10.0 * (i + 1), 0.0); },
      [](size_t i) { return std::to_string(i); }, log);
  EXPECT_EQ(order, (std::vector<size_t>{0, 1, 2, 1, 2, 0})); // repeat 2 rotated by one
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[1].runs, 2);
  EXPECT_DOUBLE_EQ(out[1].median.throughput, 20.0);
}

TEST(BusyWakeDelay, TrialsAreBusyOversleepsLessTheIdleMedian) {
  // idle oversleeps 0.1, 0.2, 0.9 ms: median 0.2 ms (the 0.9 ms outlier does not move it)
  const auto s = summarise_wake_delay({0.0031, 0.0001, 0.0051, 0.0022}, {0.0001, 0.0002, 0.0009});
  EXPECT_EQ(s.trials, 4);
  // delays 2.9, 0 (clamped: woke before the idle median), 4.9, 2.0 ms: median (2.0 + 2.9) / 2
  EXPECT_NEAR(s.median_s, 0.00245, 1e-12);
  EXPECT_NEAR(s.p10_s, 0.3 * 0.0020, 1e-12); // 0, 2.0, 2.9, 4.9 ms: p10 at 0.3 of the way from 0 to 2.0
  EXPECT_EQ(summarise_wake_delay({}, {0.001}).trials, 0);
  EXPECT_EQ(summarise_wake_delay({0.001}, {}).trials, 0);
}

TEST(BalanceDelay, MedianIsRobustToAMinorityOfCappedTrials) {
  const auto s = summarise_balance_delay({0.010, 0.040, 0.008, 0.012, 0.040}, 0.040);
  EXPECT_EQ(s.trials, 5);
  EXPECT_EQ(s.capped, 2);
  EXPECT_DOUBLE_EQ(s.median_s, 0.012);
  // quantiles by linear interpolation over 0.008 0.010 0.012 0.040 0.040: p25 0.010, p75 0.040
  EXPECT_NEAR(s.spread, (0.040 - 0.010) / (2 * 0.012), 1e-12);
  EXPECT_NEAR(s.p10_s, 0.008 + 0.4 * 0.002, 1e-12);
  const auto busy = summarise_balance_delay({0.040, 0.040, 0.005}, 0.040);
  EXPECT_EQ(busy.capped, 2);
  EXPECT_DOUBLE_EQ(busy.median_s, 0.040);
}

// The consumer's reference is timed right before and right after each run (beside the spin); a configuration
// keeps the median over its runs of each run's before/after mean. Here the reference returns 1, 2, 3, ... ms in
// the order it is called; round 1 runs 0, 1, 2 (means 1.5, 3.5, 5.5 ms), round 2 rotated runs 1, 2, 0 (7.5, 9.5,
// 11.5 ms), so the configurations keep (1.5 + 11.5) / 2, (3.5 + 7.5) / 2 and (5.5 + 9.5) / 2.
TEST(RobustMeasure, TheConsumerReferenceIsTimedAroundEachRun) {
  std::ostringstream log;
  RobustOptions opt;
  opt.repeats = 2;
  opt.drift_threshold = 10.0;
  int calls = 0;
  opt.consumer_reference = [&] { return 1e-3 * ++calls; };
  const auto out = measure_interleaved(
      3, opt, [&](size_t) { return run(10.0, 0.0); }, [](size_t i) { return std::to_string(i); }, log);
  EXPECT_EQ(calls, 12);
  EXPECT_NEAR(out[0].consumer_reference_s, 6.5e-3, 1e-15);
  EXPECT_NEAR(out[1].consumer_reference_s, 5.5e-3, 1e-15);
  EXPECT_NEAR(out[2].consumer_reference_s, 7.5e-3, 1e-15);
  EXPECT_NE(log.str().find("consumer reference 1.500 ms"), std::string::npos) << log.str();
  // Without one nothing is timed and nothing is kept.
  const auto bare = measure_interleaved(
      1, {1, 10.0}, [&](size_t) { return run(10.0, 0.0); }, [](size_t i) { return std::to_string(i); }, log);
  EXPECT_EQ(bare[0].consumer_reference_s, 0.0);
  EXPECT_GT(reference_gemm_s(32), 0.0);
}
