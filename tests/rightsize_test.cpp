// `mlsim rightsize` finds the answer a closed form gives.
//
// The base scenario (tests/test_support.hpp) with decode x = 1 ms per sample:
// k workers on 16 cores deliver k / x samples/s; the device needs a batch of
// 32 every T = 3 x 1 GFLOP x 32 / 19.5 TFLOP/s + the copy. Below k* = 32 x / T
// workers the step is the pipeline's period 32 x / k and the stall share is
// 1 - k / k*; from k* on the prefetch buffer hides the input entirely.
#include "sim/core/base/csv.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sys/wait.h>
#include <unistd.h>

using namespace mlsim;

namespace {

struct Cli {
  int code = -1;
  std::string out;
};

Cli run_cli(const std::string& args) {
  Cli r;
  FILE* p = ::popen((mlsim::fixtures::mlsim_binary() + " " + args + " 2>&1").c_str(), "r");
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0)
    r.out.append(buf, n);
  int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string temp(const std::string& name) {
  return ::testing::TempDir() + "rightsize_" + ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" +
         std::to_string(::getpid()) + "_" + name;
}

constexpr double kDecode = 1e-3;
std::string base_file() {
  std::string p = temp("base.yaml");
  std::ofstream(p) << fixtures::base_scenario(1, kDecode * 1e3, 1.0);
  return p;
}

double device_step() {
  double copy = 1e-6 + 32 * 1e3 / (16 * (16e9 * 128.0 / 130.0 / 8.0) * 0.8);
  return 3 * 1e9 * 32 / 19.5e12 + copy;
}
double k_star() { return 32 * kDecode / device_step(); }

// The smallest worker count whose closed-form figure passes.
int smallest_workers(bool (*passes)(int k)) {
  for (int k = 1; k <= 16; ++k)
    if (passes(k))
      return k;
  return -1;
}

std::string answer_of(const Cli& r) {
  auto at = r.out.find("smallest pipeline.workers with ");
  if (at == std::string::npos)
    return "<none>";
  auto colon = r.out.find(": ", at);
  return r.out.substr(colon + 2, r.out.find(' ', colon + 2) - colon - 2);
}

} // namespace

TEST(Rightsize, SmallestWorkersForStallBelowFivePercent) {
  int expected = smallest_workers([](int k) { return k >= k_star() || 1.0 - k / k_star() < 0.05; });
  ASSERT_EQ(expected, 7); // k* = 6.5: 6 workers stall 7.6 %, 7 workers not at all
  std::string curve = temp("curve.csv");
  Cli r = run_cli("rightsize " + base_file() + " --vary pipeline.workers=1..16 --target 'stall<0.05' --jobs 2 --out " +
                  curve);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(answer_of(r), std::to_string(expected)) << r.out;
  EXPECT_NE(r.out.find("bisection"), std::string::npos) << r.out;
  // The curve: fewer simulations than candidates, each figure on the closed form, the neighbour below simulated.
  CsvFile f = parse_csv(read_text_file(curve), curve);
  EXPECT_LT(f.rows.size(), 16u);
  bool saw_below = false;
  for (const auto& row : f.rows) {
    int k = std::stoi(row[1]);
    double stall = std::stod(row[6]);
    double closed = k >= k_star() ? 0.0 : 1.0 - k / k_star();
    EXPECT_NEAR(stall, closed, 0.01) << "workers " << k;
    EXPECT_EQ(row.back(), k >= expected ? "1" : "0") << "workers " << k;
    saw_below = saw_below || k == expected - 1;
  }
  EXPECT_TRUE(saw_below);
}

TEST(Rightsize, UtilizationAndStepTimeTargets) {
  // Utilisation = T / step = k / k* below k*: > 0.9 from k = 6 (0.92); step = 32 x / k < 6 ms from k = 6 (5.3 ms).
  int util = smallest_workers([](int k) { return std::min(1.0, k / k_star()) > 0.9; });
  int step = smallest_workers([](int k) { return std::max(32 * kDecode / k, device_step()) < 6e-3; });
  ASSERT_EQ(util, 6);
  ASSERT_EQ(step, 6);
  Cli u = run_cli("rightsize " + base_file() + " --vary pipeline.workers=1..16 --target 'utilization>0.9' --jobs 1");
  EXPECT_EQ(u.code, 0) << u.out;
  EXPECT_EQ(answer_of(u), std::to_string(util)) << u.out;
  Cli s = run_cli("rightsize " + base_file() + " --vary pipeline.workers=1..16 --target 'step_time<6 ms' --jobs 4");
  EXPECT_EQ(s.code, 0) << s.out;
  EXPECT_EQ(answer_of(s), std::to_string(step)) << s.out;
}

TEST(Rightsize, SameAnswerWhateverTheParallelism) {
  for (int jobs : {1, 3, 8}) {
    Cli r = run_cli("rightsize " + base_file() + " --vary pipeline.workers=1..40 --target 'stall<5%' --jobs " +
                    std::to_string(jobs));
    EXPECT_EQ(r.code, 0) << r.out;
    EXPECT_EQ(answer_of(r), "7") << "jobs " << jobs << "\n" << r.out;
  }
}

TEST(Rightsize, UnreachableTargetAndBadInput) {
  Cli none = run_cli("rightsize " + base_file() + " --vary pipeline.workers=1..4 --target 'stall<0.05'");
  EXPECT_EQ(none.code, 3) << none.out;
  EXPECT_NE(none.out.find("no value"), std::string::npos);
  EXPECT_EQ(run_cli("rightsize " + base_file() + " --vary pipeline.workers=1..4 --target 'stal<0.05'").code, 2);
  EXPECT_EQ(run_cli("rightsize " + base_file() + " --vary pipeline.workers=1..4 --target 'stall=0.05'").code, 2);
  EXPECT_EQ(run_cli("rightsize " + base_file() + " --vary pipeline.workers=-2..4 --target 'stall<0.05'").code, 2);
  EXPECT_EQ(run_cli("rightsize " + base_file() + " --vary model.dtype=fp32,fp16 --target 'stall<0.05'").code, 2);
  EXPECT_EQ(run_cli("rightsize --help").code, 0);
}
