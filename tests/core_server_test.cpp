// The core server (sim/hardware/core_server.hpp) against a closed form with the co-running factor and a
// pull together, and against the form it replaces, run side by side in one engine on random workloads:
// one one-core SimGrid host per core with a pstate of speed v * e(B) * s(n) for every B and every count
// n of pieces on the core, an exec per piece, every core's pstate switched when B or n changes, and a balancing actor that sleeps until each pull is
// due. Both follow the same policy (run_queues.hpp); only how the times are kept differs. Then pieces
// submitted with completions (no actor waits): closed forms, the order of completions, and the same
// times as run() on random workloads. One engine per process: one run per test.
#include "sim/core/base/engine.hpp"
#include "sim/hardware/core_server.hpp"
#include "sim/hardware/platform.hpp"
#include "sim/hardware/run_queues.hpp"

#include <simgrid/s4u.hpp>

#include <gtest/gtest.h>

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <vector>

using namespace mlsim;
namespace sg4 = simgrid::s4u;

namespace {

// The exec form (what cpu_scheduler.cpp did before the core server).
class ExecCores {
public:
  ExecCores(sg4::NetZone* zone, sg4::Host* home, const CpuSpec& spec)
      : spec_(spec), home_(home), queues_(spec.cores) {
    std::vector<double> speeds; // pstate (B - 1) x sharings + (pieces on the core - 1)
    for (int b = 1; b <= spec.cores; ++b)
      for (size_t n = 1; n <= sharings_; ++n)
        speeds.push_back(spec.core_speed * kWorkPerSecond * corunning_efficiency(spec, b) *
                         shared_core_factor(spec, n));
    for (int i = 0; i < spec.cores; ++i)
      hosts_.push_back(zone->create_host("ref.core" + std::to_string(i), speeds)->seal());
    sg4::Activity::on_completion_cb([this](const sg4::Activity& a) { // no simcall needed to know it ended
      auto it = id_of_.find(&a);
      if (it != id_of_.end())
        ended_.insert(it->second);
    });
  }

  void run(double core_seconds) {
    const long actor = sg4::this_actor::get_pid();
    const long id = next_id_++;
    sg4::ExecPtr exec = sg4::Exec::init();
    exec->set_flops_amount(core_seconds * kWorkPerSecond);
    id_of_[exec.get()] = id;
    execs_[id] = exec;
    core_of_[id] = queues_.place(actor);
    queues_.push(core_of_[id], id);
    set_pstates();
    exec->set_host(hosts_[core_of_[id]]);
    exec->start();
    exec->wait();
    const size_t core = core_of_[id];
    queues_.remove(core, id);
    queues_.remember(actor, core);
    if (queues_.queue(core).empty())
      ran_dry(core);
    set_pstates();
  }

private:
  void set_pstates() {
    const unsigned long level = static_cast<unsigned long>(std::max(1, queues_.busy()) - 1);
    for (size_t c = 0; c < hosts_.size(); ++c) {
      const size_t n = std::min(std::max<size_t>(queues_.queue(c).size(), 1), sharings_);
      const unsigned long pstate = level * sharings_ + n - 1;
      if (hosts_[c]->get_pstate() != pstate)
        hosts_[c]->set_pstate(pstate);
    }
  }
  void pull(size_t core) {
    const auto [from, id] = queues_.pull_choice(core, [this](long i) { return ended_.count(i) == 0; });
    if (id < 0)
      return;
    queues_.move(id, from, core);
    core_of_[id] = core;
    execs_[id]->set_host(hosts_[core]); // migrates it; its remaining work continues there
  }
  void ran_dry(size_t core) {
    if (!(spec_.balance_delay.value() > 0)) {
      pull(core);
      return;
    }
    if (!queues_.any_queued() || pending_.count(core))
      return;
    pending_.insert(core);
    due_.emplace_back(core, sg4::Engine::get_clock() + spec_.balance_delay.value());
    if (!pulls_) {
      pulls_ = sg4::Semaphore::create(0);
      sg4::Actor::create("ref.balance", home_, [this] { balance(); })->daemonize();
    }
    pulls_->release();
  }
  void balance() {
    for (;;) {
      pulls_->acquire();
      const auto [core, when] = due_.front();
      due_.pop_front();
      if (when > sg4::Engine::get_clock())
        sg4::this_actor::sleep_for(when - sg4::Engine::get_clock());
      pending_.erase(core);
      pull(core);
      set_pstates();
    }
  }

  CpuSpec spec_;
  size_t sharings_ = spec_.shared_core_efficiency.size() + 1;
  sg4::Host* home_;
  RunQueues queues_;
  std::vector<sg4::Host*> hosts_;
  std::map<const sg4::Activity*, long> id_of_;
  std::map<long, sg4::ExecPtr> execs_;
  std::map<long, size_t> core_of_;
  std::set<long> ended_;
  std::set<size_t> pending_;
  std::deque<std::pair<size_t, double>> due_;
  sg4::SemaphorePtr pulls_;
  long next_id_ = 0;
};

CpuSpec cpu(int cores, double efficiency, double balance_delay_s) {
  CpuSpec c;
  c.cores = cores;
  c.core_speed = 1.5;
  c.all_cores_efficiency = efficiency;
  c.balance_delay = Seconds(balance_delay_s);
  return c;
}

// Each actor sleeps a random time, runs a random piece, `rounds` times, on both sides. Returns the end
// times of every piece: (server, execs).
std::vector<std::pair<double, double>> run_both(const CpuSpec& spec, int actors, int rounds, unsigned seed) {
  auto engine = make_engine();
  auto* zone = sg4::create_full_zone("test");
  auto* home = zone->create_host("node.cpu", 1e9)->seal();
  CoreServer server(spec, home);
  ExecCores reference(zone, home, spec);
  zone->seal();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> pause(0, 0.05), work(1e-3, 0.2);
  std::vector<std::vector<std::pair<double, double>>> plan(static_cast<size_t>(actors));
  for (auto& p : plan)
    for (int r = 0; r < rounds; ++r)
      p.emplace_back(pause(rng), work(rng));
  std::vector<std::pair<double, double>> end(static_cast<size_t>(actors * rounds), {-1.0, -1.0});
  for (size_t a = 0; a < plan.size(); ++a) {
    sg4::Actor::create("server" + std::to_string(a), home, [&, a] {
      for (size_t r = 0; r < plan[a].size(); ++r) {
        sg4::this_actor::sleep_for(plan[a][r].first);
        server.run(Seconds(plan[a][r].second));
        end[a * static_cast<size_t>(rounds) + r].first = sg4::Engine::get_clock();
      }
    });
    sg4::Actor::create("execs" + std::to_string(a), home, [&, a] {
      for (size_t r = 0; r < plan[a].size(); ++r) {
        sg4::this_actor::sleep_for(plan[a][r].first);
        reference.run(plan[a][r].second);
        end[a * static_cast<size_t>(rounds) + r].second = sg4::Engine::get_clock();
      }
    });
  }
  engine->run();
  return end;
}

void expect_same_ends(const std::vector<std::pair<double, double>>& end) {
  for (size_t i = 0; i < end.size(); ++i) {
    ASSERT_GT(end[i].first, 0.0) << i;
    EXPECT_NEAR(end[i].first, end[i].second, 1e-9 * end[i].second) << "piece " << i;
  }
}
} // namespace

TEST(CoreServer, APullRaisesTheBusyCountMidPiece) {
  // 2 cores, E = 0.8 (e(1) = 1, e(2) = 0.8), v = 1, balance delay 0.25 s; pieces of 4, 1, 4 s at t = 0:
  // core 0 gets pieces 0 and 2, core 1 piece 1. B = 2, each core at 0.8: piece 1 ends at 1 / 0.8 = 1.25,
  // when pieces 0 and 2 have 1.25 x 0.4 = 0.5 done each. Core 1 runs dry: B = 1 until the pull at 1.5,
  // core 0 at 1, 0.5 each: 0.625 done, 3.375 left. From 1.5 each has a core and B = 2 again:
  // 3.375 / 0.8 = 4.21875 s more, 5.71875. (A pull at once would give 1.25 + 3.5 / 0.8 = 5.625.)
  auto engine = make_engine();
  auto* zone = sg4::create_full_zone("test");
  auto* home = zone->create_host("node.cpu", 1e9)->seal();
  CpuSpec spec = cpu(2, 0.8, 0.25);
  spec.core_speed = 1.0;
  CoreServer server(spec, home);
  zone->seal();
  std::vector<double> work{4, 1, 4}, end(3, -1.0);
  for (size_t i = 0; i < work.size(); ++i)
    sg4::Actor::create("a" + std::to_string(i), home, [&, i] {
      server.run(Seconds(work[i]));
      end[i] = sg4::Engine::get_clock();
    });
  engine->run();
  EXPECT_NEAR(end[1], 1.25, 1e-12);
  EXPECT_NEAR(end[0], 5.71875, 1e-12);
  EXPECT_NEAR(end[2], 5.71875, 1e-12);
}

TEST(CoreServer, RandomPiecesEndWhenTheExecFormEnds) {
  // 4 cores, co-running slowdown and a balance delay: 24 actors, 8 pieces each, more pieces than cores
  // most of the time, so pieces share cores, cores run dry and pull, and B moves up and down.
  expect_same_ends(run_both(cpu(4, 0.7, 0.01), 24, 8, 7));
}

TEST(CoreServer, RandomPiecesWithImmediatePullsEndWhenTheExecFormEnds) {
  // balance_delay 0: a dry core takes a queued piece at once; 16 cores, fewer pieces than cores at times.
  expect_same_ends(run_both(cpu(16, 0.6, 0.0), 20, 10, 11));
}

TEST(CoreServer, RandomPiecesOnSlowerSharedCoresEndWhenTheExecFormEnds) {
  // shared_core_efficiency [0.9, 0.75]: a core queueing 2 pieces gets 0.9 of its work done, 3 or more
  // 0.75; 3 cores, 18 actors: cores hold 1 to 6 pieces, and the factor changes at every arrival, removal
  // and pull on them.
  CpuSpec spec = cpu(3, 0.8, 0.005);
  spec.shared_core_efficiency = {0.9, 0.75};
  expect_same_ends(run_both(spec, 18, 8, 5));
}

namespace {
// One engine, `servers` servers side by side (each a node's cores, speed 1, `spec`'s other settings).
struct Bench {
  explicit Bench(CpuSpec spec, int servers = 1) : engine(make_engine()) {
    spec.core_speed = 1.0;
    auto* zone = sg4::create_full_zone("test");
    home = zone->create_host("node.cpu", 1e9)->seal();
    for (int i = 0; i < servers; ++i)
      all.push_back(std::make_unique<CoreServer>(spec, home));
    server = all.front().get();
    zone->seal();
  }
  // Runs `body` in an actor at `t`; the actor then lives until t = 100, after every piece here: the
  // server's steps end with the job's actors, and the simulation ends with the last other actor.
  void at(double t, std::function<void()> body) {
    sg4::Actor::create("at", home, [t, body = std::move(body)] {
      sg4::this_actor::sleep_until(t);
      body();
      sg4::this_actor::sleep_until(100);
    });
  }
  std::unique_ptr<sg4::Engine> engine;
  sg4::Host* home = nullptr;
  std::vector<std::unique_ptr<CoreServer>> all;
  CoreServer* server = nullptr;
};
double now() { return sg4::Engine::get_clock(); }
} // namespace

TEST(CoreServer, SubmittedPiecesCompleteAtTheirClosedFormEnds) {
  // 2 cores, no slowdown, immediate pulls: pieces of 1, 2, 2 s submitted at t = 0 by three threads.
  // Core 0 gets the first and third (half a core each), core 1 the second. The first has 1 s done at
  // t = 2 and ends there, as does the second; the third, 1 s done, then has core 0 alone: ends at 3.
  Bench b(cpu(2, 1.0, 0.0));
  std::vector<double> end(3, -1.0);
  b.at(0, [&] {
    const std::vector<double> work{1, 2, 2};
    for (size_t i = 0; i < work.size(); ++i)
      b.server->submit(Seconds(work[i]), b.server->new_thread(), [&end, i] { end[i] = now(); });
  });
  b.engine->run();
  EXPECT_NEAR(end[0], 2.0, 1e-12);
  EXPECT_NEAR(end[1], 2.0, 1e-12);
  EXPECT_NEAR(end[2], 3.0, 1e-12);
}

TEST(CoreServer, PiecesEndingTogetherCompleteInArrivalOrderAndACompletionMaySubmit) {
  // 2 cores: x (1 s) on core 0 and a (2 s) on core 1 at t = 0. x's completion submits c (1 s) at t = 1:
  // core 0 is idle, so c runs there and ends at 2, with a. Arrival order a (1), c (2): a completes first,
  // though c's core has the lower index.
  Bench b(cpu(2, 1.0, 0.0));
  std::vector<std::pair<char, double>> done;
  b.at(0, [&] {
    const long tx = b.server->new_thread(), ta = b.server->new_thread();
    b.server->submit(Seconds(1), tx, [&, tx] {
      done.emplace_back('x', now());
      b.server->submit(Seconds(1), tx, [&] { done.emplace_back('c', now()); });
    });
    b.server->submit(Seconds(2), ta, [&] { done.emplace_back('a', now()); });
  });
  b.engine->run();
  ASSERT_EQ(done.size(), 3u);
  EXPECT_EQ(done[0].first, 'x');
  EXPECT_NEAR(done[0].second, 1.0, 1e-12);
  EXPECT_EQ(done[1].first, 'a');
  EXPECT_EQ(done[2].first, 'c');
  EXPECT_NEAR(done[1].second, 2.0, 1e-12);
  EXPECT_NEAR(done[2].second, 2.0, 1e-12);
}

TEST(CoreServer, ACompletionThatSubmitsSeveralPiecesSharesTheCoreWithThem) {
  // 1 core: a 1 s piece ends at 1; its completion submits three 1 s pieces (the server's table of pieces
  // grows while it completes one), which share the core: a third of a core each, all end at 1 + 3 = 4.
  // Each of those then submits a 0.5 s piece: the three share the core again and end at 4 + 1.5 = 5.5.
  Bench b(cpu(1, 1.0, 0.0));
  std::vector<double> second, third;
  b.at(0, [&] {
    b.server->submit(Seconds(1), b.server->new_thread(), [&] {
      for (int i = 0; i < 3; ++i) {
        const long t = b.server->new_thread();
        b.server->submit(Seconds(1), t, [&, t] {
          second.push_back(now());
          b.server->submit(Seconds(0.5), t, [&] { third.push_back(now()); });
        });
      }
    });
  });
  b.engine->run();
  ASSERT_EQ(second.size(), 3u);
  ASSERT_EQ(third.size(), 3u);
  for (double t : second)
    EXPECT_NEAR(t, 4.0, 1e-12);
  for (double t : third)
    EXPECT_NEAR(t, 5.5, 1e-12);
}

TEST(CoreServer, ASubmittedPieceWaitsTheBusyWakeDelayAsRunDoes) {
  // As CpuScheduler.AThreadWakingOnBusyCoresWaitsTheWakeDelay, on two servers side by side: one driven
  // by actors through run(), the other through submit() with completions. 1 core, delay 0.5 s: thread 0
  // runs 10 s from t = 0; thread 1 wakes at t = 1 on the busy core, enters at 1.5, shares the core: its
  // 1 s piece ends at 3.5; its next piece follows at once (no delay) and ends at 5.5; thread 0 at 12.
  CpuSpec spec = cpu(1, 1.0, 0.0);
  spec.busy_wake_delay = Seconds(0.5);
  Bench b(spec, 2);
  CoreServer &by_run = *b.all[0], &by_submit = *b.all[1];
  sg4::Host* home = b.home;
  std::vector<double> run_end, submit_end;
  sg4::Actor::create("run0", home, [&] {
    by_run.run(Seconds(10));
    run_end.push_back(now());
  });
  sg4::Actor::create("run1", home, [&] {
    sg4::this_actor::sleep_until(1);
    by_run.run(Seconds(1));
    run_end.push_back(now());
    by_run.run(Seconds(1));
    run_end.push_back(now());
  });
  sg4::Actor::create("submit", home, [&] {
    by_submit.submit(Seconds(10), by_submit.new_thread(), [&] { submit_end.push_back(now()); });
    sg4::this_actor::sleep_until(1);
    const long t = by_submit.new_thread();
    by_submit.submit(Seconds(1), t, [&, t] {
      submit_end.push_back(now());
      by_submit.submit(Seconds(1), t, [&] { submit_end.push_back(now()); });
    });
  });
  b.engine->run();
  const std::vector<double> expected{3.5, 5.5, 12.0};
  ASSERT_EQ(run_end.size(), 3u);
  ASSERT_EQ(submit_end.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_NEAR(run_end[i], expected[i], 1e-12) << i;
    EXPECT_EQ(submit_end[i], run_end[i]) << i;
  }
}

TEST(CoreServer, SubmittedChainsEndWhenBlockingRunsEnd) {
  // Two servers side by side on random workloads: threads start at random times and run random pieces
  // back to back, through run() in an actor each on one server, and as chains of completions on the
  // other. 4 cores, co-running slowdown, shared-core factors, a balance delay and a busy wake delay (a
  // thread's first piece wakes it): every piece ends at the same time on both.
  CpuSpec spec = cpu(4, 0.7, 0.01);
  spec.shared_core_efficiency = {0.9, 0.8};
  spec.busy_wake_delay = Seconds(0.003);
  Bench b(spec, 2);
  CoreServer &by_run = *b.all[0], &by_submit = *b.all[1];
  sg4::Host* home = b.home;
  const int threads = 20, rounds = 8;
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> start(0, 0.3), work(1e-3, 0.2);
  std::vector<double> starts;
  std::vector<std::vector<double>> plan(threads);
  for (auto& p : plan) {
    starts.push_back(start(rng));
    for (int r = 0; r < rounds; ++r)
      p.push_back(work(rng));
  }
  std::vector<std::vector<double>> run_end(threads), submit_end(threads);
  std::vector<long> keys(threads);
  std::function<void(int, int)> chain = [&](int t, int r) {
    by_submit.submit(Seconds(plan[t][r]), keys[t], [&, t, r] {
      submit_end[t].push_back(now());
      if (r + 1 < rounds)
        chain(t, r + 1);
    });
  };
  for (int t = 0; t < threads; ++t) {
    keys[t] = by_submit.new_thread();
    sg4::Actor::create("run", home, [&, t] {
      sg4::this_actor::sleep_until(starts[t]);
      for (double w : plan[t]) {
        by_run.run(Seconds(w));
        run_end[t].push_back(now());
      }
    });
    sg4::Actor::create("submit", home, [&, t] {
      sg4::this_actor::sleep_until(starts[t]);
      chain(t, 0);
    });
  }
  b.engine->run();
  for (int t = 0; t < threads; ++t) {
    ASSERT_EQ(run_end[t].size(), static_cast<size_t>(rounds));
    ASSERT_EQ(submit_end[t].size(), static_cast<size_t>(rounds));
    for (int r = 0; r < rounds; ++r)
      EXPECT_NEAR(submit_end[t][r], run_end[t][r], 1e-12 * run_end[t][r]) << t << " " << r;
  }
}
