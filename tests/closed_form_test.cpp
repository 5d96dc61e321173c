// Closed forms the simulation must reproduce tightly.
#include "sim/core/base/engine.hpp"
#include "sim/core/run/scenario.hpp"
#include "sim/hardware/platform.hpp"
#include "sim/pipeline/collective.hpp"
#include "test_support.hpp"

#include <simgrid/s4u.hpp>

#include <gtest/gtest.h>

using namespace mlsim;
namespace sg4 = simgrid::s4u;


// One transfer takes latency + bytes / bandwidth (PCIe gen4 x16: 16 GT/s x 128/130 / 8 per lane, x 0.8).
TEST(ClosedForm, OneTransferIsLatencyPlusSizeOverBandwidth) {
  Scenario s = fixtures::load(fixtures::base_scenario());
  auto engine = make_engine();
  Platform platform(s.platform_spec());
  auto& node = platform.trainers().front();
  double bytes = 1e9, done = -1;
  sg4::Actor::create("t", node.cpu, [&] {
    platform.transfer(node.cpu, node.accelerators[0], Bytes(bytes))->wait();
    done = sg4::Engine::get_clock();
  });
  engine->run();
  double bandwidth = 16 * (16e9 * 128.0 / 130.0 / 8.0) * 0.8;
  EXPECT_NEAR(done, 1e-6 + bytes / bandwidth, 1e-9);
}

// Ring all-reduce of S bytes over n ranks: 2(n-1) alpha + 2(n-1)/n S / beta.
TEST(ClosedForm, RingAllReduceMatchesFormula) {
  Scenario s = fixtures::load(fixtures::base_scenario(8));
  auto engine = make_engine();
  Platform platform(s.platform_spec());
  CollectiveGroup group;
  group.platform = &platform;
  Recorder rec;
  group.recorder = &rec;
  for (auto* g : platform.trainers().front().accelerators)
    group.ranks.push_back(g);
  group.finalize();
  std::vector<std::unique_ptr<Communicator>> comms;
  double bytes = 100e6;
  std::vector<double> finish(8, -1);
  for (int r = 0; r < 8; ++r) {
    comms.push_back(std::make_unique<Communicator>(&group, r));
    comms.back()->start();
    sg4::Actor::create("rank" + std::to_string(r), group.ranks[static_cast<size_t>(r)], [&, r] {
      comms[static_cast<size_t>(r)]->submit(bytes);
      comms[static_cast<size_t>(r)]->wait_all();
      finish[static_cast<size_t>(r)] = sg4::Engine::get_clock();
    });
  }
  engine->run();
  // NVLink 3: 300 GB/s per direction per GPU; a GPU-to-GPU route crosses two 2 us links.
  double n = 8, alpha = 4e-6, beta = 300e9;
  double expected = 2 * (n - 1) * alpha + 2 * (n - 1) / n * bytes / beta;
  for (double f : finish)
    EXPECT_NEAR(f, expected, 1e-9);
  EXPECT_NEAR(group.ring_time(bytes), expected, 1e-12);
}

// k workers on c cores, per-sample cost x: the pipeline delivers min(k, c) / x samples/s.
TEST(ClosedForm, SlowestStageCapsThroughput) {
  auto j = fixtures::run(fixtures::base_scenario(1, 10.0, 0.001), {"pipeline.workers=4"});
  EXPECT_NEAR(j["throughput_samples_per_s"].get<double>(), 4 / 0.010, 0.01 * 400);
  EXPECT_EQ(j["input_bound"], "highly");
  EXPECT_EQ(j["bottleneck"]["kind"], "stage");
  EXPECT_EQ(j["bottleneck"]["name"], "decode");
}

TEST(ClosedForm, WorkersBeyondCoresShareThem) {
  auto j = fixtures::run(fixtures::base_scenario(1, 10.0, 0.001), {"pipeline.workers=8", "hardware.nodes.0.cpu.cores=2"});
  EXPECT_NEAR(j["throughput_samples_per_s"].get<double>(), 2 / 0.010, 0.01 * 200);
}

TEST(ClosedForm, CoreSpeedScalesStageThroughput) {
  auto j = fixtures::run(fixtures::base_scenario(1, 10.0, 0.001),
                        {"pipeline.workers=4", "hardware.nodes.0.cpu.core_speed=0.5"});
  EXPECT_NEAR(j["throughput_samples_per_s"].get<double>(), 4 * 0.5 / 0.010, 0.01 * 200);
}

// A compute-bound job: step time = 3 x forward FLOPs x batch / peak (fp32 on A100: 19.5 TFLOP/s) + the copy.
TEST(ClosedForm, ComputeBoundStepEqualsComputeTime) {
  auto j = fixtures::run(fixtures::base_scenario(1, 0.01, 100.0));
  double compute = 3 * 100e9 * 32 / 19.5e12;
  double copy = 1e-6 + 32 * 1e3 / (16 * (16e9 * 128.0 / 130.0 / 8.0) * 0.8);
  EXPECT_NEAR(j["step_time_s"]["mean"].get<double>(), compute + copy, 0.01 * compute);
  EXPECT_LT(j["breakdown"]["input"].get<double>(), 1e-6);
  EXPECT_EQ(j["input_bound"], "not");
  EXPECT_EQ(j["bottleneck"]["kind"], "device");
}

// A step of one host-placed op: flops / core_flops on one core (default 32 GFLOP/s) with a cheap input
// pipeline; the trainer's CPU paces the job, and the report names it rather than a stage or the device.
TEST(ClosedForm, HostPlacedStepNamesTheHostAsTheBottleneck) {
  std::string yaml = fixtures::base_scenario(1, 0.01, 1.0);
  const std::string model = "model:\n  name: toy\n";
  yaml.replace(yaml.find(model), yaml.find("run:") - yaml.find(model),
               "model:\n  name: host-step\n  ops: [{name: gemm_stack, kind: matmul, flops: 10 MFLOP, placement: host}]\n");
  auto j = fixtures::run(yaml);
  const double host = 32 * 10e6 / 32e9; // batch 32 x 10 MFLOP at 32 GFLOP/s: 10 ms
  EXPECT_NEAR(j["step_time_s"]["mean"].get<double>(), host, 0.02 * host);
  EXPECT_GT(j["breakdown"]["host_compute"].get<double>(), 0.95);
  EXPECT_EQ(j["bottleneck"]["kind"], "host");
  EXPECT_EQ(j["bottleneck"]["name"], "node.cpu"); // the trainer node's CPU, as links are named (node.nic)
  EXPECT_GT(j["bottleneck"]["utilization"].get<double>(), 0.95);
}

TEST(ClosedForm, NoStallWhenPipelineIsFaster) {
  // Pipeline: 4 workers x 1 / 1 ms = 4000 samples/s; device needs 32 samples per ~0.49 s.
  auto j = fixtures::run(fixtures::base_scenario(1, 1.0, 100.0));
  EXPECT_LT(j["breakdown"]["input"].get<double>(), 1e-6);
  double sum = 0;
  for (auto& [k, v] : j["breakdown"].items())
    sum += v.get<double>();
  EXPECT_NEAR(sum, 1.0, 1e-9);
}

// With a tiny model, data-parallel all-reduce is the whole step: 8 ranks, 100 M fp32 parameters.
TEST(ClosedForm, StepWithAllReduceAddsRingTime) {
  auto j = fixtures::run(fixtures::base_scenario(8, 0.01, 0.001, 100e6), {"pipeline.workers=16"});
  double ring = 2 * 7 * 4e-6 + 2 * 7.0 / 8.0 * 400e6 / 300e9;
  EXPECT_NEAR(j["breakdown"]["collective"].get<double>() * j["step_time_s"]["mean"].get<double>(), ring, 0.02 * ring);
}

// Two accelerators behind one PCIe switch share its uplink: two simultaneous copies take twice as long
// as one (plus the one latency each), while accelerators on separate switches do not slow each other.
TEST(ClosedForm, PcieSwitchUplinkIsShared) {
  Scenario s = fixtures::load(fixtures::base_scenario(4), {"hardware.nodes.0.pcie.gpus_per_switch=2"});
  auto engine = make_engine();
  Platform platform(s.platform_spec());
  auto& node = platform.trainers().front();
  double bytes = 1e9;
  std::vector<double> done(4, -1);
  for (int g : {0, 1, 2}) // gpu0 and gpu1 share switch 0; gpu2 is alone on switch 1
    sg4::Actor::create("t" + std::to_string(g), node.cpu, [&, g] {
      platform.transfer(node.cpu, node.accelerators[static_cast<size_t>(g)], Bytes(bytes))->wait();
      done[static_cast<size_t>(g)] = sg4::Engine::get_clock();
    });
  engine->run();
  double bandwidth = 16 * (16e9 * 128.0 / 130.0 / 8.0) * 0.8;
  EXPECT_NEAR(done[0], 1e-6 + 2 * bytes / bandwidth, 1e-9);
  EXPECT_NEAR(done[1], 1e-6 + 2 * bytes / bandwidth, 1e-9);
  EXPECT_NEAR(done[2], 1e-6 + bytes / bandwidth, 1e-9);
}

// Pageable host memory: the driver first copies the batch into a pinned buffer at RAM bandwidth.
TEST(ClosedForm, PageableCopyAddsAStagingMemcpy) {
  // 32 samples of 1 MB (output bytes = stored bytes): 32 MB per batch; RAM 1000 GB/s in the base scenario.
  // On demand (prefetch 0), so no read of the next batch shares the RAM bus with the staging copy.
  std::vector<std::string> o{"dataset.sample_size=1 MB", "hardware.nodes.0.ram.bandwidth=10 GB/s", "pipeline.prefetch=0"};
  auto pinned = fixtures::run(fixtures::base_scenario(1, 0.01, 100.0), o);
  o.push_back("hardware.nodes.0.pcie.pinned=false");
  auto pageable = fixtures::run(fixtures::base_scenario(1, 0.01, 100.0), o);
  double h2d_pinned = pinned["breakdown"]["h2d"].get<double>() * pinned["step_time_s"]["mean"].get<double>();
  double h2d_pageable = pageable["breakdown"]["h2d"].get<double>() * pageable["step_time_s"]["mean"].get<double>();
  double pcie = 16 * (16e9 * 128.0 / 130.0 / 8.0) * 0.8;
  EXPECT_NEAR(h2d_pinned, 1e-6 + 32e6 / pcie, 1e-7);
  EXPECT_NEAR(h2d_pageable, 32e6 / 10e9 + 1e-6 + 32e6 / pcie, 1e-7);
}
