// A burst longer than the prefetch buffer can hide lets the consumer wait (separate process: one engine each).
#include "sim/core/engine.hpp"
#include "sim/pipeline/batch_queue.hpp"

#include <simgrid/s4u.hpp>

#include <gtest/gtest.h>

using namespace mlsim;
namespace sg4 = simgrid::s4u;

TEST(PipelineBurst, ShallowBufferStallsDuringABurst) {
  auto engine = make_engine();
  auto* zone = sg4::create_full_zone("z");
  auto* host = zone->create_host("h", 1e9);
  zone->seal();
  const int depth = 3, burst = 3, batches = 60, burst_start = 30;
  BatchQueue queue(depth);
  double stall = 0;
  sg4::Actor::create("producer", host, [&] {
    for (int b = 0; b < batches; ++b) {
      queue.acquire_token();
      sg4::this_actor::sleep_for(b >= burst_start && b < burst_start + burst ? 20e-3 : 1e-3);
      queue.push(Batch{});
    }
  });
  sg4::Actor::create("consumer", host, [&] {
    for (int b = 0; b < batches; ++b) {
      double t0 = sg4::Engine::get_clock();
      queue.pop();
      if (b > 5)
        stall += sg4::Engine::get_clock() - t0;
      sg4::this_actor::sleep_for(10e-3);
    }
  });
  engine->run();
  // A burst of d slow batches on a buffer of depth d: one step of waiting (see pipeline_closed_form_test).
  EXPECT_NEAR(stall, 10e-3, 1e-9);
}
