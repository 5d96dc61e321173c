#include "sim/hardware/disk_server.hpp"

#include "sim/core/base/engine.hpp"

#include <simgrid/s4u.hpp>

#include <algorithm>
#include <functional>
#include <limits>

namespace sg4 = simgrid::s4u;

namespace mlsim {

namespace {
constexpr double kNever = kNeverDue; // server_timer.hpp: due_by, the rule both servers and their steps keep
} // namespace

DiskServer::DiskServer(const DiskSpec& spec, sg4::Host* home)
    : spec_(spec), accesses_(spec.random_read_iops), bytes_(spec.sequential_read.value()),
      wakeup_(home, [this](double reached) { step(reached); }) {}

void DiskServer::read(double accesses, Bytes bytes) {
  const sg4::SemaphorePtr done = sg4::Semaphore::create(0);
  submit(accesses, bytes, [done] { done->release(); });
  done->acquire();
}

void DiskServer::submit(double accesses, Bytes bytes, Completion done) {
  const double now = sg4::Engine::get_clock();
  long id = static_cast<long>(reads_.size());
  if (free_ids_.empty())
    reads_.emplace_back();
  else {
    id = free_ids_.back();
    free_ids_.pop_back();
  }
  {
    Read& r = reads_[static_cast<size_t>(id)];
    r = Read{};
    r.delay = accesses * spec_.latency.value();
    r.order = arrivals_++;
    r.done = std::move(done);
    delays_.insert(r.delay);
  }
  // A part of nothing ends at once, as an exec of nothing would.
  if (accesses > 0)
    accesses_.add(now, id, accesses, [this](long i, double at) { end_accesses(i, at); });
  else
    end_accesses(id, now);
  if (bytes.value() > 0)
    bytes_.add(now, id, bytes.value(), [this](long i, double at) { end_bytes(i, at); });
  else
    end_bytes(id, now);
  arrived_ = true;
  if (!stepping_) // reads arriving together take one step, at this instant
    wakeup_.at(now);
}

// `reached`: the time the step was planned for (SimGrid's clock may be an ulp short of it).
void DiskServer::step(double reached) {
  stepping_ = true;
  double next = kNever;
  do { // completions that submit reads: take them in at this instant, as for any arrival
    next = finish_due(std::max(sg4::Engine::get_clock(), reached)).at;
    reached = -kNever;
  } while (arrived_);
  stepping_ = false;
  if (next != kNever)
    wakeup_.at(next);
}

void DiskServer::end_accesses(long id, double at) {
  reads_[static_cast<size_t>(id)].accesses_end = at;
  if (reads_[static_cast<size_t>(id)].bytes_end >= 0)
    settle(id);
}

void DiskServer::end_bytes(long id, double at) {
  reads_[static_cast<size_t>(id)].bytes_end = at;
  if (reads_[static_cast<size_t>(id)].accesses_end >= 0)
    settle(id);
}

void DiskServer::settle(long id) {
  const Read& r = reads_[static_cast<size_t>(id)];
  settled_.push_back({std::max(r.accesses_end, r.bytes_end) + r.delay, r.order, id});
  std::push_heap(settled_.begin(), settled_.end(), std::greater<>());
}

// Between arrivals each forecast stays exact (ProcessorSharing::advance moves along the same arithmetic),
// so the ends found here are the ones reached later, to the bit. A read is done at max(its two parts'
// ends) + its delay: walking both resources' ends merged in time order, a read's end is known once its
// last part is met, and a part ending at t leaves its read done no sooner than t + the least delay.
DiskServer::Due DiskServer::next_due() {
  Due best{kNever, std::numeric_limits<long>::max(), -1};
  while (!settled_.empty()) { // reads already done leave their entries behind: drop them
    const Due& top = settled_.front();
    const Read& r = reads_[static_cast<size_t>(top.id)];
    if (r.done && r.order == top.order) {
      best = top;
      break;
    }
    std::pop_heap(settled_.begin(), settled_.end(), std::greater<>());
    settled_.pop_back();
  }
  if (delays_.empty())
    return best;
  const double least_delay = *delays_.begin();
  const long walk = walks_++;
  ProcessorSharing::Walk a(accesses_), b(bytes_);
  for (;;) {
    const bool take_a = !a.done() && (b.done() || a.time() <= b.time());
    if (!take_a && b.done())
      break;
    ProcessorSharing::Walk& w = take_a ? a : b;
    const double t = w.time();
    if (t + least_delay > best.at)
      break;
    Read& r = reads_[static_cast<size_t>(w.id())];
    const double other = take_a ? r.bytes_end : r.accesses_end; // >= 0: that part has ended
    double end = -1.0;
    if (other >= 0)
      end = std::max(t, other);
    else if (r.walked == walk)
      end = std::max(t, r.walk_end);
    else {
      r.walked = walk;
      r.walk_end = t;
    }
    if (end >= 0) {
      const Due d{end + r.delay, r.order, w.id()};
      if (best > d)
        best = d;
    }
    w.next();
  }
  return best;
}

DiskServer::Due DiskServer::finish_due(double now) {
  arrived_ = false;
  finished_.clear();
  Due d = next_due();
  for (; d.id >= 0 && due_by(d.at, now); d = next_due()) {
    // The resources let the read's parts go (they ended by then: a read is done after both parts),
    // so that its slot is free to reuse.
    accesses_.advance(d.at, [this](long i, double at) { end_accesses(i, at); });
    bytes_.advance(d.at, [this](long i, double at) { end_bytes(i, at); });
    Read& r = reads_[static_cast<size_t>(d.id)];
    finished_.push_back(std::move(r.done));
    r.done = nullptr;
    delays_.erase(delays_.find(r.delay));
    free_ids_.push_back(d.id);
  }
  // Completions run once every read done by now has left: what they submit arrives after all of them,
  // as a read from an actor woken by its end would (submit() does not touch finished_).
  for (Completion& c : finished_)
    c();
  return d;
}

} // namespace mlsim
