#include "sim/hardware/disk_server.hpp"

#include "sim/core/base/engine.hpp"

#include <simgrid/s4u.hpp>

#include <algorithm>
#include <functional>
#include <limits>

namespace sg4 = simgrid::s4u;

namespace mlsim {

namespace {
constexpr double kNever = std::numeric_limits<double>::infinity();
// A timer shorter than this would wake the server later than asked: SimGrid rounds sleeps up to its
// timing precision (1e-9 s). A read due within a few ulps of now is served now.
bool due_by(double due, double now) { return due - now <= 1e-12 * std::max(1.0, now); }
} // namespace

DiskServer::DiskServer(const DiskSpec& spec, sg4::Host* home)
    : spec_(spec), home_(home), accesses_(spec.random_read_iops), bytes_(spec.sequential_read.value()) {}

void DiskServer::read(double accesses, Bytes bytes) {
  const sg4::SemaphorePtr done = sg4::Semaphore::create(0);
  submit(accesses, bytes, [done] { done->release(); });
  done->acquire();
}

void DiskServer::submit(double accesses, Bytes bytes, Completion done) {
  if (!started_) {
    started_ = true;
    wake_ = sg4::Semaphore::create(0);
    spawn_actor(home_->get_name() + ".server", home_, [this] { serve(); })->daemonize();
  }
  const double now = sg4::Engine::get_clock();
  long id = static_cast<long>(reads_.size());
  if (free_ids_.empty())
    reads_.emplace_back();
  else {
    id = free_ids_.back();
    free_ids_.pop_back();
  }
  Read& r = reads_[static_cast<size_t>(id)];
  r = Read{};
  r.delay = accesses * spec_.latency.value();
  r.order = arrivals_++;
  r.done = std::move(done);
  // A part of nothing ends at once, as an exec of nothing would.
  if (accesses > 0)
    accesses_.add(now, id, accesses, [this](long i, double at) { end_accesses(i, at); });
  else
    r.accesses_end = now;
  if (bytes.value() > 0)
    bytes_.add(now, id, bytes.value(), [this](long i, double at) { end_bytes(i, at); });
  else
    r.bytes_end = now;
  replan_ = true;
  if (sleeping_) { // reads arriving together wake the server once
    sleeping_ = false;
    wake_->release();
  }
}

void DiskServer::serve() {
  double reached = -kNever; // the time of the timer that woke the server (SimGrid's clock may be an ulp short)
  for (;;) {
    const double clock = sg4::Engine::get_clock();
    if (replan_)
      plan();
    finish_due(std::max(clock, reached));
    reached = -kNever;
    if (replan_) // completions submitted reads: plan them at this instant, as for any arrival
      continue;
    sleeping_ = true;
    bool timed_out = false;
    const double next = due_.empty() ? kNever : due_.front().at;
    if (next == kNever)
      wake_->acquire();
    else
      timed_out = wake_->acquire_timeout(next - clock);
    sleeping_ = false;
    reached = timed_out ? next : -kNever;
  }
}

// The forecasts change only when a read arrives: between arrivals each due time stays exact
// (ProcessorSharing::advance), so the plan is made once per arrival, not at every end.
void DiskServer::plan() {
  replan_ = false;
  accesses_forecast_.assign(reads_.size(), -1.0);
  bytes_forecast_.assign(reads_.size(), -1.0);
  accesses_.forecast([this](long i, double at) { accesses_forecast_[static_cast<size_t>(i)] = at; });
  bytes_.forecast([this](long i, double at) { bytes_forecast_[static_cast<size_t>(i)] = at; });
  due_.clear();
  for (size_t i = 0; i < reads_.size(); ++i) {
    const Read& r = reads_[i];
    if (!r.done)
      continue;
    const double accesses_end = r.accesses_end >= 0 ? r.accesses_end : accesses_forecast_[i];
    const double bytes_end = r.bytes_end >= 0 ? r.bytes_end : bytes_forecast_[i];
    due_.push_back({std::max(accesses_end, bytes_end) + r.delay, r.order, static_cast<long>(i)});
  }
  std::make_heap(due_.begin(), due_.end(), std::greater<>());
}

void DiskServer::finish_due(double now) {
  finished_.clear();
  while (!due_.empty() && due_by(due_.front().at, now)) {
    std::pop_heap(due_.begin(), due_.end(), std::greater<>()); // the earliest, ties in arrival order
    const Due d = due_.back();
    due_.pop_back();
    // The resources let the read's parts go (they ended by then: a read is done after both parts),
    // so that its slot is free to reuse.
    accesses_.advance(d.at, [this](long i, double at) { end_accesses(i, at); });
    bytes_.advance(d.at, [this](long i, double at) { end_bytes(i, at); });
    Read& r = reads_[static_cast<size_t>(d.id)];
    finished_.push_back(std::move(r.done));
    r.done = nullptr;
    free_ids_.push_back(d.id);
  }
  // Completions run once every read done by now has left: what they submit arrives after all of them,
  // as a read from an actor woken by its end would (submit() touches neither due_ nor finished_).
  for (Completion& c : finished_)
    c();
}
} // namespace mlsim
