#include "sim/hardware/cpu_scheduler.hpp"

#include "sim/core/base/engine.hpp"

#include "sim/hardware/platform.hpp"

#include <simgrid/s4u.hpp>

#include <algorithm>
#include <cmath>

namespace sg4 = simgrid::s4u;

namespace mlsim {

namespace {
constexpr int kMaxSpeedLevels = 128; // pstates per core: busy-core counts above this share a level
}

CpuScheduler::CpuScheduler(sg4::NetZone* zone, sg4::Host* pool, const CpuSpec& spec) : pool_(pool), spec_(spec) {
  if (spec_.scheduling == CpuScheduling::fair)
    return;
  const double v = spec_.core_speed * kWorkPerSecond;
  std::vector<double> level_speeds{v};
  if (spec_.all_cores_efficiency < 1.0 && spec_.cores > 1) {
    levels_ = std::min(spec_.cores, kMaxSpeedLevels);
    level_speeds.clear();
    for (int l = 1; l <= levels_; ++l) { // level l: the busy-core count it stands for, spread over 1..cores
      const int busy = levels_ == spec_.cores ? l : 1 + (l - 1) * (spec_.cores - 1) / (levels_ - 1);
      level_speeds.push_back(v * corunning_efficiency(spec_, busy));
    }
  }
  // pstate = level x sharings + (pieces on the core - 1): a core's speed also follows its own piece count
  sharings_ = static_cast<int>(spec_.shared_core_efficiency.size()) + 1;
  std::vector<double> speeds;
  for (double s : level_speeds)
    for (int j = 0; j < sharings_; ++j)
      speeds.push_back(s * shared_core_factor(spec_, static_cast<size_t>(j) + 1));
  for (int i = 0; i < spec_.cores; ++i) {
    Core c;
    c.host = zone->create_host(pool->get_name() + ".core" + std::to_string(i), speeds)->seal();
    cores_.push_back(c);
  }
}

void CpuScheduler::pull_loop() {
  for (;;) {
    pulls_->acquire();
    const auto [core, when] = pulls_due_.front();
    pulls_due_.pop_front();
    const double now = sg4::Engine::get_clock();
    if (when > now)
      sg4::this_actor::sleep_for(when - now);
    cores_[core].pull_pending = false;
    if (cores_[core].queue.empty())
      balance_into(core);
    set_speed_state();
  }
}

void CpuScheduler::core_ran_dry(size_t core) {
  if (!(spec_.balance_delay.value() > 0)) { // the core takes a queued piece at once
    balance_into(core);
    return;
  }
  bool queued = false;
  for (const auto& c : cores_)
    queued = queued || c.queue.size() >= 2;
  Core& c = cores_[core];
  if (!queued || c.pull_pending)
    return;
  c.pull_pending = true;
  if (!pulls_) { // the node's balancer, started the first time it is needed
    pulls_ = sg4::Semaphore::create(0);
    spawn_actor(pool_->get_name() + ".balance", pool_, [this] { pull_loop(); })->daemonize();
  }
  pulls_due_.emplace_back(core, sg4::Engine::get_clock() + spec_.balance_delay.value());
  pulls_->release();
}

size_t CpuScheduler::place(long actor) {
  auto last = last_core_.find(actor);
  size_t best = 0;
  for (size_t i = 1; i < cores_.size(); ++i)
    if (cores_[i].queue.size() < cores_[best].queue.size())
      best = i;
  if (last != last_core_.end() && cores_[last->second].queue.size() == cores_[best].queue.size())
    best = last->second;
  return best;
}

void CpuScheduler::set_speed_state() {
  int busy = 0;
  for (const auto& c : cores_)
    busy += c.queue.empty() ? 0 : 1;
  if (busy == busy_ && sharings_ <= 1)
    return;
  busy_ = busy;
  if (levels_ <= 1 && sharings_ <= 1)
    return;
  // The level whose busy-core count is nearest below or at `busy`.
  const int b = std::max(1, busy);
  const unsigned long level =
      levels_ <= 1 ? 0UL
      : levels_ == spec_.cores
          ? static_cast<unsigned long>(b - 1)
          : static_cast<unsigned long>((b - 1) * (levels_ - 1) / std::max(1, spec_.cores - 1));
  for (auto& c : cores_) {
    const size_t sharing = std::min(std::max<size_t>(c.queue.size(), 1), static_cast<size_t>(sharings_)) - 1;
    const unsigned long pstate = level * static_cast<unsigned long>(sharings_) + sharing;
    if (c.host->get_pstate() != pstate)
      c.host->set_pstate(pstate);
  }
}

void CpuScheduler::balance_into(size_t idle) {
  size_t from = idle;
  for (size_t i = 0; i < cores_.size(); ++i)
    if (cores_[i].queue.size() >= 2 && (from == idle || cores_[i].queue.size() > cores_[from].queue.size()))
      from = i;
  if (from == idle)
    return;
  // The most recently queued piece that still has work: one that ended at this instant stays in its
  // queue until its actor resumes, and has nothing left to move.
  const std::vector<sg4::ExecPtr> snapshot = cores_[from].queue; // simcalls below may change the queues
  for (auto it = snapshot.rbegin(); it != snapshot.rend(); ++it) {
    const sg4::ExecPtr& candidate = *it;
    if (candidate->get_state() != sg4::Activity::State::STARTED || !(candidate->get_remaining() > 0))
      continue; // get_remaining is a simcall: other actors may have run; check again below
    auto& src = cores_[from].queue;
    auto pos = std::find(src.begin(), src.end(), candidate);
    if (!cores_[idle].queue.empty() || src.size() < 2 || pos == src.end())
      return;
    src.erase(pos);
    cores_[idle].queue.push_back(candidate);
    candidate->set_host(cores_[idle].host); // migrates it; its remaining work continues there
    return;
  }
}

void CpuScheduler::remove(const sg4::Exec* exec, size_t& where) {
  for (size_t i = 0; i < cores_.size(); ++i) {
    auto& q = cores_[i].queue;
    auto it = std::find_if(q.begin(), q.end(), [&](const sg4::ExecPtr& e) { return e.get() == exec; });
    if (it != q.end()) {
      q.erase(it);
      where = i;
      return;
    }
  }
}

sg4::ExecPtr CpuScheduler::start(Seconds core_seconds, long actor) {
  sg4::ExecPtr exec = sg4::Exec::init();
  exec->set_flops_amount(core_seconds.value() * kWorkPerSecond);
  if (cores_.empty()) { // fair: one pool of cores, SimGrid's multi-core sharing
    exec->set_host(pool_)->start();
    return exec;
  }
  // Placement and bookkeeping between two simcalls: other actors run at simcalls, so they see this
  // piece queued before they place theirs.
  size_t core = place(actor);
  cores_[core].queue.push_back(exec);
  set_speed_state();
  exec->set_host(cores_[core].host);
  exec->start();
  return exec;
}

void CpuScheduler::finish(const sg4::ExecPtr& exec, long actor) {
  if (cores_.empty())
    return;
  size_t core = 0;
  remove(exec.get(), core); // where it ended: it may have been migrated meanwhile
  last_core_[actor] = core;
  if (cores_[core].queue.empty())
    core_ran_dry(core);
  set_speed_state();
}

void CpuScheduler::wait_if_every_core_busy(long actor) {
  if (cores_.empty() || !(spec_.busy_wake_delay.value() > 0))
    return;
  if (auto last = last_end_.find(actor); last != last_end_.end() && last->second == sg4::Engine::get_clock())
    return; // its previous piece ended at this instant: the thread never stopped running
  for (const auto& c : cores_)
    if (c.queue.empty())
      return;
  sg4::this_actor::sleep_for(spec_.busy_wake_delay.value());
}

void CpuScheduler::run(Seconds core_seconds) {
  if (!(core_seconds.value() > 0))
    return;
  const long actor = sg4::this_actor::get_pid();
  wait_if_every_core_busy(actor);
  sg4::ExecPtr exec = start(core_seconds, actor);
  try {
    exec->wait();
  } catch (...) { // the actor is killed (end of the simulation): just forget the piece
    size_t core = 0;
    remove(exec.get(), core);
    throw;
  }
  finish(exec, actor);
  last_end_[actor] = sg4::Engine::get_clock();
}

} // namespace mlsim
