// A burst longer than the prefetch buffer can hide lets the consumer wait (separate process: one engine each).
#include "sim/core/base/engine.hpp"
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

// A shuffle buffer of N samples fills before the first batch leaves it: with reading the only stage
// before it, 5,000 files of 100 kB from a 100 MB/s disk take 5 s, so the first step waits that long.
#include "sim/core/run/simulation.hpp"
#include "test_support.hpp"

TEST(PipelineBurst, ShuffleBufferFillDelaysTheFirstBatch) {
  Scenario s = fixtures::load(fixtures::base_scenario(1, 0.01, 0.001), {"hardware.nodes.0.disks=[{name: d, sequential_read: 100 MB/s, random_read_iops: 100000, latency: 0 s}]",
       "dataset.location=local", "dataset.disk=d", "dataset.sample_size=100 kB",
       "pipeline.stages=[read, {name: shuffle, buffer: 5000}, {name: decode, cost: {per_sample: 0.01 ms}}]"});
  SimulationOutput out = simulate(s);
  const StepRecord& first = out.recorder.steps().front();
  ASSERT_EQ(first.step, 0);
  EXPECT_GT(first.input, 5.0);              // the buffer's 500 MB
  EXPECT_LT(first.input, 5.0 + 0.1);        // plus the first batch's 32 files (32 ms) and the decode
}
