// Server steps on the engine's timers (sim/hardware/server_wakeup.hpp): they run at their planned
// times, steps planned a few ulps apart run at one instant in planned order, nothing planned outlives
// the job's actors (the run ends when the last one does, as it did with server actors), and a step
// that throws stops the run with its error. One engine per process: one run per test.
#include "sim/core/base/engine.hpp"
#include "sim/core/base/errors.hpp"
#include "sim/hardware/core_server.hpp"
#include "sim/hardware/server_wakeup.hpp"

#include <simgrid/s4u.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

using namespace mlsim;
namespace sg4 = simgrid::s4u;

namespace {

struct World {
  std::unique_ptr<sg4::Engine> engine = make_engine();
  sg4::Host* home = nullptr;
  World() {
    auto* zone = sg4::create_full_zone("test");
    home = zone->create_host("node", 1e9)->seal();
    zone->seal();
  }
  // A job actor that lives until `t`.
  void job_until(double t) {
    sg4::Actor::create("job", home, [t] { sg4::this_actor::sleep_until(t); });
  }
};

TEST(ServerWakeup, StepsRunAtTheirTimesAndTiesInPlannedOrder) {
  World w;
  std::vector<std::pair<std::string, double>> ran; // (which, the clock when it ran)
  std::vector<double> reached;
  const double two_and_an_ulp = std::nextafter(2.0, 3.0);
  ServerWakeup a(w.home, [&](double at) { ran.emplace_back("a", sg4::Engine::get_clock()); reached.push_back(at); });
  ServerWakeup b(w.home, [&](double at) { ran.emplace_back("b", sg4::Engine::get_clock()); reached.push_back(at); });
  ServerWakeup c(w.home, [&](double at) { ran.emplace_back("c", sg4::Engine::get_clock()); reached.push_back(at); });
  sg4::Actor::create("plan", w.home, [&] {
    b.at(two_and_an_ulp);
    a.at(2.0);
    c.at(5.0);
    c.at(1.0); // replaces the step at 5
  });
  w.job_until(10);
  w.engine->run();
  ASSERT_EQ(ran.size(), 3u);
  EXPECT_EQ(ran[0], std::make_pair(std::string("c"), 1.0));
  EXPECT_EQ(ran[1], std::make_pair(std::string("a"), 2.0));
  EXPECT_EQ(ran[2].first, "b"); // an ulp later: the same instant, after a
  EXPECT_EQ(ran[2].second, 2.0);
  EXPECT_EQ(reached[2], two_and_an_ulp); // told the time it was planned for
}

TEST(ServerWakeup, NothingPlannedOutlivesTheJob) {
  // A core server with 10 s of work in flight and a job that ends at 1 s: the run ends at 1 s, the
  // completion never runs (as when the server was a daemon actor, killed with the job's end).
  World w;
  CpuSpec spec;
  spec.cores = 2;
  spec.core_speed = 1.0;
  CoreServer cores(spec, w.home);
  bool completed = false;
  sg4::Actor::create("submit", w.home, [&] { cores.submit(Seconds(10), cores.new_thread(), [&] { completed = true; }); });
  w.job_until(1);
  w.engine->run();
  EXPECT_DOUBLE_EQ(sg4::Engine::get_clock(), 1.0);
  EXPECT_FALSE(completed);
}

TEST(ServerWakeup, AStepThatThrowsStopsTheRunWithItsError) {
  World w;
  ServerWakeup failing(w.home, [](double) { throw InputError("disk.yaml", "disks.0.latency", "a latency", "-1 s"); });
  sg4::Actor::create("plan", w.home, [&] { failing.at(3.0); });
  w.job_until(100);
  w.engine->run();
  EXPECT_LT(sg4::Engine::get_clock(), 100.0);
  EXPECT_THROW(rethrow_actor_failure(), InputError);
}

} // namespace
