#include "sim/hardware/core_server.hpp"

#include "sim/core/base/engine.hpp"
#include "sim/core/base/errors.hpp"
#include "sim/hardware/server_timer.hpp"

#include <simgrid/s4u.hpp>

#include <algorithm>

namespace sg4 = simgrid::s4u;

namespace mlsim {

namespace {
constexpr double kNever = kNeverDue;
} // namespace

CoreServer::MinTree::MinTree(size_t n) {
  while (leaves_ < n)
    leaves_ *= 2;
  value_.assign(2 * leaves_, kNever);
  at_.assign(2 * leaves_, 0);
  for (size_t i = 0; i < leaves_; ++i)
    at_[leaves_ + i] = i;
  for (size_t p = leaves_ - 1; p >= 1; --p)
    at_[p] = at_[2 * p];
}

void CoreServer::MinTree::set(size_t i, double v) {
  size_t p = leaves_ + i;
  value_[p] = v;
  for (p /= 2; p >= 1; p /= 2) {
    const size_t pick = value_[2 * p + 1] < value_[2 * p] ? 2 * p + 1 : 2 * p;
    value_[p] = value_[pick];
    at_[p] = at_[pick];
  }
}

CoreServer::CoreServer(const CpuSpec& spec, sg4::Host* home)
    : spec_(spec), home_(home), queues_(spec.cores), cores_(static_cast<size_t>(spec.cores)),
      ends_(static_cast<size_t>(spec.cores)), pull_pending_(static_cast<size_t>(spec.cores), false) {
  set_rate();
}

double CoreServer::core_rate(int busy) const { return spec_.core_speed * corunning_efficiency(spec_, busy); }

void CoreServer::run(Seconds core_seconds) {
  if (!(core_seconds.value() > 0))
    return;
  const long actor = sg4::this_actor::get_pid();
  wait_if_every_core_busy(actor);
  WokenList woken;
  advance(sg4::Engine::get_clock(), woken);
  const long id = new_piece();
  Piece& p = pieces_[static_cast<size_t>(id)];
  const sg4::SemaphorePtr done = p.done;
  p.order = arrivals_++;
  p.core = queues_.place(actor);
  touch(p.core);
  p.finish = cores_[p.core].served + core_seconds.value();
  queues_.push(p.core, id);
  ++cores_[p.core].running;
  refresh(p.core);
  set_rate();
  // Simcalls only from here (changed() may wake the server): other actors may run at each, find the
  // piece placed, and add pieces of their own, which may move pieces_ and leave `p` dangling.
  changed();
  if (!started_) {
    started_ = true;
    wake_ = sg4::Semaphore::create(0);
    spawn_actor(home_->get_name() + ".cores", home_, [this] { serve(); })->daemonize();
  }
  resume(woken);
  try {
    done->acquire();
  } catch (...) { // the actor is killed (end of the simulation): just forget the piece
    forget(id);
    throw;
  }
  advance(sg4::Engine::get_clock(), woken);
  Piece& q = pieces_[static_cast<size_t>(id)];
  if (!q.ended)
    throw InternalError("a CPU piece resumed before its work ended");
  const size_t core = q.core; // where it ended: it may have moved meanwhile
  touch(core);                // its queue shrinks: the shared-core factor may change
  queues_.remove(core, id);
  refresh(core);
  queues_.remember(actor, core);
  q.in_use = false;
  free_ids_.push_back(id);
  if (queues_.queue(core).empty())
    ran_dry(core);
  set_rate();
  changed();
  last_end_[actor] = sg4::Engine::get_clock();
  resume(woken);
}

void CoreServer::wait_if_every_core_busy(long actor) {
  if (!(spec_.busy_wake_delay.value() > 0))
    return;
  const double now = sg4::Engine::get_clock();
  if (auto last = last_end_.find(actor); last != last_end_.end() && last->second == now)
    return; // its previous piece ended at this instant: the thread never stopped running
  WokenList woken;
  advance(now, woken); // the queues as they are now (a pull may be due)
  const bool every_core_busy = queues_.busy() == static_cast<int>(queues_.cores());
  resume(woken);
  if (every_core_busy)
    sg4::this_actor::sleep_for(spec_.busy_wake_delay.value());
}

long CoreServer::new_piece() {
  long id = static_cast<long>(pieces_.size());
  if (free_ids_.empty()) {
    pieces_.emplace_back();
    pieces_.back().done = sg4::Semaphore::create(0); // kept with the slot: back at 0 once its actor resumed
  } else {
    id = free_ids_.back();
    free_ids_.pop_back();
  }
  Piece& p = pieces_[static_cast<size_t>(id)];
  p.ended = false;
  p.in_use = true;
  return id;
}

void CoreServer::forget(long id) {
  Piece& p = pieces_[static_cast<size_t>(id)];
  touch(p.core);
  queues_.remove(p.core, id);
  if (!p.ended)
    --cores_[p.core].running;
  refresh(p.core);
  p.in_use = false; // the slot is not reused: its semaphore may have been left mid-wait
  set_rate();
}

void CoreServer::resume(WokenList& woken) {
  // Pieces that ended at the same instant resume in arrival order.
  for (size_t first = 0; first < woken.size();) {
    size_t last = first + 1;
    while (last < woken.size() && due_by(woken[last].at, woken[first].at))
      ++last;
    std::sort(woken.begin() + static_cast<long>(first), woken.begin() + static_cast<long>(last),
              [](const Woken& a, const Woken& b) { return a.order < b.order; });
    first = last;
  }
  const WokenList now = std::move(woken); // releases are simcalls: the list is the caller's again
  woken.clear();
  for (const auto& w : now)
    w.done->release();
}

void CoreServer::serve() {
  double reached = -kNever; // the time of the timer that woke the server (SimGrid's clock may be an ulp short)
  WokenList woken;
  for (;;) {
    advance(std::max(sg4::Engine::get_clock(), reached), woken);
    const double next = next_event();
    planned_ = next;
    sleeping_ = true;
    resume(woken); // a change made meanwhile that brings the next event forward wakes the server
    bool timed_out = false;
    if (next == kNever)
      wake_->acquire();
    else
      timed_out = wake_->acquire_timeout(std::max(0.0, next - sg4::Engine::get_clock()));
    sleeping_ = false;
    reached = timed_out ? next : -kNever;
  }
}

void CoreServer::changed() {
  if (sleeping_ && next_event() < planned_) {
    sleeping_ = false;
    wake_->release();
  }
}

void CoreServer::advance(double now, WokenList& woken) {
  for (;;) {
    const double end = next_end();
    const double pull_at = pulls_due_.empty() ? kNever : pulls_due_.front().second;
    if (end <= pull_at) { // ends first at the same instant: an ended piece cannot move
      if (!due_by(end, now))
        break;
      elapse(end);
      end_core(ends_.argmin(), end, woken);
      continue;
    }
    if (!due_by(pull_at, now))
      break;
    elapse(pull_at);
    const size_t core = pulls_due_.front().first;
    pulls_due_.pop_front();
    pull_pending_[core] = false;
    pull(core);
  }
  elapse(now);
}

void CoreServer::elapse(double to) {
  if (to > now_) { // the server may have run an ulp ahead of the clock
    work_ += rate_ * (to - now_);
    now_ = to;
  }
}

void CoreServer::touch(size_t core) {
  Core& c = cores_[core];
  if (c.running > 0)
    c.served += (work_ - c.anchor) * c.factor / c.running;
  else
    c.served = 0.0; // empty: S restarts, so that its rounding stays relative to the pieces present
  c.anchor = work_;
}

void CoreServer::refresh(size_t core) {
  Core& c = cores_[core];
  c.factor = shared_core_factor(spec_, queues_.queue(core).size());
  double first = kNever;
  if (c.running > 0)
    for (long id : queues_.queue(core)) {
      const Piece& p = pieces_[static_cast<size_t>(id)];
      if (!p.ended)
        first = std::min(first, p.finish);
    }
  ends_.set(core, first == kNever ? kNever : c.anchor + (first - c.served) * c.running / c.factor);
}

void CoreServer::end_core(size_t core, double at, WokenList& woken) {
  touch(core);
  Core& c = cores_[core];
  int ended = 0;
  for (long id : queues_.queue(core)) {
    Piece& p = pieces_[static_cast<size_t>(id)];
    if (!p.ended && due_by(now_ + (p.finish - c.served) * c.running / (c.factor * rate_), at)) {
      p.ended = true;
      ++ended;
      woken.push_back({at, p.order, p.done});
    }
  }
  c.running -= ended;
  refresh(core);
}

double CoreServer::next_end() const {
  const double w = ends_.min();
  return w == kNever ? kNever : now_ + std::max(0.0, w - work_) / rate_;
}

double CoreServer::next_event() const {
  return std::min(next_end(), pulls_due_.empty() ? kNever : pulls_due_.front().second);
}

void CoreServer::pull(size_t core) {
  const auto [from, id] = queues_.pull_choice(core, [this](long i) { return !pieces_[static_cast<size_t>(i)].ended; });
  if (id < 0)
    return;
  Piece& p = pieces_[static_cast<size_t>(id)];
  touch(from);
  touch(core);
  const double left = p.finish - cores_[from].served;
  --cores_[from].running;
  queues_.move(id, from, core);
  p.core = core;
  p.finish = cores_[core].served + left;
  ++cores_[core].running;
  refresh(from);
  refresh(core);
  set_rate();
}

void CoreServer::ran_dry(size_t core) {
  if (!(spec_.balance_delay.value() > 0)) { // the core takes a queued piece at once
    pull(core);
    return;
  }
  if (!queues_.any_queued() || pull_pending_[core])
    return;
  pull_pending_[core] = true;
  pulls_due_.emplace_back(core, now_ + spec_.balance_delay.value());
}

} // namespace mlsim
