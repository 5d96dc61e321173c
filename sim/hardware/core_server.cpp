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
    : spec_(spec), queues_(spec.cores), cores_(static_cast<size_t>(spec.cores)),
      ends_(static_cast<size_t>(spec.cores)), pull_pending_(static_cast<size_t>(spec.cores), false),
      wakeup_(home, [this](double reached) { step(reached); }) {
  set_rate();
}

double CoreServer::core_rate(int busy) const { return spec_.core_speed * corunning_efficiency(spec_, busy); }

void CoreServer::run(Seconds core_seconds) { run(core_seconds, sg4::this_actor::get_pid()); }

void CoreServer::run(Seconds core_seconds, long thread) {
  if (!(core_seconds.value() > 0)) {
    submit(core_seconds, thread, [] {}); // done at once (a core the thread held is given back)
    return;
  }
  const sg4::SemaphorePtr done = sg4::Semaphore::create(0);
  submit(core_seconds, thread, [done] { done->release(); });
  done->acquire();
}

void CoreServer::submit(Seconds core_seconds, long thread, Completion done) {
  const double now = sg4::Engine::get_clock();
  if (!(core_seconds.value() > 0)) {
    if (holds_.count(thread) > 0) { // its hold leaves the core: the thread sleeps from here
      advance(now);
      const size_t core = release_hold(thread);
      queues_.remember(thread, core);
      if (queues_.queue(core).empty())
        ran_dry(core);
      changed();
    }
    done();
    return;
  }
  advance(now); // the queues as they are now (a pull may be due)
  if (wakes_on_busy_cores(thread))
    arriving_.push_back({now + spec_.busy_wake_delay.value(), core_seconds.value(), thread, std::move(done)});
  else
    enter(core_seconds.value(), thread, std::move(done));
  changed();
}

void CoreServer::keeps_core(long thread) {
  if (holds_.count(thread) > 0)
    return;
  advance(sg4::Engine::get_clock());
  holds_[thread] = join(kNever, thread, nullptr); // it holds the core until the thread's next submit
  changed();
}

size_t CoreServer::release_hold(long thread) {
  auto h = holds_.find(thread);
  const long id = h->second;
  holds_.erase(h);
  const size_t core = pieces_[static_cast<size_t>(id)].core; // a pull may have moved it
  touch(core);
  --cores_[core].running;
  queues_.remove(core, id);
  refresh(core);
  free_ids_.push_back(id);
  set_rate();
  return core;
}

bool CoreServer::continues(long thread) const {
  if (holds_.count(thread) > 0)
    return true;
  auto last = last_end_.find(thread);
  return last != last_end_.end() && last->second == sg4::Engine::get_clock();
}

bool CoreServer::stays(long thread) const {
  if (!continues(thread))
    return false;
  // Pieces that woke at this instant, after the thread's previous piece left its core and before its
  // next one came (its completion woke them), found the core empty; in truth the thread was still running
  // there and they took an idle core. With one to take, the thread's piece takes it instead.
  const size_t last = queues_.last_core(thread);
  if (last >= queues_.cores() || queues_.idle_core() >= queues_.cores())
    return true;
  const double now = sg4::Engine::get_clock();
  for (long id : queues_.queue(last))
    if (pieces_[static_cast<size_t>(id)].entered < now)
      return true;
  return queues_.queue(last).empty();
}

bool CoreServer::wakes_on_busy_cores(long thread) const {
  if (!(spec_.busy_wake_delay.value() > 0) || continues(thread))
    return false; // a thread whose previous piece ended at this instant never stopped running
  return queues_.busy() == static_cast<int>(queues_.cores());
}

void CoreServer::enter(double work, long thread, Completion done) {
  if (holds_.count(thread) > 0) { // the piece takes its hold's place
    queues_.remember(thread, release_hold(thread));
    last_end_[thread] = sg4::Engine::get_clock(); // it never left the core
  }
  join(work, thread, std::move(done));
}

long CoreServer::join(double work, long thread, Completion done) {
  const long id = new_piece();
  Piece& p = pieces_[static_cast<size_t>(id)];
  p.order = arrivals_++;
  p.thread = thread;
  p.done = std::move(done);
  p.core = queues_.place(thread, stays(thread));
  p.entered = sg4::Engine::get_clock();
  touch(p.core);
  p.finish = work == kNever ? kNever : cores_[p.core].served + work;
  queues_.push(p.core, id);
  ++cores_[p.core].running;
  refresh(p.core);
  set_rate();
  // A piece that stays on its thread's core may crowd it while another core is idle (a thread that did
  // not sleep is not placed again): that core takes it as one that just ran dry would.
  if (queues_.queue(p.core).size() >= 2)
    if (const size_t idle = queues_.idle_core(); idle < queues_.cores())
      ran_dry(idle);
  return id;
}

long CoreServer::new_piece() {
  long id = static_cast<long>(pieces_.size());
  if (free_ids_.empty()) {
    pieces_.emplace_back();
  } else {
    id = free_ids_.back();
    free_ids_.pop_back();
  }
  pieces_[static_cast<size_t>(id)].ended = false;
  return id;
}

void CoreServer::complete_ended() {
  while (!ended_.empty()) {
    // Pieces that ended at the same instant complete in arrival order.
    for (size_t first = 0; first < ended_.size();) {
      size_t last = first + 1;
      while (last < ended_.size() && due_by(ended_[last].at, ended_[first].at))
        ++last;
      std::sort(ended_.begin() + static_cast<long>(first), ended_.begin() + static_cast<long>(last),
                [](const Ended& a, const Ended& b) { return a.order < b.order; });
      first = last;
    }
    const std::vector<Ended> now = std::move(ended_); // completions may end more: the list is theirs again
    ended_.clear();
    for (const Ended& e : now)
      complete(e.id);
  }
}

void CoreServer::complete(long id) {
  Piece& p = pieces_[static_cast<size_t>(id)];
  const size_t core = p.core; // where it ended: it may have moved meanwhile
  const long thread = p.thread;
  Completion done = std::move(p.done);
  p.done = nullptr;
  touch(core); // its queue shrinks: the shared-core factor may change
  queues_.remove(core, id);
  refresh(core);
  queues_.remember(thread, core);
  free_ids_.push_back(id);
  if (queues_.queue(core).empty())
    ran_dry(core);
  set_rate();
  last_end_[thread] = sg4::Engine::get_clock();
  done(); // may submit: `p` may dangle from here
}

// `reached`: the time the step was planned for (SimGrid's clock may be an ulp short of it).
void CoreServer::step(double reached) {
  stepping_ = true;
  advance(std::max(sg4::Engine::get_clock(), reached));
  complete_ended(); // completions may submit pieces: changed() leaves the planning to this step
  stepping_ = false;
  const double next = next_event();
  if (next == kNever)
    wakeup_.cancel();
  else
    wakeup_.at(next);
}

void CoreServer::changed() {
  if (stepping_)
    return;
  if (!ended_.empty()) // pieces ended at this instant: complete them at it
    wakeup_.at(sg4::Engine::get_clock());
  else if (const double next = next_event(); next < wakeup_.planned())
    wakeup_.at(next);
}

void CoreServer::advance(double now) {
  for (;;) {
    const double end = next_end();
    const double pull_at = pulls_due_.empty() ? kNever : pulls_due_.front().second;
    const double arrival_at = arriving_.empty() ? kNever : arriving_.front().at;
    if (end <= pull_at && end <= arrival_at) { // ends first at the same instant: an ended piece cannot move
      if (!due_by(end, now))
        break;
      elapse(end);
      end_core(ends_.argmin(), end);
      continue;
    }
    if (pull_at <= arrival_at) { // then pulls: a woken thread finds the cores as they are at its instant
      if (!due_by(pull_at, now))
        break;
      elapse(pull_at);
      const size_t core = pulls_due_.front().first;
      pulls_due_.pop_front();
      pull_pending_[core] = false;
      pull(core);
      continue;
    }
    if (!due_by(arrival_at, now))
      break;
    elapse(arrival_at);
    Arrival a = std::move(arriving_.front());
    arriving_.pop_front();
    enter(a.work, a.thread, std::move(a.done));
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

void CoreServer::end_core(size_t core, double at) {
  touch(core);
  Core& c = cores_[core];
  int ended = 0;
  for (long id : queues_.queue(core)) {
    Piece& p = pieces_[static_cast<size_t>(id)];
    if (!p.ended && due_by(now_ + (p.finish - c.served) * c.running / (c.factor * rate_), at)) {
      p.ended = true;
      ++ended;
      ended_.push_back({at, p.order, id});
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
  return std::min({next_end(), pulls_due_.empty() ? kNever : pulls_due_.front().second,
                   arriving_.empty() ? kNever : arriving_.front().at});
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
