// Properties over randomised scenarios (fixed seeds): more cores never increase
// the accelerators' waiting (input + all-reduce) nor lower the throughput, a faster disk never slows a run, and throughput never exceeds the
// slowest stage's capacity.
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <random>

using namespace mlsim;

namespace {

struct Variant {
  std::string yaml;
  std::vector<std::string> overrides;
  int cores = 4;
};

Variant random_variant(unsigned seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  auto real = [&](double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); };
  Variant v;
  int gpus = 1 << pick(0, 2);
  v.yaml = fixtures::base_scenario(gpus, real(0.2, 4.0), real(0.5, 60.0), pick(0, 1) ? 5e6 : 0.0);
  v.cores = pick(1, 8);
  const char* frameworks[] = {"tf.data", "pytorch", "custom"};
  std::string fw = frameworks[pick(0, 2)];
  v.overrides = {"hardware.nodes.0.cpu.cores=" + std::to_string(v.cores), "pipeline.framework=" + fw,
                 "pipeline.prefetch=" + std::to_string(pick(0, 3)),
                 "pipeline.batch_size=" + std::to_string(8 * pick(1, 6)),
                 "dataset.sample_size={distribution: lognormal, mean: " + std::to_string(pick(20, 400)) +
                     " kB, stddev: 30 kB}",
                 "hardware.nodes.0.disks=[{name: d, sequential_read: " + std::to_string(pick(50, 2000)) +
                     " MB/s, random_read_iops: " + std::to_string(pick(100, 50000)) + ", latency: 50 us}]",
                 "dataset.location=local", "dataset.disk=d", "run.steps=40", "run.warmup_steps=10"};
  if (fw != "tf.data" || pick(0, 1))
    v.overrides.push_back("pipeline.workers=" + std::to_string(pick(1, 8)));
  return v;
}

constexpr unsigned kVariants = 6;

} // namespace

// The accelerators' waiting time counts input waits and all-reduce waits together: with per-core run
// queues (cpu_scheduler.hpp) too few cores serve some ranks' workers worse than others, and the other
// ranks then wait for the slow one inside the all-reduce rather than on their own input.
TEST(PipelineProperties, MoreCoresNeverIncreaseTheStall) {
  for (unsigned seed = 1; seed <= kVariants; ++seed) {
    Variant v = random_variant(seed);
    auto base = fixtures::run(v.yaml, v.overrides);
    auto more_overrides = v.overrides;
    more_overrides.push_back("hardware.nodes.0.cpu.cores=" + std::to_string(v.cores * 2));
    auto more = fixtures::run(v.yaml, more_overrides);
    auto waiting = [](const nlohmann::ordered_json& j) {
      return j["breakdown"]["input"].get<double>() + j["breakdown"]["collective"].get<double>();
    };
    EXPECT_LE(waiting(more), waiting(base) + 0.01) << "variant " << seed;
    EXPECT_GE(more["throughput_samples_per_s"].get<double>(), base["throughput_samples_per_s"].get<double>() * 0.99)
        << "variant " << seed;
  }
}

TEST(PipelineProperties, AFasterDiskNeverSlowsARun) {
  for (unsigned seed = 1; seed <= kVariants; ++seed) {
    Variant v = random_variant(seed);
    auto base = fixtures::run(v.yaml, v.overrides);
    auto faster = v.overrides;
    faster.push_back("hardware.nodes.0.disks.0.sequential_read=20 GB/s");
    faster.push_back("hardware.nodes.0.disks.0.random_read_iops=2000000");
    auto fast = fixtures::run(v.yaml, faster);
    EXPECT_GE(fast["throughput_samples_per_s"].get<double>(), base["throughput_samples_per_s"].get<double>() * 0.99)
        << "variant " << seed;
  }
}

TEST(PipelineProperties, ThroughputNeverExceedsTheSlowestStage) {
  for (unsigned seed = 1; seed <= kVariants; ++seed) {
    Variant v = random_variant(seed);
    auto j = fixtures::run(v.yaml, v.overrides);
    double t = j["throughput_samples_per_s"].get<double>();
    for (const auto& s : j["stages"])
      EXPECT_LE(t, s["capacity_samples_per_s"].get<double>() * 1.01) << "variant " << seed << " " << s["name"];
    EXPECT_LE(t, j["pipeline_capacity_samples_per_s"].get<double>() * 1.01) << "variant " << seed;
  }
}
