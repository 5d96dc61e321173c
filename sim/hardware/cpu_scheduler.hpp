// Where a node's CPU work runs: per-core run queues, as Linux keeps them.
//
//   A piece of work (a worker's samples, a collation, a host-placed op) of a
//   thread that wakes starts on an idle core (the one its thread used last, if
//   idle), else joins the core with the fewest pieces (the thread's last core
//   on a tie, else the lowest index) and shares that core equally with them.
//   A thread that never stopped running is not placed again: its next piece
//   stays on its core (the previous piece ended at this instant, or the
//   thread spent the time between on its core: a worker's read out of the
//   page cache is its own memcpy, keeps_core). A core that runs dry while
//   another queues two or more, or that is idle when a piece that stays
//   crowds its core, takes the most recently queued piece of the busiest one
//   `balance_delay` later (if it is still dry). Why not at
//   once: Linux pulls work into a core that just went idle only when its
//   recent idle periods average more than sched_migration_cost (0.5 ms); with
//   CPU-bound threads they do not, and the periodic balancer (driven by the
//   scheduler tick) moves the queued thread some ticks later. `mlsim
//   calibrate` measures the delay (sim/validate/host_bench.hpp: median ~10 ms
//   on the 2-core development VM, HZ 250); the default is 4 ms, one tick at
//   HZ 250. balance_delay 0 models an immediate pull.
//   Every core runs at v * e(B), B = busy cores of the node, e from cpu.hpp: a
//   piece slows down or speeds up with its neighbours. One server per node keeps
//   the run queues and serves the pieces' times in closed form
//   (core_server.hpp, run_queues.hpp); the balance pulls are its timed events.
//   A core that runs n >= 2 pieces gets shared_core_efficiency(n) of its
//   speed done (cpu.hpp: the pieces' data evict each other from its caches
//   at every switch; measured by `mlsim calibrate --client pytorch`: 0.98
//   with 2 loader processes on one core of the quiet development VM, 0.93
//   with other tenants at a load average of 8), shared
//   equally among them: each runs at v * e(B) * s(n) / n.
//   A thread that wakes (its previous piece did not end at this
//   instant) while every core runs work waits `busy_wake_delay` before its
//   piece is placed: Linux (EEVDF) does not preempt the running thread at
//   once but at the end of its slice or at a tick. `mlsim calibrate`
//   measures it (host_bench.hpp: on the quiet 2-core development VM, HZ 250,
//   a 4 ms sleep next to a spinning thread on the same core oversleeps no
//   more than with the core idle: 0 ms; with other tenants at a load average
//   of 8, ~3 ms at the median); the default 0 places it at once. A training loop that sleeps through the accelerator's step and
//   then asks its busy workers for the next batch pays it every step.
// Why not one fair pool (SimGrid's multi-core host, `scheduler: fair`): with
// n > c runnable threads a fair pool gives each c/n of a core, but Linux
// balances the number of threads per core and does not rotate them, so with
// 3 threads on 2 cores one has a core to itself and two get half a core each.
// A training loop's host thread that wakes up next to busy loader workers
// therefore gets half a core, not 2/3: `mlsim validate` measured the consumer
// thread of a 2-core VM at 50-52 % of a core next to two loader threads.
// Both policies deliver the same total while every core is busy.
// Ignores: the immediate pull after long idle periods (avg_idle above the
// migration cost), the extra share Linux gives a thread waking from sleep on
// a shared core (52-55 % instead of 50 % measured for validate's consumer),
// wake-up latency on an idle core (~45 us on the 2-core VM), a woken thread
// moving to a core that goes idle during its wait, cache-hot
// checks, SMT, nice levels, NUMA; the co-running factor e is read at the
// node level.
#pragma once

#include "sim/hardware/core_server.hpp"
#include "sim/hardware/cpu.hpp"

#include <simgrid/forward.h>

#include <memory>

namespace mlsim {

class CpuScheduler {
public:
  // `pool`: the node's multi-core host; the fair policy runs its work there, per_core serves it from
  // there (core_server.hpp).
  CpuScheduler(simgrid::s4u::Host* pool, const CpuSpec& spec);

  using Completion = CoreServer::Completion;

  // Runs `core_seconds` of reference-core work for the calling actor; returns when done.
  void run(Seconds core_seconds);
  // The same for `thread` (new_thread()), run by the calling actor: a worker's blocking step.
  void run(Seconds core_seconds, long thread);

  // per_core: the work of `thread` runs without an actor, `done` runs in the node's core server when it
  // is done (core_server.hpp). The fair policy runs execs, which need an actor that waits: see
  // serves_completions().
  void submit(Seconds core_seconds, long thread, Completion done);
  bool serves_completions() const { return cores_ != nullptr; }

  // A thread of the node that is not an actor (a worker slot): per_core keeps its last core.
  long new_thread();
  // per_core: `thread` runs on its core until its next piece (CoreServer::keep_core); fair: nothing.
  void keeps_core(long thread);

private:
  simgrid::s4u::Host* pool_;
  std::unique_ptr<CoreServer> cores_; // per_core; null: fair
};

} // namespace mlsim
