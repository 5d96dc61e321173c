// What a job with every node simulated costs the process (sim/core/run/limits.hpp, engine.hpp),
// counted from the platform's description, and a 128 x 8 job loading without raising system limits.
#include "bench/bench_scenario.hpp"
#include "sim/core/base/config_node.hpp"
#include "sim/core/run/limits.hpp"
#include "sim/core/run/scenario.hpp"

#include <gtest/gtest.h>

#include <string>

using namespace mlsim;

namespace {
// The bench's job (bench/bench_scenario.hpp): 128 cores, one disk and 8 accelerators per node.
std::string job(int nodes) { return bench::scenario(nodes, 100, false); }
} // namespace

TEST(LimitsScale, RouteTableHoldsOnlyHostsThatCommunicate) {
  SimulationSize z = estimate_size(load_scenario(ConfigNode::load_string(job(128), "job.yaml")));
  EXPECT_DOUBLE_EQ(z.hosts, 128.0 * (1 + 8));                // a CPU and 8 accelerators per node
  EXPECT_DOUBLE_EQ(z.compute_hosts, 128.0 * (1 + 1));       // RAM bus, one disk (cores are no hosts)
  EXPECT_DOUBLE_EQ(z.core_actors, 128.0);                    // one core server per node
  // Per node: a dispatcher, 128 readers, 128 workers, a core server, 3 actors per accelerator.
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

TEST(LimitsScale, StacksKeepTheirGuardPageWhereTwoMappingsPerActorFit) {
  // 1 node: 282 actors, twice that is far below any mapping limit; 128 nodes: 36,096 actors need
  // more than half of what the default limit leaves.
  EXPECT_TRUE(guarded_stacks_fit(load_scenario(ConfigNode::load_string(job(1), "job.yaml"))));
  if (max_actors() >= 2L * 36096)
    GTEST_SKIP() << "this machine's vm.max_map_count allows guarded stacks for " << max_actors() / 2 << " actors";
  EXPECT_FALSE(guarded_stacks_fit(load_scenario(ConfigNode::load_string(job(128), "job.yaml"))));
}
