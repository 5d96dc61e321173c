// A server's next step at a simulated time, run by the engine itself (a SimGrid kernel timer, in
// maestro) instead of by an actor sleeping until then.
//
// The disk and core servers (disk_server.hpp, core_server.hpp) each had one actor that slept until
// its next event or until an arrival woke it: ~270 wake-ups per step of a 1 node x 8 run, each two
// context switches and a timed semaphore wait. A kernel timer calls the step directly
// (`build/bench/actor_cost wakeups N` times both forms).
// The step must not block (the servers' completions already must not); simcalls from it run at
// once (maestro executes them in place), so actors it releases run after it, at the same instant.
//
// The planned steps of all servers are kept in time order under one kernel timer, set at the earliest.
// When it fires, every step due by then runs, in the order of their planned times (ties: the order
// they were planned), including steps planned a few ulps later (due_by, server_timer.hpp): two
// servers' forecasts of one instant may differ in their last bits, and SimGrid served the actors'
// timed waits within its timing precision as one instant too.
// Timers outlive actors: when the last job actor ends and SimGrid kills the daemons, or when the run
// is stopped (stop_simulation), a pending step would keep the engine going. Every wake-up is
// therefore cancelled when a daemon sentinel actor, started with the first wake-up, is killed.
// An exception from a step stops the run as an actor's would (engine.hpp).
#pragma once

#include "sim/hardware/server_timer.hpp"

#include <simgrid/forward.h>

#include <functional>
#include <map>

namespace mlsim {

class ServerWakeup {
public:
  // `step(at)` runs at the planned time `at` (the engine's clock may be an ulp short of it). The
  // sentinel actor, when this is the run's first wake-up, lives on `home`.
  ServerWakeup(simgrid::s4u::Host* home, std::function<void(double)> step);
  ~ServerWakeup();
  ServerWakeup(const ServerWakeup&) = delete;
  ServerWakeup& operator=(const ServerWakeup&) = delete;

  // The step runs at `when` (>= now), replacing the one planned; never at infinity.
  void at(double when);
  void cancel();
  // When the planned step runs (infinity: none planned).
  double planned() const { return when_; }
  bool is_planned() const { return when_ != kNeverDue; }

  // Runs every step due by now (the kernel timer's callback).
  static void run_due();

private:
  void fire(double at);
  simgrid::s4u::Host* home_;
  std::function<void(double)> step_;
  double when_ = kNeverDue;
  std::multimap<double, ServerWakeup*>::iterator slot_; // in the plan, while is_planned()
};

} // namespace mlsim
