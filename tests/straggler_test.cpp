// Several trainer node groups in one synchronous data-parallel job: the slowest node paces the step.
//
// Closed form: a node of k cores (tf.data, one worker per core) whose pipeline has one map stage of c
// core-seconds per sample builds its a x B samples of a step in a B c / k. With a fixed device
// step_time t and an all-reduce of a few bytes over links without latency (~0 s), the job's step is
// max(t, a B c / k_min): the slowest node's production or the device. Every group computes for t; a
// group whose batches are ready waits the rest of the step in the all-reduce, the slowest group
// waits the rest for its input.
#include "sim/core/base/errors.hpp"
#include "sim/core/run/scenario.hpp"
#include "test_support.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <unistd.h>

using namespace mlsim;

namespace {

constexpr double kBatch = 32, kAccelerators = 2, kCost = 1e-3, kStepTime = 10e-3;

std::string node(const std::string& name, int count, int cores, const std::string& extra = "") {
  return fmt::format(R"(    - name: {}
      count: {}
      cpu: {{cores: {}, core_speed: 1.0}}
      ram: {{size: 64 GiB, bandwidth: 1000 GB/s}}
      nic: {{bandwidth: 100 Gb/s, latency: 0 s}}
      pcie: {{generation: 4, lanes: 16, protocol_efficiency: 0.8, latency: 0 s}}
      accelerators: {{preset: a100-sxm4-40gb, count: 2}}
{})",
                     name, count, cores, extra);
}

// 3 nodes of 8 cores and 1 of 2 (a quarter), 2 accelerators each, data in RAM.
std::string straggler_job(const std::string& nodes = node("fast", 3, 8) + node("slow", 1, 2),
                          const std::string& location = "location: ram") {
  return fmt::format(R"(name: straggler
hardware:
  network: {{switch_latency: 0 s}}
  nodes:
{}dataset:
  samples: 1000000
  sample_size: 1 kB
  {}
pipeline:
  framework: tf.data
  batch_size: {}
  prefetch: 2
  stages:
    - read
    - {{name: decode, cost: {{per_sample: {} ms}}}}
model: {{name: fixed, step_time: {} ms, parameters: 1000}}
run: {{steps: 60, warmup_steps: 20, seed: 3}}
)",
                     nodes, location, kBatch, kCost * 1e3, kStepTime * 1e3);
}

double production(int cores) { return kAccelerators * kBatch * kCost / cores; }

const nlohmann::ordered_json& group(const nlohmann::ordered_json& j, const std::string& name) {
  for (const auto& g : j.at("node_groups"))
    if (g.at("name") == name)
      return g;
  throw std::runtime_error("no node group " + name);
}

double at(const nlohmann::ordered_json& g, const char* key) { return g.at("s_per_step").at(key).get<double>(); }

std::string load_error(const std::string& yaml) {
  try {
    fixtures::load(yaml);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

} // namespace

TEST(Straggler, SlowNodePacesTheJob) {
  auto j = fixtures::run(straggler_job());
  const double step = production(2); // 2 x 32 x 1 ms / 2 cores = 32 ms > 10 ms of device time
  ASSERT_GT(step, kStepTime);
  EXPECT_NEAR(j["step_time_s"]["mean"].get<double>(), step, 0.005 * step);
  EXPECT_NEAR(j["throughput_samples_per_s"].get<double>(), 8 * kBatch / step, 0.005 * 8 * kBatch / step);
  EXPECT_EQ(j["simulated_trainer_nodes"], 4);
  ASSERT_EQ(j["node_groups"].size(), 2u);
  const auto &slow = group(j, "slow"), &fast = group(j, "fast");
  EXPECT_TRUE(slow["paces_job"].get<bool>());
  EXPECT_FALSE(fast["paces_job"].get<bool>());
  EXPECT_EQ(slow["nodes"], 1);
  EXPECT_EQ(fast["nodes"], 3);
  for (const auto* g : {&slow, &fast}) {
    EXPECT_NEAR(at(*g, "device_compute"), kStepTime, 1e-9);
    EXPECT_NEAR(at(*g, "step"), step, 0.005 * step);
  }
  // The slow node waits for its input what the device does not cover; the fast ones wait as long in
  // the all-reduce, and not for input (their 8 ms batches are ready).
  const double wait = step - kStepTime;
  EXPECT_NEAR(at(slow, "input_wait"), wait, 0.01 * wait);
  EXPECT_NEAR(at(fast, "collective_wait"), wait, 0.01 * wait);
  EXPECT_LT(at(fast, "input_wait"), 0.01 * wait);
  EXPECT_LT(at(slow, "collective_wait"), 0.01 * wait);
  EXPECT_NEAR(at(slow, "own") - at(fast, "own"), wait, 0.01 * wait);
}

TEST(Straggler, AllNodesFastGiveTheFastStep) {
  // The same two groups with the slow one's cores restored: 8 ms of production per step < 10 ms device.
  ASSERT_LT(production(8), kStepTime);
  for (const auto& nodes : {node("fast", 3, 8) + node("slow", 1, 8), node("fast", 4, 8)}) {
    auto j = fixtures::run(straggler_job(nodes));
    EXPECT_NEAR(j["step_time_s"]["mean"].get<double>(), kStepTime, 0.005 * kStepTime) << nodes;
    EXPECT_LT(j["breakdown"]["input"].get<double>(), 0.005) << nodes;
  }
  // The same with every node slow: each paces itself at the slow figure.
  auto j = fixtures::run(straggler_job(node("slow", 4, 2)));
  EXPECT_NEAR(j["step_time_s"]["mean"].get<double>(), production(2), 0.005 * production(2));
  EXPECT_FALSE(j.contains("node_groups")); // one group: the report is as before
}

TEST(Straggler, SeveralGroupsAreNotFolded) {
  // 8 identical nodes fold to 2; split into two groups, all 8 are simulated.
  Scenario one = fixtures::load(straggler_job(node("fast", 8, 8)));
  EXPECT_EQ(one.simulated_trainer_nodes(), 2);
  Scenario two = fixtures::load(straggler_job(node("fast", 6, 8) + node("slow", 2, 2)));
  EXPECT_EQ(two.simulated_trainer_nodes(), 8);
  EXPECT_EQ(two.trainer_nodes(), 8);
  EXPECT_EQ(two.total_accelerators(), 16);
  EXPECT_EQ(two.trainer_node().name, "fast");
  auto j = fixtures::run(straggler_job(node("fast", 6, 8) + node("slow", 2, 2)));
  EXPECT_EQ(j["simulated_trainer_nodes"], 8);
  EXPECT_EQ(j["accelerators"], 16);
}

TEST(Straggler, DifferentAcceleratorCountsAreRejected) {
  std::string nodes = node("fast", 3, 8) + node("slow", 1, 2);
  nodes.replace(nodes.rfind("count: 2}"), 9, "count: 4}");
  std::string m = load_error(straggler_job(nodes));
  EXPECT_NE(m.find("test.yaml:"), std::string::npos) << m;
  EXPECT_NE(m.find("hardware.nodes.1.accelerators.count: expected 2 accelerators per node, as in the first trainer "
                   "group 'fast'"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("got 4 in node 'slow'"), std::string::npos) << m;
}

TEST(Straggler, LocalDataNeedsADiskOnEveryGroup) {
  const std::string disk = "      disks: [{name: data, preset: nvme}]\n";
  EXPECT_EQ(load_error(straggler_job(node("fast", 3, 8, disk) + node("slow", 1, 2, disk), "location: local")),
            "no error");
  std::string m = load_error(straggler_job(node("fast", 3, 8, disk) + node("slow", 1, 2), "location: local"));
  EXPECT_NE(m.find("dataset.location: expected a trainer node with a disk for a local dataset"), std::string::npos) << m;
  EXPECT_NE(m.find("node 'slow' has no disks"), std::string::npos) << m;
  // A disk of another name on the slow group: the dataset's disk (the first group's) is not there.
  m = load_error(straggler_job(node("fast", 3, 8, disk) + node("slow", 1, 2, "      disks: [{name: other, preset: nvme}]\n"),
                               "location: local"));
  EXPECT_NE(m.find("dataset.location:"), std::string::npos) << m;
  EXPECT_NE(m.find("node 'slow' has no disk 'data'"), std::string::npos) << m;
  m = load_error(straggler_job(node("fast", 3, 8, disk) + node("slow", 1, 2, "      disks: [{name: other, preset: nvme}]\n"),
                               "location: local\n  disk: data"));
  EXPECT_NE(m.find("dataset.disk: expected the name of a disk of node 'slow'"), std::string::npos) << m;
}

TEST(Straggler, NoTrainerGroupIsRejected) {
  std::string nodes = node("fast", 3, 8);
  nodes.replace(nodes.find("      accelerators:"), std::string::npos, "");
  std::string m = load_error(straggler_job(nodes));
  EXPECT_NE(m.find("hardware.nodes: expected at least one node group with accelerators (role: trainer)"),
            std::string::npos)
      << m;
}

TEST(Straggler, TextReportNamesTheSlowestGroup) {
  std::string path = mlsim::fixtures::scratch_dir() + "straggler_" + std::to_string(::getpid()) + ".yaml";
  std::ofstream(path) << straggler_job();
  auto r = fixtures::run_mlsim("run " + path);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("3 x fast + 1 x slow (8 accelerators)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("no replica folding: the trainer nodes differ"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Slowest node group 'slow' (1 node) paces the job"), std::string::npos) << r.output;
}

// A slower accelerator: each group's step is planned on its own device. The mixed job steps at the
// V100 node's pace (the step of an all-V100 job), and the A100 nodes wait the difference between the
// two homogeneous jobs' steps in the all-reduce.
TEST(Straggler, SlowerAcceleratorPacesTheJob) {
  auto on = [](const std::string& nodes) {
    std::string yaml = straggler_job(nodes);
    yaml.replace(yaml.find("model: {"), std::string::npos,
                 "model: {name: toy, forward_flops_per_sample: 20 GFLOP, parameters: 1000, dtype: fp32}\n"
                 "run: {steps: 60, warmup_steps: 20, seed: 3}\n");
    return fixtures::run(yaml);
  };
  auto v100 = [](std::string n) { return n.replace(n.find("a100-sxm4-40gb"), 14, "v100-sxm2-16gb"); };
  const double a100_step = on(node("fast", 4, 8))["step_time_s"]["mean"].get<double>();
  const double v100_step = on(v100(node("slow", 4, 8)))["step_time_s"]["mean"].get<double>();
  ASSERT_GT(v100_step, 1.05 * a100_step);
  auto j = on(node("fast", 3, 8) + v100(node("slow", 1, 8)));
  EXPECT_NEAR(j["step_time_s"]["mean"].get<double>(), v100_step, 0.005 * v100_step);
  EXPECT_TRUE(group(j, "slow")["paces_job"].get<bool>());
  EXPECT_NEAR(at(group(j, "fast"), "collective_wait"), v100_step - a100_step, 0.01 * (v100_step - a100_step));
  // Each device computes as long as in its homogeneous job (whose step is its device time).
  EXPECT_NEAR(at(group(j, "fast"), "device_compute"), a100_step, 0.01 * a100_step);
  EXPECT_NEAR(at(group(j, "slow"), "device_compute"), v100_step, 0.01 * v100_step);
}
