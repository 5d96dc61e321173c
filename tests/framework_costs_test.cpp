// The loader framework's own costs (sim/pipeline/framework_costs.hpp) against
// their closed forms, on one node with 16 cores (no core is short):
//  - receive R per batch in the training process, with a device step D and a
//    fast input: the trainer does R then D in turn, so step = R + D and the
//    input wait (the stall) grows by R;
//  - with pin_memory and an overlapped copy the pin-memory thread receives one
//    batch ahead: R (< D) hides behind the step, step = D;
//  - worker cost w per batch, input-bound with W workers building batches of
//    cost B: a batch leaves every (B + w) / W: the step grows by (B + w) / B;
//    the worker's fresh pages (k a byte of a batch of b bytes) at the cpu's
//    page_fault f are such a cost, w = k b f.
#include "test_support.hpp"

#include <gtest/gtest.h>

using namespace mlsim;

namespace {
double step(const nlohmann::ordered_json& j) { return j["step_time_s"]["mean"].get<double>(); }
double part(const nlohmann::ordered_json& j, const char* name) { return j["breakdown"][name].get<double>() * step(j); }

// Every framework cost zero but those in `costs` (", key: value, ..."): YAML keeps one value per key.
std::string zero_except(const std::string& costs) {
  std::string out = costs.empty() ? "" : costs.substr(2);
  for (const char* key : {"receive_per_batch", "receive_per_byte", "worker_per_batch", "worker_per_byte", "pin_per_byte"})
    if (costs.find(key) == std::string::npos)
      out += (out.empty() ? "" : ", ") + std::string(key) + ": 0 s";
  return out;
}

// pytorch, 4 workers, batch 32 of 1 kB samples in RAM, `decode_ms` per sample, a fixed device step.
std::string scenario(double decode_ms, const std::string& step_time, const std::string& costs) {
  std::string yaml = fixtures::base_scenario(1, decode_ms, 1.0);
  yaml.replace(yaml.find("model:"), yaml.find("run:") - yaml.find("model:"),
               "model: {step_time: " + step_time + "}\n");
  yaml.replace(yaml.find("framework: tf.data"), std::string("framework: tf.data").size(),
               "framework: pytorch\n  framework_costs: {" + zero_except(costs) + "}");
  return yaml;
}
} // namespace

TEST(FrameworkCosts, ReceiveInTheTrainingProcessAddsToStepAndStall) {
  auto base = fixtures::run(scenario(0.01, "38 ms", ""), {"pipeline.pin_memory=false"});
  ASSERT_NEAR(step(base), 0.038, 0.002);
  for (auto [costs, r] : {std::pair<const char*, double>{", receive_per_batch: 5 ms", 0.005},
                          {", receive_per_byte: 100 ns", 100e-9 * 32 * 1e3}}) {
    auto j = fixtures::run(scenario(0.01, "38 ms", costs), {"pipeline.pin_memory=false"});
    EXPECT_NEAR(step(j) - step(base), r, 0.02 * r) << costs;
    EXPECT_NEAR(part(j, "input") - part(base, "input"), r, 0.02 * r) << costs;
  }
}

TEST(FrameworkCosts, ReceiveLatencyDelaysTheStepWithoutCpu) {
  // L = 3 ms of waiting inside next(): step = L + D and the input wait grows by L, as a CPU cost would, but the
  // training process's CPU (receive core-seconds) stays what the CPU costs make it.
  auto base = fixtures::run(scenario(0.01, "38 ms", ", receive_per_batch: 1 ms"), {"pipeline.pin_memory=false"});
  auto j = fixtures::run(scenario(0.01, "38 ms", ", receive_per_batch: 1 ms, receive_latency: 3 ms"),
                         {"pipeline.pin_memory=false"});
  EXPECT_NEAR(step(j) - step(base), 0.003, 0.02 * 0.003);
  EXPECT_NEAR(part(j, "input") - part(base, "input"), 0.003, 0.02 * 0.003);
  // No CPU: on 4 cores busy with 4 input-bound workers (B = 32 x 4 ms a batch, a step every B / 4 = 32 ms),
  // a receive CPU cost of 8 ms a batch takes its share of the cores, (B + 8) / B = 1.0625x; the same 8 ms as
  // latency overlaps the workers' work (8 + D = 18 ms < 32 ms) and changes nothing.
  // (prefetch 8: two batches in flight per worker, so that the prefetch depth does not bind; the fixture's
  // scheduling puts the CPU case a little above its closed form, hence one-sided bounds.)
  const std::vector<std::string> four_cores = {"hardware.nodes.0.cpu.cores=4", "pipeline.prefetch=8",
                                               "pipeline.pin_memory=false"};
  auto bound = fixtures::run(scenario(4.0, "10 ms", ""), four_cores);
  auto cpu = fixtures::run(scenario(4.0, "10 ms", ", receive_per_batch: 8 ms"), four_cores);
  auto waiting = fixtures::run(scenario(4.0, "10 ms", ", receive_latency: 8 ms"), four_cores);
  EXPECT_GT(step(cpu) / step(bound), (0.128 + 0.008) / 0.128 - 0.01);
  EXPECT_LT(step(waiting) / step(bound), 1.02);
  // With the pin-memory thread receiving one batch ahead, the latency hides behind the step too.
  auto pinned = fixtures::run(scenario(0.01, "38 ms", ", receive_latency: 3 ms"),
                              {"pipeline.pin_memory=true", "pipeline.copy=overlapped"});
  EXPECT_NEAR(step(pinned), 0.038, 0.02 * 0.038);
}

TEST(FrameworkCosts, PinMemoryThreadHidesReceiveBehindTheStep) {
  // R + pin = 5 ms + 32 kB x 50 ns = 6.6 ms < D = 38 ms: hidden.
  auto j = fixtures::run(scenario(0.01, "38 ms", ", receive_per_batch: 5 ms, pin_per_byte: 50 ns"),
                         {"pipeline.pin_memory=true", "pipeline.copy=overlapped"});
  EXPECT_NEAR(step(j), 0.038, 0.02 * 0.038);
  // Serialised, the same receive and pin are in the step: 38 + 6.6 ms.
  auto s = fixtures::run(scenario(0.01, "38 ms", ", receive_per_batch: 5 ms, pin_per_byte: 50 ns"),
                         {"pipeline.pin_memory=true", "pipeline.copy=serialized"});
  EXPECT_NEAR(step(s), 0.038 + 0.005 + 32e3 * 50e-9, 0.02 * 0.0446);
}

TEST(FrameworkCosts, WorkerCostSlowsAnInputBoundLoaderByItsShare) {
  // B = 32 x 4 ms = 128 ms a batch, 4 workers: 32 ms a step (> D = 10 ms); w = 32 ms: 40 ms.
  auto base = fixtures::run(scenario(4.0, "10 ms", ""));
  auto j = fixtures::run(scenario(4.0, "10 ms", ", worker_per_batch: 32 ms"));
  // The fixture's absolute level is above B / W (its CPU model's co-running and scheduling factors, which
  // apply to both runs alike); the worker cost scales the batch's work by (B + w) / B.
  EXPECT_GT(step(base), 0.128 / 4 * 0.98);
  EXPECT_NEAR(step(j) / step(base), (0.128 + 0.032) / 0.128, 0.03 * 1.25);
  EXPECT_GT(part(j, "input"), part(base, "input") + 0.008 * 0.9);
}

TEST(FrameworkCosts, WorkerFreshPagesCostTheCpusPageFaultEach) {
  // 0.1 pages a byte of a 32 kB batch = 3200 faults at 10 us: w = 32 ms, as worker_per_batch: 32 ms above.
  auto base = fixtures::run(scenario(4.0, "10 ms", ""));
  auto pages = fixtures::run(scenario(4.0, "10 ms", ", worker_fresh_pages_per_byte: 0.1"),
                             {"hardware.nodes.0.cpu.page_fault=10 us"});
  auto per_batch = fixtures::run(scenario(4.0, "10 ms", ", worker_per_batch: 32 ms"));
  EXPECT_NEAR(step(pages) / step(base), (0.128 + 0.032) / 0.128, 0.03 * 1.25);
  EXPECT_NEAR(step(pages), step(per_batch), 0.005 * step(per_batch));
  // Unpriced (a cpu without page_fault, as the presets): the pages cost nothing.
  auto unpriced = fixtures::run(scenario(4.0, "10 ms", ", worker_fresh_pages_per_byte: 0.1"));
  EXPECT_NEAR(step(unpriced), step(base), 1e-9);
}

TEST(FrameworkCosts, DefaultsByFramework) {
  std::string yaml = fixtures::base_scenario(1, 0.01, 1.0);
  auto torch = fixtures::load(yaml, {"pipeline.framework=pytorch"}).pipeline.framework_costs;
  auto tf = fixtures::load(yaml).pipeline.framework_costs;
  EXPECT_GT(torch.receive_per_byte.value(), 0.0);
  EXPECT_GT(torch.worker_per_batch.value(), 0.0);
  EXPECT_EQ(tf.receive_per_byte.value() + tf.receive_per_batch.value() + tf.worker_per_batch.value(), 0.0);
  // PyTorch's worker writes each batch into a fresh shared-memory tensor: one fault a 4 KiB page.
  EXPECT_EQ(torch.worker_fresh_pages_per_byte, 1.0 / 4096);
  EXPECT_EQ(tf.worker_fresh_pages_per_byte, 0.0);
  EXPECT_THROW(fixtures::load(yaml, {"pipeline.framework_costs.worker_fresh_pages_per_byte=2"}), InputError);
  EXPECT_THROW(fixtures::load(yaml, {"pipeline.framework_costs.receive_per_batch=-1 ms"}), InputError);
  EXPECT_THROW(fixtures::load(yaml, {"pipeline.framework_costs.unknown=1 ms"}), InputError);
}
