#include "sim/hardware/server_wakeup.hpp"

#include "sim/core/base/engine.hpp"

#include <simgrid/kernel/Timer.hpp>
#include <simgrid/s4u.hpp>

#include <exception>

namespace sg4 = simgrid::s4u;
using simgrid::kernel::timer::Timer;

namespace mlsim {

namespace {

// The planned steps of this process's engine (one per process), the kernel timer at the earliest,
// and whether the sentinel runs.
struct Plan {
  std::multimap<double, ServerWakeup*> steps;
  Timer* timer = nullptr;
  double timer_at = kNeverDue;
  const sg4::Engine* sentinel_of = nullptr;

  void arm() {
    const double first = steps.empty() ? kNeverDue : steps.begin()->first;
    if (timer && timer_at == first)
      return;
    if (timer)
      timer->remove();
    timer = nullptr;
    timer_at = first;
    if (first != kNeverDue)
      timer = Timer::set(first, [] { ServerWakeup::run_due(); });
  }
};
Plan& plan() {
  static Plan p;
  return p;
}

void start_sentinel(sg4::Host* home) {
  Plan& p = plan();
  if (p.sentinel_of == sg4::Engine::get_instance())
    return;
  p.sentinel_of = sg4::Engine::get_instance();
  sg4::Actor::create("mlsim.wakeups", home, [] {
    sg4::this_actor::on_exit([](bool) {
      Plan& q = plan();
      while (!q.steps.empty())
        q.steps.begin()->second->cancel();
      q.arm();
    });
    sg4::Semaphore::create(0)->acquire(); // until the daemons are killed
  })->daemonize();
}

} // namespace

ServerWakeup::ServerWakeup(sg4::Host* home, std::function<void(double)> step)
    : home_(home), step_(std::move(step)) {}

ServerWakeup::~ServerWakeup() {
  cancel();
  plan().arm();
}

void ServerWakeup::cancel() {
  if (is_planned())
    plan().steps.erase(slot_);
  when_ = kNeverDue;
}

void ServerWakeup::at(double when) {
  if (when == when_)
    return;
  cancel();
  when_ = when;
  slot_ = plan().steps.emplace(when, this);
  plan().arm();
  start_sentinel(home_); // last: creating an actor is a simcall, others may run and plan meanwhile
}

void ServerWakeup::run_due() {
  Plan& p = plan();
  p.timer = nullptr; // the engine deletes the timer once this returns
  p.timer_at = kNeverDue;
  const double now = sg4::Engine::get_clock();
  while (!p.steps.empty()) {
    const auto first = p.steps.begin();
    if (!due_by(first->first, now))
      break;
    ServerWakeup* w = first->second;
    const double at = first->first;
    w->cancel();
    w->fire(at);
  }
  p.arm();
}

void ServerWakeup::fire(double at) {
  try {
    step_(at);
  } catch (const std::exception&) { // as an actor's failure (engine.hpp)
    stop_simulation(std::current_exception());
  }
}

} // namespace mlsim
