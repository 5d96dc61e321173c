// `mlsim sweep` and `mlsim merge` end to end: one row per point, shards whose
// union is the whole sweep, resume after a kill, error rows, exit codes.
#include "sim/core/base/csv.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace mlsim;

namespace {

int run_cli(const std::string& args) {
  int status = std::system((mlsim::fixtures::mlsim_binary() + " " + args + " 2>/dev/null").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Per test and process: ctest runs tests in parallel, and other build trees may run the same ones.
std::string temp(const std::string& name) {
  std::string p = mlsim::fixtures::scratch_dir() + "sweep_cli_" + ::testing::UnitTest::GetInstance()->current_test_info()->name() +
                  "_" + std::to_string(::getpid()) + "_" + name;
  std::filesystem::remove(p);
  return p;
}

// The closed-form base scenario as a file: 1 GPU, 16 cores, decode 1.2 ms per sample.
std::string base_file() {
  std::string p = temp("base.yaml");
  std::ofstream(p) << fixtures::base_scenario(1, 1.2, 1.0);
  return p;
}

CsvFile read_csv(const std::string& path) { return parse_csv(read_text_file(path), path); }

size_t count_rows(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  size_t n = 0;
  while (std::getline(in, line))
    ++n;
  return n == 0 ? 0 : n - 1;
}

const std::string kGrid = " --vary pipeline.workers=1..6 --vary pipeline.prefetch=2,4";

} // namespace

TEST(SweepCli, OneRowPerPointInGridOrderWithFigures) {
  std::string out = temp("full.csv");
  ASSERT_EQ(run_cli("sweep " + base_file() + kGrid + " --jobs 3 --out " + out), 0);
  CsvFile f = read_csv(out);
  ASSERT_EQ(f.rows.size(), 12u);
  EXPECT_EQ(f.header[1], "pipeline.workers");
  EXPECT_EQ(f.header[2], "pipeline.prefetch");
  std::map<std::string, size_t> col;
  for (size_t i = 0; i < f.header.size(); ++i)
    col[f.header[i]] = i;
  for (size_t p = 0; p < 12; ++p) {
    const CsvRow& r = f.rows[p];
    EXPECT_EQ(r[0], std::to_string(p));
    int workers = static_cast<int>(p / 2 + 1);
    EXPECT_EQ(r[1], std::to_string(workers));
    EXPECT_EQ(r[2], p % 2 == 0 ? "2" : "4");
    EXPECT_EQ(r[col["status"]], "ok");
    // k workers at 1.2 ms per sample deliver k / 1.2 ms samples/s; the device alone needs ~4.93 ms per 32.
    double supply = workers / 1.2e-3, device = 32 / (3 * 1e9 * 32 / 19.5e12);
    EXPECT_NEAR(std::stod(r[col["throughput_samples_per_s"]]), std::min(supply, device), 0.02 * supply);
  }
  // Deterministic: the same sweep with other parallelism gives the same bytes.
  std::string again = temp("full_again.csv");
  ASSERT_EQ(run_cli("sweep " + base_file() + kGrid + " --jobs 1 --out " + again), 0);
  EXPECT_EQ(read_text_file(out), read_text_file(again));
}

TEST(SweepCli, ShardsUnionIsTheWholeSweepAndMergeRestoresIt) {
  std::string full = temp("whole.csv");
  ASSERT_EQ(run_cli("sweep " + base_file() + kGrid + " --out " + full), 0);
  std::vector<std::string> parts;
  std::string all;
  size_t total = 0;
  for (int i = 0; i < 5; ++i) {
    parts.push_back(temp("part" + std::to_string(i) + ".csv"));
    ASSERT_EQ(run_cli("sweep " + base_file() + kGrid + " --shard " + std::to_string(i) + "/5 --out " + parts.back()), 0);
    total += count_rows(parts.back());
    all += " " + parts.back();
  }
  EXPECT_EQ(total, 12u); // no overlap
  std::string merged = temp("merged.csv");
  ASSERT_EQ(run_cli("merge" + all + " --out " + merged), 0);
  EXPECT_EQ(read_text_file(merged), read_text_file(full)); // nothing missing, grid order
  EXPECT_EQ(run_cli("merge " + parts[0] + " " + full + " > /dev/null"), 0); // overlapping identical rows are fine
  EXPECT_EQ(run_cli("merge " + parts[0] + " > /dev/null"), 3); // shard 0 alone: points 1..4 are missing
}

TEST(SweepCli, ResumeAfterAStopLosesNothingAndRunsNothingTwice) {
  std::string full = temp("ref.csv"), out = temp("stopped.csv");
  ASSERT_EQ(run_cli("sweep " + base_file() + kGrid + " --out " + full), 0);
  // The sweep exits abruptly (no cleanup, like a kill) after 5 rows, with 3 children in flight.
  int status = std::system(("MLSIM_SWEEP_STOP_AFTER=5 " + mlsim::fixtures::mlsim_binary() + " sweep " + base_file() +
                             kGrid + " --jobs 3 --out " + out + " 2>/dev/null")
                                .c_str());
  EXPECT_NE(WEXITSTATUS(status), 0);
  EXPECT_EQ(count_rows(out), 5u);
  ASSERT_EQ(run_cli("sweep " + base_file() + kGrid + " --jobs 3 --out " + out + " --resume"), 0);
  EXPECT_EQ(read_text_file(out), read_text_file(full)); // every point exactly once, in grid order
}

TEST(SweepCli, ResumeAfterSigkillLosesNoFinishedPoint) {
  // Slow points (quickstart, ~0.3 s each), one at a time, killed once two rows are in the file.
  std::string q = fixtures::source_path("scenarios/quickstart.yaml");
  std::string out = temp("killed.csv");
  std::string grid = " --vary hardware.nodes.0.cpu.cores=8..64:8";
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::execl(mlsim::fixtures::mlsim_binary().c_str(), mlsim::fixtures::mlsim_binary().c_str(), "sweep", q.c_str(), "--vary", "hardware.nodes.0.cpu.cores=8..64:8", "--jobs",
            "1", "--out", out.c_str(), static_cast<char*>(nullptr));
    std::_Exit(127);
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (count_rows(out) < 2 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the sweep finished before it could be killed";
  size_t kept = count_rows(out);
  EXPECT_GE(kept, 2u);
  EXPECT_LT(kept, 8u);
  ASSERT_EQ(run_cli("sweep " + q + grid + " --jobs 2 --out " + out + " --resume"), 0);
  CsvFile f = read_csv(out);
  ASSERT_EQ(f.rows.size(), 8u);
  for (size_t p = 0; p < 8; ++p) {
    EXPECT_EQ(f.rows[p][0], std::to_string(p));
    EXPECT_EQ(f.rows[p][1], std::to_string(8 * (p + 1)));
    EXPECT_EQ(f.rows[p][2], "ok");
  }
}

TEST(SweepCli, ResumeRefusesAFileOfAnotherGrid) {
  std::string out = temp("other.csv");
  ASSERT_EQ(run_cli("sweep " + base_file() + " --vary pipeline.workers=1,2 --out " + out), 0);
  EXPECT_EQ(run_cli("sweep " + base_file() + " --vary pipeline.workers=3,4 --out " + out + " --resume"), 2);
  EXPECT_EQ(run_cli("sweep " + base_file() + " --vary pipeline.prefetch=1,2 --out " + out + " --resume"), 2);
}

TEST(SweepCli, AFailingPointIsAnErrorRowNotADeadSweep) {
  // A ResNet-50 step graph: batch 4096 does not fit in 40 GB, found only when the step is planned.
  std::string p = temp("graph.yaml");
  std::string text = fixtures::base_scenario(1, 0.01, 1.0);
  auto at = text.find("model:");
  text = text.substr(0, at) + "model: {preset: resnet50, precision: fp32}\nrun: {steps: 6, warmup_steps: 1, seed: 7}\n";
  std::ofstream(p) << text;
  std::string out = temp("errors.csv");
  ASSERT_EQ(run_cli("sweep " + p + " --vary pipeline.batch_size=8,4096 --out " + out), 0);
  CsvFile f = read_csv(out);
  ASSERT_EQ(f.rows.size(), 2u);
  EXPECT_EQ(f.rows[0][2], "ok");
  EXPECT_EQ(f.rows[1][2], "error");
  EXPECT_NE(f.rows[1].back().find("fits"), std::string::npos) << f.rows[1].back();
}

TEST(SweepCli, ATypoAnywhereInTheGridFailsBeforeAnythingRuns) {
  std::string out = temp("typo.csv");
  EXPECT_EQ(run_cli("sweep " + base_file() + " --vary pipeline.workers=1,2,-3 --out " + out), 2);
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_EQ(run_cli("sweep " + base_file() + " --vary pipeline.wrokers=1,2 --out " + out), 2);
  EXPECT_EQ(run_cli("sweep " + base_file() + " --vary pipeline.workers=1,2 --shard 2/2"), 2);
  EXPECT_EQ(run_cli("sweep --help > /dev/null"), 0);
  EXPECT_EQ(run_cli("merge --help > /dev/null"), 0);
}
