// What a job with every node simulated costs the process (sim/core/run/limits.hpp, engine.hpp),
// counted from the platform's description, and a 128 x 8 job loading without raising system limits.
#include "sim/core/base/config_node.hpp"
#include "sim/core/run/limits.hpp"
#include "sim/core/run/scenario.hpp"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <string>

using namespace mlsim;

namespace {
// The bench's 1x8 node (bench/sim_speed.cpp): 128 cores, one disk, 8 accelerators.
std::string job(int nodes) {
  return fmt::format(R"(hardware:
  nodes:
    - name: node
      count: {}
      cpu: {{preset: epyc-7742}}
      ram: {{preset: ddr4-512gb-8ch}}
      disks: [{{name: data, preset: nvme}}]
      nic: ib-hdr-200
      pcie: gen4-x16
      accelerators: {{preset: a100-sxm4-40gb, count: 8}}
      nvlink: nvlink3
dataset:
  samples: 100000000
  sample_size: {{distribution: lognormal, mean: 110 kB, stddev: 60 kB}}
  image: {{width: 500, height: 375, channels: 3}}
  location: local
pipeline:
  framework: tf.data
  batch_size: 256
  prefetch: 2
  stages: [read, {{name: decode, cost: {{per_sample: 0.3 ms}}}}]
model: {{name: resnet50, forward_flops_per_sample: 8.2 GFLOP, parameters: 25.6e6, dtype: fp16}}
run: {{steps: 100, warmup_steps: 10, seed: 1, replica_folding: false}}
)",
                     nodes);
}
} // namespace

TEST(LimitsScale, RouteTableHoldsOnlyHostsThatCommunicate) {
  SimulationSize z = estimate_size(load_scenario(ConfigNode::load_string(job(128), "job.yaml")));
  EXPECT_DOUBLE_EQ(z.hosts, 128.0 * (1 + 8));                // a CPU and 8 accelerators per node
  EXPECT_DOUBLE_EQ(z.compute_hosts, 128.0 * (128 + 1 + 1)); // cores, RAM bus, one disk
  EXPECT_DOUBLE_EQ(z.core_actors, 128.0);                    // one balancer per node
  // Per node: a dispatcher, 128 readers, 128 workers, a balancer, 3 actors per accelerator.
  EXPECT_DOUBLE_EQ(z.actors, 128.0 * (1 + 128 + 128 + 1 + 3 * 8));
}

TEST(LimitsScale, EveryNodeOf128x8LoadsUnderTheDefaultMappingLimit) {
  // 36,096 actors: past the 28,669 that two mappings per actor allowed at vm.max_map_count 65530.
  if (max_actors() < 36096)
    GTEST_SKIP() << "this machine's vm.max_map_count allows " << max_actors() << " actors";
  EXPECT_NO_THROW(load_scenario(ConfigNode::load_string(job(128), "job.yaml")));
}

TEST(LimitsScale, ActorsPastTheLimitAreALoadErrorAtTheNodeCount) {
  // 1,024 nodes of 128 default workers: the node count sets the workers, so it is the key named.
  if (max_actors() >= 1024L * (1 + 128 + 128 + 1 + 3 * 8))
    GTEST_SKIP() << "this machine's vm.max_map_count allows " << max_actors() << " actors";
  try {
    load_scenario(ConfigNode::load_string(job(1024), "job.yaml"));
    FAIL() << "1,024 x 8 with every node simulated loaded";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("hardware.nodes.0.count"), std::string::npos) << e.what();
  }
}
