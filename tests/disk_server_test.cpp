// Processor sharing (sim/hardware/processor_sharing.hpp) against its closed forms, and the disk
// server (sim/hardware/disk_server.hpp) against closed forms and against the form it replaces
// (execs on hosts whose speeds are the IOPS and the bandwidth, SimGrid's max-min sharing, then a
// sleep of the latency), run side by side in one engine. One engine per process: one run per test.
#include "sim/core/base/engine.hpp"
#include "sim/hardware/disk_server.hpp"
#include "sim/hardware/processor_sharing.hpp"

#include <simgrid/s4u.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <vector>

using namespace mlsim;
namespace sg4 = simgrid::s4u;

namespace {
std::map<long, double> ends_of(ProcessorSharing& ps, double until) {
  std::map<long, double> ends;
  ps.advance(until, [&](long id, double t) { ends[id] = t; });
  return ends;
}
auto ignore = [](long, double) {};
} // namespace

TEST(ProcessorSharing, TwoRequestsStartingTogether) {
  // Sizes a < b on capacity W: both at W/2 until the first ends at 2a/W; the second then has b - a
  // left alone: (a + b)/W.
  const double W = 50, a = 30, b = 70;
  ProcessorSharing ps(W);
  ps.add(0, 1, a, ignore);
  ps.add(0, 2, b, ignore);
  auto ends = ends_of(ps, 100);
  EXPECT_DOUBLE_EQ(ends.at(1), 2 * a / W);
  EXPECT_DOUBLE_EQ(ends.at(2), (a + b) / W);
  EXPECT_EQ(ps.size(), 0u);
}

TEST(ProcessorSharing, ARequestArrivingMidway) {
  // A (a = 100) alone from 0 on W = 100; B (b = 100) at t1 = 0.5, when A has 50 left. Both at 50/s:
  // A ends at 0.5 + 50/50 = 1.5, having given B 50; B's last 50 alone: 2.0 (the total work over W,
  // as nothing idles).
  ProcessorSharing ps(100);
  ps.add(0, 1, 100, ignore);
  std::map<long, double> ends;
  auto record = [&](long id, double t) { ends[id] = t; };
  ps.add(0.5, 2, 100, record);
  EXPECT_TRUE(ends.empty()); // A is not done at 0.5
  ps.advance(10, record);
  EXPECT_DOUBLE_EQ(ends.at(1), 1.5);
  EXPECT_DOUBLE_EQ(ends.at(2), 2.0);
}

TEST(ProcessorSharing, ForecastIsWhatAdvancingGives) {
  // Three requests of which two are equal: the equal ones end together; the forecast's times are the
  // ones advancing reaches, to the bit, and advancing to the first forecast time ends exactly that one.
  ProcessorSharing ps(3);
  ps.add(0, 7, 1, ignore);
  ps.add(0, 8, 2, ignore);
  ps.add(0, 9, 2, ignore);
  std::vector<std::pair<long, double>> forecast;
  ps.forecast([&](long id, double t) { forecast.emplace_back(id, t); });
  ASSERT_EQ(forecast.size(), 3u);
  EXPECT_EQ(forecast[0].first, 7);
  EXPECT_DOUBLE_EQ(forecast[0].second, 1.0);       // 1 at 1/s
  EXPECT_DOUBLE_EQ(forecast[1].second, 1.0 + 1.0 / 1.5); // then 1 each left, at 3/2 per second each
  EXPECT_EQ(forecast[1].second, forecast[2].second);
  auto first = ends_of(ps, forecast[0].second);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first.at(7), forecast[0].second);
  auto rest = ends_of(ps, 100);
  EXPECT_EQ(rest.at(8), forecast[1].second);
  EXPECT_EQ(rest.at(9), forecast[2].second);
}

TEST(ProcessorSharing, AnEmptyResourceStartsAfresh) {
  // A request after the resource emptied is served alone from its arrival.
  ProcessorSharing ps(10);
  ps.add(0, 1, 10, ignore);
  EXPECT_DOUBLE_EQ(ends_of(ps, 5).at(1), 1.0);
  ps.add(5, 2, 20, ignore);
  EXPECT_DOUBLE_EQ(ends_of(ps, 100).at(2), 7.0);
}

namespace {
struct ReadAt {
  double start, accesses, bytes;
};
constexpr double kIops = 1e4, kBandwidth = 1e9, kLatency = 1e-4;

// Each read by its own actor, through the server and, on hosts of their own, as execs plus a sleep.
// Returns the end times: (server, execs) per read.
std::vector<std::pair<double, double>> run_reads(const std::vector<ReadAt>& reads) {
  auto engine = make_engine();
  auto* zone = sg4::create_full_zone("test");
  auto* actors = zone->create_host("actors", 1e9);
  DiskSpec spec;
  spec.sequential_read = BytesPerSec(kBandwidth);
  spec.random_read_iops = kIops;
  spec.latency = Seconds(kLatency);
  DiskServer server(spec, zone->create_host("disk", kBandwidth)->seal());
  auto* ops = zone->create_host("ref.ops", kIops)->seal();
  auto* bw = zone->create_host("ref.bw", kBandwidth)->seal();
  actors->seal();
  zone->seal();
  std::vector<std::pair<double, double>> end(reads.size(), {-1.0, -1.0});
  for (size_t i = 0; i < reads.size(); ++i) {
    const ReadAt r = reads[i];
    sg4::Actor::create("server-read" + std::to_string(i), actors, [&, r, i] {
      sg4::this_actor::sleep_until(r.start);
      server.read(r.accesses, Bytes(r.bytes));
      end[i].first = sg4::Engine::get_clock();
    });
    sg4::Actor::create("exec-read" + std::to_string(i), actors, [&, r, i] {
      sg4::this_actor::sleep_until(r.start);
      sg4::ExecPtr a = sg4::this_actor::exec_init(r.accesses);
      a->set_host(ops)->start();
      sg4::this_actor::exec_init(r.bytes)->set_host(bw)->wait();
      a->wait();
      sg4::this_actor::sleep_for(r.accesses * kLatency);
      end[i].second = sg4::Engine::get_clock();
    });
  }
  engine->run();
  return end;
}
} // namespace

TEST(DiskServer, OneReadAloneTakesItsSlowerPartPlusLatency) {
  // 10 accesses at 1e4/s (1 ms) and 5 MB at 1 GB/s (5 ms), then 10 x 0.1 ms: 6 ms.
  // Seek-bound, at t = 1 s: 100 accesses (10 ms) and 1 MB (1 ms), then 100 x 0.1 ms: 1.020 s.
  auto end = run_reads({{0, 10, 5e6}, {1, 100, 1e6}});
  EXPECT_NEAR(end[0].first, 5e-3 + 1e-3, 1e-12);
  EXPECT_NEAR(end[1].first, 1.020, 1e-12);
}

TEST(DiskServer, TwoReadsShareTheBandwidthThenAReadArrivesMidway) {
  // Bytes a = 2 MB and b = 6 MB at t = 0 (one access each: 0.1 ms of the operations, within the
  // bytes' time): the first ends at 2a/W = 4 ms, the second at (a+b)/W = 8 ms, each + 0.1 ms of latency.
  // A third of 3 MB at t = 10 ms alone: 3 ms + 0.1 ms.
  auto end = run_reads({{0, 1, 2e6}, {0, 1, 6e6}, {10e-3, 1, 3e6}});
  EXPECT_NEAR(end[0].first, 4e-3 + 1e-4, 1e-12);
  EXPECT_NEAR(end[1].first, 8e-3 + 1e-4, 1e-12);
  EXPECT_NEAR(end[2].first, 13e-3 + 1e-4, 1e-12);
}

TEST(DiskServer, AReadArrivingMidwaySlowsTheOneInFlight) {
  // 4 MB at t = 0, 4 MB at t = 2 ms (one access each): the first has 2 MB left and shares from then on:
  // it ends at 2 + 4 = 6 ms; the second has 2 MB left then, alone: 8 ms. Each + 0.1 ms of latency.
  auto end = run_reads({{0, 1, 4e6}, {2e-3, 1, 4e6}});
  EXPECT_NEAR(end[0].first, 6e-3 + 1e-4, 1e-12);
  EXPECT_NEAR(end[1].first, 8e-3 + 1e-4, 1e-12);
}

TEST(DiskServer, ManyReadsEndWhenTheExecFormEnds) {
  // 200 reads of random sizes and accesses at random times, some bound by the bandwidth, some by the
  // operations: every end time within 1e-9 relative of the exec form's (SimGrid's max-min sharing).
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> start(0, 0.2), accesses(1, 40), bytes(1e4, 4e6);
  std::vector<ReadAt> reads;
  for (int i = 0; i < 200; ++i)
    reads.push_back({start(rng), std::round(accesses(rng)), bytes(rng)});
  auto end = run_reads(reads);
  for (size_t i = 0; i < reads.size(); ++i) {
    ASSERT_GT(end[i].first, reads[i].start) << i;
    EXPECT_NEAR(end[i].first, end[i].second, 1e-9 * end[i].second) << "read " << i;
  }
}

TEST(DiskServer, CompletionsChainReadsWithoutAnActorEach) {
  // Two chains of three reads, each next read submitted by the previous one's completion, on the server
  // alone. Each read: one access (0.1 ms of operations, 0.1 ms of latency) and 2 MB. Both chains in
  // flight share the bandwidth: every read takes 2 x 2 MB / 1 GB/s = 4 ms + 0.1 ms of latency, so the
  // k-th read of each chain ends at 4.1 k ms; the two chains' reads end together, in arrival order.
  auto engine = make_engine();
  auto* zone = sg4::create_full_zone("test");
  DiskSpec spec;
  spec.sequential_read = BytesPerSec(kBandwidth);
  spec.random_read_iops = kIops;
  spec.latency = Seconds(kLatency);
  DiskServer server(spec, zone->create_host("disk", kBandwidth)->seal());
  auto* host = zone->create_host("host", 1e9)->seal();
  zone->seal();
  std::vector<std::pair<int, double>> ends; // (chain, time)
  sg4::SemaphorePtr all_done = sg4::Semaphore::create(0);
  std::function<void(int, int)> chain = [&](int c, int left) {
    server.submit(1, Bytes(2e6), [&, c, left] {
      ends.emplace_back(c, sg4::Engine::get_clock());
      if (left > 1)
        chain(c, left - 1);
      else
        all_done->release();
    });
  };
  sg4::Actor::create("start", host, [&] { // the server is a daemon: the simulation lasts while this waits
    chain(0, 3);
    chain(1, 3);
    all_done->acquire();
    all_done->acquire();
  });
  engine->run();
  ASSERT_EQ(ends.size(), 6u);
  for (size_t i = 0; i < ends.size(); ++i) {
    EXPECT_EQ(ends[i].first, static_cast<int>(i % 2)) << i;
    EXPECT_NEAR(ends[i].second, 4.1e-3 * static_cast<double>(i / 2 + 1), 1e-12) << i;
  }
}
