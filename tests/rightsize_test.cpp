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
  return mlsim::fixtures::scratch_dir() + "rightsize_" + ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" +
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

namespace {
// The figure after `label` in the text ("... CPU stages 28.9 % used" -> 28.9).
double number_after(const std::string& text, const std::string& label) {
  auto at = text.find(label);
  return at == std::string::npos ? -1.0 : std::stod(text.substr(at + label.size()));
}
nlohmann::json cores_needed_of(const std::vector<std::string>& sets) {
  std::string json = temp("run.json"), args = "run " + base_file() + " --quiet --no-recommendations --json " + json;
  for (const auto& s : sets)
    args += " --set " + s;
  Cli r = run_cli(args);
  EXPECT_EQ(r.code, 0) << r.out;
  return nlohmann::json::parse(read_text_file(json))["cores_needed"];
}
} // namespace

// Cores and workers together: both must reach k* = 6.5, so (7, 7); cores alone with 4 workers never do.
TEST(Rightsize, CoresTogetherWithWorkers) {
  Cli r = run_cli("rightsize " + base_file() + " --vary cores=1..16 --vary workers=1..16 --target 'stall<0.05' -j 3");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("hardware.nodes.0.cpu.cores = 7, pipeline.workers = 7"), std::string::npos) << r.out;
}

// On demand (prefetch 0) the batch is made after the step asks for it: a stall whatever the cores. Any depth
// >= 1 overlaps making with the step, and then the cores must reach k*: (7, 1). Short names, default ranges.
TEST(Rightsize, CoresTogetherWithPrefetchByShortNames) {
  Cli r = run_cli("rightsize " + base_file() +
                  " --set pipeline.prefetch=0 --set pipeline.workers=16 --vary cores,prefetch --target 'stall<5%' -j 2");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("hardware.nodes.0.cpu.cores = 7, pipeline.prefetch = 1"), std::string::npos) << r.out;
  EXPECT_EQ(run_cli("rightsize " + base_file() + " --vary cores,depth --target 'stall<5%'").code, 2);
  EXPECT_EQ(run_cli("rightsize " + base_file() + " --vary cores --vary cores=1..4 --target 'stall<5%'").code, 2);
}

// Unreachable: the message names what binds, with the closed-form figures.
TEST(Rightsize, UnreachableTargetNamesTheLimiter) {
  // 6 cores and 6 workers: 1 ms x 32 / 6 = 5.33 ms per step > the device's T.
  Cli cores = run_cli("rightsize " + base_file() + " --vary cores=1..6 --vary workers --target 'stall<0.05' -j 2");
  EXPECT_EQ(cores.code, 3) << cores.out;
  EXPECT_NE(cores.out.find("bound by stage decode: 1.00 ms/sample x 32 samples / 6 cores = 5.33 ms per step"),
            std::string::npos)
      << cores.out;
  EXPECT_NEAR(number_after(cores.out, "per step > "), device_step() * 1e3, 0.02) << cores.out;
  // 4 workers (as written) on up to 64 cores: 1 ms x 32 / 4 = 8 ms, the workers bind.
  Cli workers = run_cli("rightsize " + base_file() + " --vary cores=1..64 --target 'stall<0.05' -j 2");
  EXPECT_EQ(workers.code, 3) << workers.out;
  EXPECT_NE(workers.out.find("/ 4 workers (of 64 cores) = 8.00 ms per step"), std::string::npos) << workers.out;
  // On demand with 16 workers: CPU use = (32 / (P + T)) / (16 / x) with P = 2 ms; no capacity binds.
  Cli demand = run_cli("rightsize " + base_file() +
                       " --set pipeline.prefetch=0 --set pipeline.workers=16 --vary cores=1..64 --target 'stall<0.05'");
  EXPECT_EQ(demand.code, 3) << demand.out;
  EXPECT_NE(demand.out.find("no capacity binds"), std::string::npos) << demand.out;
  double p = 32 * kDecode / 16, use = 32 / (p + device_step()) / (16 / kDecode);
  EXPECT_NEAR(number_after(demand.out, "CPU stages "), 100 * use, 1.0) << demand.out;
}

// `mlsim run`'s cores_needed varies the loader settings the limiter names along with the cores.
TEST(CoresNeeded, WorkersFollowTheCoresWhenTheyBind) {
  auto c = cores_needed_of({});
  ASSERT_TRUE(c["found"].get<bool>()) << c.dump(2);
  EXPECT_EQ(c["per_node"].get<int>(), 7); // ceil(k*)
  EXPECT_EQ(c["with"]["pipeline.workers"], "cores");
  EXPECT_EQ(c["limiter"]["kind"], "workers");
}

TEST(CoresNeeded, PrefetchDepthWhenNothingBinds) {
  auto c = cores_needed_of({"pipeline.prefetch=0", "pipeline.workers=16"});
  ASSERT_TRUE(c["found"].get<bool>()) << c.dump(2);
  EXPECT_EQ(c["per_node"].get<int>(), 7);
  EXPECT_EQ(c["with"]["pipeline.prefetch"], "1");
  EXPECT_FALSE(c["with"].contains("pipeline.workers")); // 16 workers already cover 7 cores
  EXPECT_EQ(c["limiter"]["kind"], "prefetch");
}

TEST(CoresNeeded, CoresAloneWhenTheyAreEnough) {
  auto c = cores_needed_of({"pipeline.workers=16"});
  ASSERT_TRUE(c["found"].get<bool>()) << c.dump(2);
  EXPECT_EQ(c["per_node"].get<int>(), 7);
  EXPECT_TRUE(c["with"].empty());
  EXPECT_FALSE(c.contains("limiter"));
}
