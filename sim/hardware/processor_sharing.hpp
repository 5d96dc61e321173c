// One resource of capacity C shared equally by the requests in it (processor sharing).
//
//   n requests present: each is served at C / n per second.
//   Virtual time V: the service each request present has had since the resource was last empty,
//   dV/dt = C / n. A request of amount a arriving at V0 ends when V = V0 + a, so the requests end
//   in the order of V0 + a, and from (t, V) with n present the next one ends at
//       t' = t + (V0 + a - V) * n / C.
// This is what SimGrid's max-min sharing gives n execs on a one-core host with no other constraint
// (SIMGRID-NOTES: three execs on one host each progress at a third); kept here in plain arithmetic so
// that a resource with a hundred requests in flight costs the engine one timer, not a re-solve of
// every request at each arrival and end (disk_server.hpp).
// Ties end together; an arrival at the instant another ends sees it gone. V restarts at 0 whenever
// the resource empties, so its rounding stays relative to the requests in flight.
// Ignores: weights (every share is equal), a cap on one request's rate.
#pragma once

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

namespace mlsim {

class ProcessorSharing {
public:
  explicit ProcessorSharing(double capacity) : capacity_(capacity) {}

  // Adds a request of `amount` (> 0) at time `now`, known by `id`; requests that end by `now` leave first
  // (through `done`, as in advance()).
  template <class Done> void add(double now, long id, double amount, Done&& done) {
    advance(now, done);
    if (!ends_.empty() && now > now_)
      served_ += (now - now_) * capacity_ / static_cast<double>(ends_.size());
    if (now > now_)
      now_ = now;
    // Kept latest end first, so that the next to end is at the back; a new request goes in front of its
    // equals: ties end in the order they came.
    const double finish = served_ + amount;
    const auto at = std::lower_bound(ends_.begin(), ends_.end(), finish,
                                     [](const std::pair<double, long>& e, double f) { return e.first > f; });
    ends_.insert(at, {finish, id});
  }

  // Lets the requests that end by `now` leave, calling done(id, end_time) for each, earliest first.
  // The state moves only from end to end (no partial step), so the ends that forecast() gave after
  // the last add() are the ones this reaches, to the bit.
  template <class Done> void advance(double now, Done&& done) {
    while (!ends_.empty()) {
      const auto [finish, id] = ends_.back();
      const double end = next_end(now_, served_, ends_.size(), finish);
      if (end > now)
        break;
      now_ = end;
      served_ = finish;
      ends_.pop_back();
      done(id, end);
    }
    if (ends_.empty())
      served_ = 0.0;
  }

  // The ends forecast() gives, one at a time, earliest first: for a caller that needs only the first few.
  class Walk {
  public:
    explicit Walk(const ProcessorSharing& ps)
        : ps_(&ps), it_(ps.ends_.rbegin()), t_(ps.now_), served_(ps.served_), n_(ps.ends_.size()) {
      step();
    }
    bool done() const { return done_; }
    double time() const { return time_; } // when the current request ends if no other arrives
    long id() const { return id_; }
    void next() {
      t_ = time_;
      ++it_;
      step();
    }

  private:
    void step() {
      done_ = it_ == ps_->ends_.rend();
      if (done_)
        return;
      const auto [finish, id] = *it_;
      time_ = ps_->next_end(t_, served_, n_--, finish);
      served_ = finish;
      id_ = id;
    }
    const ProcessorSharing* ps_;
    std::vector<std::pair<double, long>>::const_reverse_iterator it_;
    double t_, served_;
    size_t n_;
    double time_ = 0;
    long id_ = -1;
    bool done_ = true;
  };

  // Calls end(id, end_time) for every request present with its end time if no other arrives, earliest
  // first (the same arithmetic as advance(), so advancing to a forecast time ends that request exactly).
  template <class End> void forecast(End&& end) const {
    for (Walk w(*this); !w.done(); w.next())
      end(w.id(), w.time());
  }

  size_t size() const { return ends_.size(); }
  double capacity() const { return capacity_; }

private:
  double next_end(double t, double served, size_t n, double finish) const {
    return t + (finish - served) * static_cast<double>(n) / capacity_;
  }

  double capacity_;
  double now_ = 0.0;    // time of the state below
  double served_ = 0.0; // V at now_
  std::vector<std::pair<double, long>> ends_; // (V at which a request ends, its id), latest first
};

} // namespace mlsim
