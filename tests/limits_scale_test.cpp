// What a job with every node simulated costs the process (sim/core/run/limits.hpp, engine.hpp),
// counted from the platform's description, and 128 x 8 and 1,024 x 8 jobs loading without raising
// system limits.
#include "bench/bench_scenario.hpp"
#include "sim/core/base/config_node.hpp"
#include "sim/core/run/limits.hpp"
#include "sim/core/run/scenario.hpp"

#include <gtest/gtest.h>

#include <string>

using namespace mlsim;

namespace {
// The bench's job (bench/bench_scenario.hpp): 128 cores, one NVMe disk and 8 accelerators per node,
// 100,000,000 samples on local disks, batches of 256.
std::string job(int nodes, int steps = 100) { return bench::scenario(nodes, steps, false); }
SimulationSize size_of(const std::string& text, const std::vector<std::string>& set = {}) {
  return estimate_size(load_scenario(ConfigNode::with_overrides(ConfigNode::load_string(text, "job.yaml"), set)));
}
// Per node: a dispatcher, the disk's server, 128 workers, a core server, 3 actors per accelerator.
constexpr double kActorsPerNode = 1 + 1 + 128 + 1 + 3 * 8;
} // namespace

TEST(LimitsScale, RouteTableHoldsOnlyHostsThatCommunicate) {
  SimulationSize z = size_of(job(128));
  EXPECT_DOUBLE_EQ(z.hosts, 128.0 * (1 + 8));                // a CPU and 8 accelerators per node
  EXPECT_DOUBLE_EQ(z.compute_hosts, 128.0 * (1 + 1));       // RAM bus, one disk (cores are no hosts)
  EXPECT_DOUBLE_EQ(z.core_actors, 128.0);                    // one core server per node
  // 100 steps read ~103 x 8 x 256 = 211k samples per node, a quarter of its 781k-sample shard: every read is
  // from the local disk, so the 128 read slots need no actor.
  EXPECT_DOUBLE_EQ(z.readers, 0.0);
  EXPECT_DOUBLE_EQ(z.actors, 128.0 * kActorsPerNode);
}

TEST(LimitsScale, ReadSlotsAreActorsWhenTheyMayReadFromRamOrRemoteStorage) {
  // A dataset in RAM: each of the 128 slots reads in an actor of its own; no disk server.
  SimulationSize ram = size_of(job(2), {"dataset.location=ram"});
  EXPECT_DOUBLE_EQ(ram.readers, 2.0 * 128);
  EXPECT_DOUBLE_EQ(ram.actors, 2.0 * (kActorsPerNode - 1 + 128));
  // Local data, but a 2-node shard of 100,000 samples: 100 steps draw 211k samples per node, so a later
  // epoch reads from the page cache.
  SimulationSize cached = size_of(job(2), {"dataset.samples=200000"});
  EXPECT_DOUBLE_EQ(cached.readers, 2.0 * 128);
  // 3 steps draw (3 + 2 + 2) x 2,048 = 14,336 samples, under a 50,000-sample shard: no actor.
  EXPECT_DOUBLE_EQ(size_of(job(2, 3), {"dataset.samples=100000"}).readers, 0.0);
}

TEST(LimitsScale, EveryNodeOf1024x8LoadsUnderTheDefaultMappingLimit) {
  // 158,720 actors: unguarded stacks add no memory mapping, ~2.4 GB resident; the route table of 9,216 hosts
  // 0.68 GB. Needs a machine whose half memory holds them.
  SimulationSize z = size_of(job(1024, 20));
  EXPECT_DOUBLE_EQ(z.actors, 1024 * kActorsPerNode);
  if (static_cast<double>(max_actors()) < z.actors)
    GTEST_SKIP() << "this machine's memory allows " << max_actors() << " actors";
  EXPECT_NO_THROW(load_scenario(ConfigNode::load_string(job(1024, 20), "job.yaml")));
}

TEST(LimitsScale, ActorsPastTheLimitAreALoadErrorAtTheNodeCount) {
  // The node count sets the workers (128 default workers per node), so it is the key named.
  const int nodes = static_cast<int>(static_cast<double>(max_actors()) / kActorsPerNode) + 1;
  try {
    load_scenario(ConfigNode::load_string(job(nodes), "job.yaml"));
    FAIL() << nodes << " x 8 with every node simulated loaded";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("hardware.nodes.0.count"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("simulated actors"), std::string::npos) << e.what();
  }
}

TEST(LimitsScale, StacksKeepTheirGuardPageWhereTwoMappingsPerActorFit) {
  // 128 nodes: 19,840 actors, 39,680 mappings guarded, under the 57,338 the default limit leaves;
  // 192 nodes: 29,760 actors need 59,520.
  EXPECT_TRUE(guarded_stacks_fit(load_scenario(ConfigNode::load_string(job(1), "job.yaml"))));
  if (max_guarded_actors() != (65530 - 8192) / 2)
    GTEST_SKIP() << "this machine's vm.max_map_count is not the default";
  EXPECT_TRUE(guarded_stacks_fit(load_scenario(ConfigNode::load_string(job(128), "job.yaml"))));
  EXPECT_FALSE(guarded_stacks_fit(load_scenario(ConfigNode::load_string(job(192), "job.yaml"))));
}
