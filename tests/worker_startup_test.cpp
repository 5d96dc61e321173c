// Worker start-up at each epoch (framework_costs.worker_startup, persistent_workers: false) against its
// closed form. One worker on 16 cores, batches of 32 samples at 1 ms each (c = 32 ms a batch), a device
// step of 1 ms (input-bound), epochs of K = 10 batches, start-up S per worker. The worker's time line is
// S, K c, S, K c, ...: over two whole measured epochs (warm-up = the first epoch) the mean step is
// c + W S / K, and without the start-up (persistent workers, or S = 0) it is c.
#include "test_support.hpp"

#include <gtest/gtest.h>

using namespace mlsim;

namespace {
double step(const nlohmann::ordered_json& j) { return j["step_time_s"]["mean"].get<double>(); }

std::string scenario(const std::string& startup) {
  std::string yaml = fixtures::base_scenario(1, 1.0, 1.0);
  yaml.replace(yaml.find("model:"), yaml.find("run:") - yaml.find("model:"), "model: {step_time: 1 ms}\n");
  yaml.replace(yaml.find("framework: tf.data"), std::string("framework: tf.data").size(),
               "framework: pytorch\n  framework_costs: {receive_per_batch: 0 s, receive_per_byte: 0 s, "
               "worker_per_batch: 0 s, worker_per_byte: 0 s, pin_per_byte: 0 s, worker_startup: " + startup + "}");
  return yaml;
}

const std::vector<std::string> kOneWorkerTenBatchEpochs = {"pipeline.workers=1", "dataset.samples=320",
                                                          "run.steps=30", "run.warmup_steps=10",
                                                          "run.fast_forward=false"};
std::vector<std::string> with(std::vector<std::string> v, const std::string& more) {
  v.push_back(more);
  return v;
}
} // namespace

TEST(WorkerStartup, PaidAtEachEpochWithoutPersistentWorkers) {
  const double c = 0.032, S = 0.020, K = 10;
  auto base = fixtures::run(scenario("0 s"), kOneWorkerTenBatchEpochs);
  ASSERT_NEAR(step(base), c, 0.02 * c);
  auto j = fixtures::run(scenario("20 ms"), with(kOneWorkerTenBatchEpochs, "pipeline.persistent_workers=false"));
  EXPECT_NEAR(step(j) - step(base), S / K, 0.05 * S / K);
}

TEST(WorkerStartup, PersistentWorkersStartOnce) {
  auto base = fixtures::run(scenario("0 s"), kOneWorkerTenBatchEpochs);
  auto j = fixtures::run(scenario("20 ms"), with(kOneWorkerTenBatchEpochs, "pipeline.persistent_workers=true"));
  EXPECT_NEAR(step(j), step(base), 1e-6);
}

TEST(WorkerStartup, DefaultsAndBounds) {
  const std::string yaml = fixtures::base_scenario(1, 1.0, 1.0);
  const Scenario torch = fixtures::load(yaml, {"pipeline.framework=pytorch"});
  EXPECT_FALSE(torch.pipeline.persistent_workers); // torch's DataLoader default
  EXPECT_EQ(torch.pipeline.framework_costs.worker_startup.value(), 0.0);
  EXPECT_TRUE(fixtures::load(yaml).pipeline.persistent_workers);
  EXPECT_THROW(fixtures::load(yaml, {"pipeline.framework_costs.worker_startup=-1 ms"}), InputError);
}
