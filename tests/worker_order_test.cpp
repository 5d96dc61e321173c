// Whole-batch workers of different speeds, against closed forms (input_pipeline.hpp, batch_queue.hpp):
// two DataLoader workers on a host with cores to spare, one whose own page faults (cpu.launch as a list,
// cpu.hpp) make its batch twice as long: 8 samples of 2 ms (launch 0) or 2 ms + 200 faults x 10 us = 4 ms
// (launch 1), so 16 ms and 32 ms a batch; the device step is 1 ms, so the loader sets the pace.
//   round robin (pytorch's default): batch i to worker i mod 2 -> 2 batches per 32 ms, a step of 16 ms;
//   first free (a pool's shared queue): 1/16 + 1/32 batches a ms -> 10.67 ms;
//   both workers at launch 0 / launch 1: 8 ms / 16 ms.
#include "test_support.hpp"

#include <gtest/gtest.h>

using namespace mlsim;

namespace {
std::string scenario() {
  std::string yaml = fixtures::base_scenario(1, 0.01, 1.0);
  auto replace = [&](const std::string& from, const std::string& to) {
    auto at = yaml.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    yaml.replace(at, from.size(), to);
  };
  replace("cpu: {cores: 16, core_speed: 1.0}",
          "cpu: {cores: 16, core_speed: 1.0, page_fault: 10 us, stage_costs: {flip: {per_sample: 2 ms, "
          "fresh_pages: {pixels: [1000, 10000], pages: [0, 0], launches: [[0, 0], [200, 200]]}}}}");
  replace("sample_size: 1 kB", "sample_size: 15 kB\n  image: {width: 100, height: 50, channels: 3}");
  replace("framework: tf.data", "framework: pytorch");
  replace("batch_size: 32", "batch_size: 8");
  replace("workers: 4", "workers: 2");
  replace("prefetch: 2", "prefetch_factor: 2\n  persistent_workers: true\n"
                         "  framework_costs: {receive_per_batch: 0 s, receive_per_byte: 0 s, worker_per_batch: 0 s, "
                         "worker_per_byte: 0 s, receive_latency: 0 s}");
  replace("    - read\n    - {name: decode, cost: {per_sample: 0.01 ms}}", "    - {name: flip, cost: flip}");
  auto at = yaml.find("model:");
  yaml = yaml.substr(0, at) + "model: {step_time: 1 ms}\n" + yaml.substr(yaml.find("run:"));
  return yaml;
}
// Long enough that the batches buffered ahead when the window opens (at most 4 + 1) are a small share.
double step_ms(std::vector<std::string> overrides) {
  overrides.insert(overrides.end(), {"run.steps=600", "run.warmup_steps=100"});
  return fixtures::run(scenario(), overrides)["step_time_s"]["mean"].get<double>() * 1e3;
}
} // namespace

TEST(WorkerOrder, RoundRobinGoesAtTheSlowestWorkersPace) {
  EXPECT_NEAR(step_ms({"hardware.nodes.0.cpu.launch=0"}), 8.0, 0.02 * 8.0);
  EXPECT_NEAR(step_ms({"hardware.nodes.0.cpu.launch=1"}), 16.0, 0.02 * 16.0);
  EXPECT_NEAR(step_ms({"hardware.nodes.0.cpu.launch=[0, 1]"}), 16.0, 0.02 * 16.0);
  EXPECT_NEAR(step_ms({"hardware.nodes.0.cpu.launch=[1, 0]"}), 16.0, 0.02 * 16.0);
}

TEST(WorkerOrder, AFirstFreePoolAddsTheWorkersRates) {
  const double pool = 1.0 / (1.0 / 16.0 + 1.0 / 32.0);
  EXPECT_NEAR(step_ms({"hardware.nodes.0.cpu.launch=[0, 1]", "pipeline.worker_assignment=first_free"}), pool,
              0.02 * pool);
  // The order the step takes them in does not change a loader's rate, only when it waits.
  EXPECT_NEAR(step_ms({"hardware.nodes.0.cpu.launch=[0, 1]", "pipeline.worker_assignment=first_free",
                       "pipeline.batch_order=as_ready"}),
              pool, 0.02 * pool);
}

TEST(WorkerOrder, RejectsKeysAndListsThatDoNotApply) {
  std::string yaml = scenario();
  EXPECT_THROW(fixtures::load(yaml, {"pipeline.worker_assignment=every_other"}), InputError);
  EXPECT_THROW(fixtures::load(yaml, {"pipeline.batch_order=sorted"}), InputError);
  EXPECT_THROW(fixtures::load(yaml, {"hardware.nodes.0.cpu.launch=[0, 2]"}), InputError); // launches 0 and 1
  EXPECT_THROW(fixtures::load(yaml, {"hardware.nodes.0.cpu.launch=[0.5]"}), InputError);
  EXPECT_THROW(fixtures::load(yaml, {"hardware.nodes.0.cpu.launch=[]"}), InputError);
  // A tf.data pipeline's workers are threads of one process: no per-worker launches, no assignment keys.
  EXPECT_THROW(fixtures::load(yaml, {"pipeline.framework=tf.data", "hardware.nodes.0.cpu.launch=[0, 1]"}), InputError);
  EXPECT_THROW(fixtures::load(yaml, {"pipeline.framework=tf.data", "pipeline.worker_assignment=first_free"}),
               InputError);
}

TEST(WorkerOrder, RoundRobinOverANodesPoolServesEveryAccelerator) {
  // keras-generator's workers are one pool for the node's accelerators: round robin cycles over the pool by
  // the node's batch (4 accelerators, 2 workers: once an out-of-range worker index and an internal error).
  std::string yaml = scenario();
  yaml.replace(yaml.find("count: 1"), 8, "count: 4");
  auto j = fixtures::run(yaml, {"pipeline.framework=keras-generator", "pipeline.worker_assignment=round_robin",
                                "pipeline.prefetch=2", "hardware.nodes.0.cpu.launch=[0, 1]"});
  // Two workers of 16 and 32 ms a batch take turns for the node: 2 batches per 32 ms, one step of the four
  // accelerators takes 4 of them, 64 ms.
  EXPECT_NEAR(j["step_time_s"]["mean"].get<double>(), 0.064, 0.03 * 0.064);
}
