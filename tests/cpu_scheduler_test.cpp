// The node's CPU scheduler (sim/hardware/cpu_scheduler.hpp): per-core run queues
// against hand-worked timelines, and the fair pool for comparison. One engine per
// process (SimGrid): one run_pieces per test.
#include "sim/core/base/engine.hpp"
#include "sim/hardware/cpu_scheduler.hpp"
#include "sim/hardware/platform.hpp"

#include <simgrid/s4u.hpp>

#include <gtest/gtest.h>

#include <memory>
#include <vector>

using namespace mlsim;
namespace sg4 = simgrid::s4u;

namespace {
// Pieces of work started by one actor each, at given times; returns each piece's end time.
struct Piece {
  double start_s, work_s;
};
// One actor's script: it starts at its time; each step runs `work_s` on the scheduler, then waits
// `pause_s` before the next step, asleep or, with `keeps`, reading out of the page cache (its thread
// keeps its core).
struct Step {
  double work_s;
  double pause_s = -1.0; // < 0: the next step follows at once (the thread never stops running)
  bool keeps = false;
};
std::vector<std::vector<double>> run_scripts(const CpuSpec& cpu, const std::vector<std::pair<double, std::vector<Step>>>& actors) {
  auto engine = make_engine();
  auto* zone = sg4::create_full_zone("test");
  auto* pool = zone->create_host("node.cpu", cpu.core_speed * kWorkPerSecond)->set_core_count(cpu.cores)->seal();
  CpuScheduler sched(pool, cpu);
  zone->seal();
  std::vector<std::vector<double>> end(actors.size());
  for (size_t i = 0; i < actors.size(); ++i)
    sg4::Actor::create("a" + std::to_string(i), pool, [&, i] {
      sg4::this_actor::sleep_until(actors[i].first);
      for (const Step& s : actors[i].second) {
        sched.run(Seconds(s.work_s));
        end[i].push_back(sg4::Engine::get_clock());
        if (s.pause_s >= 0) {
          if (s.keeps)
            sched.keeps_core(sg4::this_actor::get_pid());
          sg4::this_actor::sleep_for(s.pause_s);
        }
      }
    });
  engine->run();
  return end;
}
// Actors, each starting at its first piece's start and running its pieces one after another (a later
// piece's start_s is ignored: it follows the previous piece at once); returns every piece's end time,
// actor by actor.
std::vector<std::vector<double>> run_actors(const CpuSpec& cpu, const std::vector<std::vector<Piece>>& actors) {
  std::vector<std::pair<double, std::vector<Step>>> scripts;
  for (const auto& pieces : actors) {
    scripts.push_back({pieces.front().start_s, {}});
    for (const Piece& p : pieces)
      scripts.back().second.push_back({p.work_s});
  }
  return run_scripts(cpu, scripts);
}
std::vector<double> run_pieces(const CpuSpec& cpu, const std::vector<Piece>& pieces) {
  std::vector<std::vector<Piece>> actors;
  for (const Piece& p : pieces)
    actors.push_back({p});
  std::vector<double> end;
  for (const auto& e : run_actors(cpu, actors))
    end.push_back(e.front());
  return end;
}
CpuSpec cpu(int cores, CpuScheduling s, double efficiency = 1.0, double balance_delay_s = 0.0) {
  CpuSpec c;
  c.cores = cores;
  c.scheduling = s;
  c.all_cores_efficiency = efficiency;
  c.balance_delay = Seconds(balance_delay_s);
  return c;
}
} // namespace

TEST(CpuScheduler, ThreePiecesOnTwoCoresLinuxStyle) {
  // Pieces of 1 s, 2 s, 2 s at t = 0 on 2 cores: the first two get a core each, the third shares core 0
  // with the first (half speed each). At t = 2 the first is done (1 s at 1/2); core 0 keeps the third
  // (1 s left). Core 1's piece ends at t = 2 as well, so the cores run 1 piece each: the third ends at 3.
  std::vector<double> end = run_pieces(cpu(2, CpuScheduling::per_core), {{0, 1}, {0, 2}, {0, 2}});
  EXPECT_NEAR(end[0], 2.0, 1e-9);
  EXPECT_NEAR(end[1], 2.0, 1e-9);
  EXPECT_NEAR(end[2], 3.0, 1e-9);
}

TEST(CpuScheduler, ThreePiecesOnTwoCoresFairPool) {
  // The same on one fair pool: 2/3 of a core each until the 1 s piece ends at 1.5; then 2 pieces with
  // 1 s left each run at full speed: both end at 2.5.
  std::vector<double> end = run_pieces(cpu(2, CpuScheduling::fair), {{0, 1}, {0, 2}, {0, 2}});
  EXPECT_NEAR(end[0], 1.5, 1e-9);
  EXPECT_NEAR(end[1], 2.5, 1e-9);
  EXPECT_NEAR(end[2], 2.5, 1e-9);
}

TEST(CpuScheduler, AnIdleCoreTakesTheLatestQueuedPieceWithItsRemainingWork) {
  // 4 s, 1 s, 4 s at t = 0: core 0 gets pieces 0 and 2 (a tie goes to the lowest index), core 1 piece 1.
  // At t = 1 core 1 runs dry and takes piece 2 (0.5 s done, 3.5 s left): it ends at 4.5; piece 0, alone
  // from t = 1 with 3.5 s left, ends at 4.5 too. Without the move both would share core 0 until t = 8.
  std::vector<double> end = run_pieces(cpu(2, CpuScheduling::per_core), {{0, 4}, {0, 1}, {0, 4}});
  EXPECT_NEAR(end[1], 1.0, 1e-9);
  EXPECT_NEAR(end[0], 4.5, 1e-9);
  EXPECT_NEAR(end[2], 4.5, 1e-9);
}

TEST(CpuScheduler, ADryCoreWaitsTheBalanceDelay) {
  // As above with a balance delay of 0.25 s: core 1 runs dry at t = 1 and takes piece 2 at t = 1.25,
  // when it has 4 - 1.25 / 2 = 3.375 s left; piece 0, alone from then with as much left, ends with it.
  std::vector<double> end = run_pieces(cpu(2, CpuScheduling::per_core, 1.0, 0.25), {{0, 4}, {0, 1}, {0, 4}});
  EXPECT_NEAR(end[1], 1.0, 1e-9);
  EXPECT_NEAR(end[0], 1.25 + 3.375, 1e-9);
  EXPECT_NEAR(end[2], 1.25 + 3.375, 1e-9);
}

TEST(CpuScheduler, TheDelayCountsFromWhenTheCoreRanDry) {
  // Core 1 runs dry at t = 0.3 and takes piece 2 at 0.8 (delay 0.5), when it has 4 - 0.8 / 2 = 3.6 s left;
  // piece 0, alone from then with as much left, ends with it at 4.4.
  std::vector<double> end = run_pieces(cpu(2, CpuScheduling::per_core, 1.0, 0.5), {{0, 4}, {0, 0.3}, {0, 4}});
  EXPECT_NEAR(end[1], 0.3, 1e-9);
  EXPECT_NEAR(end[0], 0.8 + 3.6, 1e-9);
  EXPECT_NEAR(end[2], 0.8 + 3.6, 1e-9);
}

TEST(CpuScheduler, CoRunningSlowdownFollowsTheBusyCores) {
  // 2 cores, all_cores_efficiency 0.5: e(1) = 1, e(2) = 0.5. A 1 s piece at t = 0 and one at t = 0.5: the
  // first does 0.5 s alone, then both run at half speed: the first ends at 1.5; the second has 0.5 s
  // done by then and ends alone at 2.0.
  std::vector<double> end = run_pieces(cpu(2, CpuScheduling::per_core, 0.5), {{0, 1}, {0.5, 1}});
  EXPECT_NEAR(end[0], 1.5, 1e-9);
  EXPECT_NEAR(end[1], 2.0, 1e-9);
}

TEST(CpuScheduler, AThreadWakingOnBusyCoresWaitsTheWakeDelay) {
  // 1 core, busy_wake_delay 0.5 s. Actor 0 runs 10 s from t = 0. Actor 1 wakes at t = 1 with every core
  // busy: it waits until 1.5, then shares the core: its 1 s piece ends at 3.5 (3.0 without the delay).
  // Its second piece follows the first at once (the thread kept running): no delay, shared, ends at 5.5.
  // Actor 0: 1.5 s alone, 4 s at half speed (2 s done), then 6.5 s alone: ends at 12.0.
  CpuSpec c = cpu(1, CpuScheduling::per_core);
  c.busy_wake_delay = Seconds(0.5);
  const auto end = run_actors(c, {{{0, 10}}, {{1, 1}, {1, 1}}});
  EXPECT_NEAR(end[1][0], 3.5, 1e-9);
  EXPECT_NEAR(end[1][1], 5.5, 1e-9);
  EXPECT_NEAR(end[0][0], 12.0, 1e-9);
}

TEST(CpuScheduler, AThreadWakingNextToAnIdleCoreStartsAtOnce) {
  // 2 cores, one busy from t = 0: the thread waking at t = 1 takes the idle core and ends at 2.0.
  CpuSpec c = cpu(2, CpuScheduling::per_core);
  c.busy_wake_delay = Seconds(0.5);
  const auto end = run_pieces(c, {{0, 10}, {1, 1}});
  EXPECT_NEAR(end[1], 2.0, 1e-9);
  EXPECT_NEAR(end[0], 10.0, 1e-9);
}

TEST(CpuScheduler, ACoreSwitchingAmongPiecesGetsLessDone) {
  // 1 core, shared_core_efficiency [0.8]: a 1 s and a 3 s piece at t = 0 each run at 0.8 / 2 = 0.4 of the
  // core; the first ends at 2.5, when the second has 1 s done; alone again at full speed it ends at 4.5.
  CpuSpec c = cpu(1, CpuScheduling::per_core);
  c.shared_core_efficiency = {0.8};
  std::vector<double> end = run_pieces(c, {{0, 1}, {0, 3}});
  EXPECT_NEAR(end[0], 2.5, 1e-9);
  EXPECT_NEAR(end[1], 4.5, 1e-9);
}

TEST(CpuScheduler, MorePiecesThanListedUseTheLastEntry) {
  // Four 1 s pieces on 1 core with [0.8, 0.6]: 0.6 / 4 = 0.15 of the core each until the first ends...
  // all four are alike, so all end together at 1 / 0.15.
  CpuSpec c = cpu(1, CpuScheduling::per_core);
  c.shared_core_efficiency = {0.8, 0.6};
  for (double e : run_pieces(c, {{0, 1}, {0, 1}, {0, 1}, {0, 1}}))
    EXPECT_NEAR(e, 1.0 / 0.15, 1e-9);
}

TEST(CpuScheduler, OnlyTheSharedCoreSlowsDown) {
  // 2 cores, [0.8]: pieces of 1 s, 2 s, 2 s at t = 0. Core 0 runs pieces 0 and 2 at 0.4 each, core 1
  // piece 1 at full speed. At t = 2 piece 1 ends and core 1 takes piece 2 (1.2 s left): piece 0 (0.2 s
  // left) ends at 2.2, piece 2 at 3.2.
  CpuSpec c = cpu(2, CpuScheduling::per_core);
  c.shared_core_efficiency = {0.8};
  std::vector<double> end = run_pieces(c, {{0, 1}, {0, 2}, {0, 2}});
  EXPECT_NEAR(end[1], 2.0, 1e-9);
  EXPECT_NEAR(end[0], 2.2, 1e-9);
  EXPECT_NEAR(end[2], 3.2, 1e-9);
}

TEST(CpuScheduler, ManyPiecesArrivingAtOnceWhileTheServerSleeps) {
  // 1 core: a 10 s piece from t = 0, then 50 pieces of 10 ms at t = 1. The first arrival wakes the sleeping
  // server (a simcall, at which the other 49 run and add their pieces); all 51 share the core: the short
  // ones end at 1 + 0.01 x 51 = 1.51, the long one, 0.01 s further by then, ends at 1.51 + 8.99 = 10.5.
  std::vector<Piece> pieces{{0, 10}};
  for (int i = 0; i < 50; ++i)
    pieces.push_back({1, 0.01});
  std::vector<double> end = run_pieces(cpu(1, CpuScheduling::per_core), pieces);
  EXPECT_NEAR(end[0], 10.5, 1e-9);
  for (size_t i = 1; i < end.size(); ++i)
    EXPECT_NEAR(end[i], 1.51, 1e-9) << i;
}

TEST(CpuScheduler, ARunningThreadStaysOnItsCoreUntilTheBalancerMovesIt) {
  // 2 cores, balance delay 0.2 s. A: 2 s from t = 0 on core 0. C: 0.2 s from t = 0 on core 1 (its last
  // core). B: from t = 0.3 on idle core 1, 1 s, then at once another 1 s. C again at 0.5 (2 s): no core
  // idle, a tie, its last core 1: it shares with B, whose first piece ends at 0.5 + 0.8 / 0.5 = 2.1.
  // Core 0 ran dry at 2.0 with two pieces queued on core 1: it takes one at 2.2. B never stopped
  // running, so at 2.1 its next piece stays on core 1 (a thread that did not sleep is not placed
  // again); at 2.2 core 0 takes it (the latest queued): 0.05 s done, it ends at 2.2 + 0.95 = 3.15, and
  // C (0.85 s done by 2.2) at 3.35. Placed again at 2.1, B would have taken the idle core 0 (3.1, 3.3).
  CpuSpec c = cpu(2, CpuScheduling::per_core, 1.0, 0.2);
  const auto end = run_scripts(c, {{0.0, {{2.0}}}, {0.3, {{1.0}, {1.0}}}, {0.0, {{0.2, 0.3}, {2.0}}}});
  EXPECT_NEAR(end[0][0], 2.0, 1e-9);
  EXPECT_NEAR(end[1][0], 2.1, 1e-9);
  EXPECT_NEAR(end[1][1], 3.15, 1e-9);
  EXPECT_NEAR(end[2][1], 3.35, 1e-9);
}

TEST(CpuScheduler, AThreadReadingFromThePageCacheKeepsItsCore) {
  // 1 core. B: 1 s from t = 0, then a 0.2 s read out of the page cache (its own memcpy: it keeps the
  // core), then 1 s. C wakes at 1.1 with 1 s and shares the core with B's read until 1.2 (0.05 s done),
  // then with B's piece: C ends at 1.2 + 2 x 0.95 = 3.1, B (0.95 s done by then) at 3.15. Had B slept
  // through its read, C would have had the core alone until 1.2 and ended at 3.0, B at 3.1.
  CpuSpec c = cpu(1, CpuScheduling::per_core);
  const auto end = run_scripts(c, {{0.0, {{1.0, 0.2, true}, {1.0}}}, {1.1, {{1.0}}}});
  EXPECT_NEAR(end[0][0], 1.0, 1e-9);
  EXPECT_NEAR(end[1][0], 3.1, 1e-9);
  EXPECT_NEAR(end[0][1], 3.15, 1e-9);
}

TEST(CpuScheduler, AThreadThatStopsAfterItsReadGivesTheCoreBack) {
  // 1 core. B: 1 s from t = 0, a 0.2 s read out of the page cache (its core held), no work on what it read,
  // then 1 s asleep and 1 s of work. C wakes at 1.1 with 1 s: it shares the core with B's read until 1.2
  // (0.05 s done), then has it alone: it ends at 1.2 + 0.95 = 2.15. B's last piece starts at 2.2 on the
  // idle core: 3.2. A hold never given back would leave C at half speed: 3.1.
  CpuSpec c = cpu(1, CpuScheduling::per_core);
  const auto end = run_scripts(c, {{0.0, {{1.0, 0.2, true}, {0.0, 1.0}, {1.0}}}, {1.1, {{1.0}}}});
  EXPECT_NEAR(end[1][0], 2.15, 1e-9);
  EXPECT_NEAR(end[0][2], 3.2, 1e-9);
}
