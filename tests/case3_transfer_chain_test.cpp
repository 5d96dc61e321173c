// Seed case 3: the transfer chain of an 8-GPU P100 server. A chain is only as
// fast as its slowest link, and downsizing camera images offline pays.
#include "test_support.hpp"

#include <gtest/gtest.h>

using mlsim::fixtures::source_path;

namespace {
nlohmann::ordered_json run_case(const std::string& name, const std::vector<std::string>& overrides = {}) {
  return mlsim::simulate_file_in_child(source_path("scenarios/cases/" + name + ".yaml"), overrides);
}
// The closed forms below are steady-state rates. The scenarios' 8 steps include the start, when the
// first batches (prefetch 2) all read at once and share the disk: over them the rate is ~4 % lower,
// and the sizes drawn move it by ~1 % either way. 40 steps measure the steady state.
const std::vector<std::string> kSteadyState{"run.steps=40"};
bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}
constexpr double kImageBytes = 3.5e6; // mean camera JPEG in the scenarios
} // namespace

TEST(Case3TransferChain, HddIsTheSlowestLink) {
  auto j = run_case("case3-p100-hdd", kSteadyState);
  EXPECT_EQ(j["bottleneck"]["kind"], "link");
  EXPECT_TRUE(ends_with(j["bottleneck"]["name"], ".hdd")) << j["bottleneck"];
  EXPECT_TRUE(ends_with(j["slowest_link"]["name"], ".hdd"));
  EXPECT_GT(j["slowest_link"]["utilization"].get<double>(), 0.9);
  // 3.5 MB files: 120 IOPS x 3.5 MB > 100 MB/s, so the HDD is bandwidth-bound at 100 MB/s.
  EXPECT_NEAR(j["throughput_samples_per_s"].get<double>(), 100e6 / kImageBytes, 0.05 * 100e6 / kImageBytes);
}

TEST(Case3TransferChain, SsdIsFiveTimesTheHdd) {
  auto j = run_case("case3-p100-ssd", kSteadyState);
  EXPECT_TRUE(ends_with(j["bottleneck"]["name"], ".ssd")) << j["bottleneck"];
  EXPECT_NEAR(j["throughput_samples_per_s"].get<double>(), 500e6 / kImageBytes, 0.05 * 500e6 / kImageBytes);
}

TEST(Case3TransferChain, OverTheNicTheCpuDecodeLimitsFirst) {
  auto j = run_case("case3-p100-nic");
  // The NIC (16 Gb/s = 2 GB/s) is the slowest link of the chain...
  EXPECT_TRUE(ends_with(j["slowest_link"]["name"], ".nic")) << j["slowest_link"];
  double nic_rate = 2e9 / kImageBytes;
  // ...but decoding 12-megapixel JPEGs on 40 cores at 0.8 speed is slower still:
  // (0.3 ms + 12e6 x 9 ns) + 12e6 x 1 ns + 50176 x 3 ns per image.
  double cpu_rate = 40 * 0.8 / ((0.3e-3 + 12e6 * 9e-9) + 12e6 * 1e-9 + 50176 * 3e-9);
  double t = j["throughput_samples_per_s"].get<double>();
  EXPECT_LT(t, std::min(nic_rate, cpu_rate) * 1.01);
  EXPECT_GT(t, 0.9 * cpu_rate);
  EXPECT_EQ(j["bottleneck"]["kind"], "stage");
  EXPECT_EQ(j["bottleneck"]["name"], "decode_jpeg");
}

TEST(Case3TransferChain, DownsizingOfflineMovesTheBottleneckToTheGpus) {
  auto ssd = run_case("case3-p100-ssd");
  auto small = run_case("case3-p100-downsized");
  EXPECT_GT(small["throughput_samples_per_s"].get<double>(), 10 * ssd["throughput_samples_per_s"].get<double>());
  EXPECT_EQ(small["bottleneck"]["kind"], "device");
  EXPECT_EQ(small["input_bound"], "not");
}
