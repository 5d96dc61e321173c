// Where a node's CPU work runs: per-core run queues, as Linux keeps them.
//
//   A piece of work (a worker's samples, a collation, a host-placed op) starts
//   on an idle core (the one its actor used last, if idle), else joins the
//   core with the fewest pieces (the actor's last core on a tie, else the
//   lowest index) and shares that core equally with them. When a core runs
//   dry it takes the most recently queued piece from the busiest core that
//   has two or more (idle balancing), so no core idles while another queues.
//   Each core is its own one-core SimGrid host of speed v * e(B), B = busy
//   cores of the node, e from cpu.hpp; a change of B switches every core's
//   SimGrid pstate, so running work slows down or speeds up with its
//   neighbours.
// Why not one fair pool (SimGrid's multi-core host, `scheduler: fair`): with
// n > c runnable threads a fair pool gives each c/n of a core, but Linux
// balances the number of threads per core and does not rotate them, so with
// 3 threads on 2 cores one has a core to itself and two get half a core each.
// A training loop's host thread that wakes up next to busy loader workers
// therefore gets half a core, not 2/3: `mlsim validate` measured the consumer
// thread of a 2-core VM at 50-52 % of a core next to two loader threads.
// Both policies deliver the same total while every core is busy.
// Ignores: wake-up latency, migration cost and cache-hot barriers (Linux
// waits before moving a thread that just ran: the 2-core VM showed 5-10 %
// idle core time in oversubscribed runs, which this model does not have);
// SMT, nice levels, NUMA; the co-running factor e is read at the node level.
#pragma once

#include "sim/hardware/cpu.hpp"

#include <simgrid/s4u/Exec.hpp>

#include <map>
#include <string>
#include <vector>

namespace mlsim {


class CpuScheduler {
public:
  // `pool`: the node's multi-core host (the fair policy runs work there); per_core creates one host per core
  // in `zone`, named <pool>.core<i>.
  CpuScheduler(simgrid::s4u::NetZone* zone, simgrid::s4u::Host* pool, const CpuSpec& spec);

  // Runs `work` (kWorkPerSecond units per reference core-second) for the calling actor; returns when done.
  void run(double work);

  int busy_cores() const;

private:
  struct Core {
    simgrid::s4u::Host* host = nullptr;
    std::vector<simgrid::s4u::ExecPtr> queue; // pieces placed here, oldest first
  };
  void remove(const simgrid::s4u::Exec* exec, size_t& where);
  size_t place(long actor);
  void set_speed_state();
  void balance_into(size_t idle);

  simgrid::s4u::Host* pool_;
  CpuSpec spec_;
  std::vector<Core> cores_;
  std::map<long, size_t> last_core_; // actor id -> core it last ran on
  int busy_ = 0;
  int levels_ = 1; // pstates per core host: e(1) .. e(levels)
};

} // namespace mlsim
