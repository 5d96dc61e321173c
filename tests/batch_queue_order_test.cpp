// The prefetch buffer's delivery order (sim/pipeline/batch_queue.hpp): in order, a batch pushed before an
// earlier index waits for it; as ready, it is popped at once. A producer pushes batch 1 at t = 1 s and
// batch 0 at t = 3 s; the consumer pops twice from t = 0. One engine per process: one run per test
// (ctest runs each test in a process of its own).
#include "sim/core/base/engine.hpp"
#include "sim/pipeline/batch_queue.hpp"

#include <simgrid/s4u.hpp>

#include <gtest/gtest.h>

#include <utility>
#include <vector>

using namespace mlsim;
namespace sg4 = simgrid::s4u;

namespace {
// (index, pop time) of the two pops, and the queue's statistics at the end.
std::pair<std::vector<std::pair<long, double>>, QueueStats> run(bool in_order) {
  auto engine = make_engine();
  auto* zone = sg4::create_full_zone("test");
  auto* host = zone->create_host("host", 1e9)->seal();
  zone->seal();
  BatchQueue q(2, in_order);
  std::vector<std::pair<long, double>> popped;
  spawn_actor("producer", host, [&q] {
    for (long index : {1L, 0L}) {
      q.acquire_token();
      sg4::this_actor::sleep_for(index == 1 ? 1.0 : 2.0);
      Batch b;
      b.index = index;
      q.push(b);
    }
  });
  spawn_actor("consumer", host, [&q, &popped] {
    for (int i = 0; i < 2; ++i) {
      Batch b = q.pop();
      popped.emplace_back(b.index, sg4::Engine::get_clock());
    }
  });
  engine->run();
  rethrow_actor_failure();
  return {popped, q.stats_at(sg4::Engine::get_clock())};
}
} // namespace

TEST(BatchQueueOrder, InOrderHoldsABatchThatCameEarly) {
  auto [popped, stats] = run(true);
  ASSERT_EQ(popped.size(), 2u);
  EXPECT_EQ(popped[0], std::make_pair(0L, 3.0));
  EXPECT_EQ(popped[1], std::make_pair(1L, 3.0));
  // Batch 1 waited in the buffer from 1 s to 3 s, batch 0 not at all: Little's law over the window
  // (occupancy integral == total wait) with the held batch counted.
  EXPECT_DOUBLE_EQ(stats.total_wait, 2.0);
  EXPECT_DOUBLE_EQ(stats.occupancy_area, 2.0);
  EXPECT_EQ(stats.arrivals, 2);
}

TEST(BatchQueueOrder, AsReadyHandsOverWhicheverCameFirst) {
  auto [popped, stats] = run(false);
  ASSERT_EQ(popped.size(), 2u);
  EXPECT_EQ(popped[0], std::make_pair(1L, 1.0));
  EXPECT_EQ(popped[1], std::make_pair(0L, 3.0));
  EXPECT_DOUBLE_EQ(stats.total_wait, 0.0);
}
