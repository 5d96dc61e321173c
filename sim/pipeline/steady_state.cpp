#include "sim/pipeline/steady_state.hpp"

#include <algorithm>
#include <cmath>

namespace mlsim {

SteadyStateMonitor::SteadyStateMonitor(int ranks, long warmup_steps, long steps, bool enabled)
    : ranks_(ranks), warmup_(warmup_steps), steps_(steps),
      // Worth it only when two windows and the stop fit well before the end.
      enabled_(enabled && ranks > 0 && warmup_steps + 2 * kWindow + 2 < steps), stop_at_(steps) {}

SteadyStateMonitor::Figures SteadyStateMonitor::figures_of(const StepRecord& r, double queue_level) {
  return {r.end - r.start, r.input, r.h2d, r.host_compute, r.device_compute, r.collective, queue_level};
}

void SteadyStateMonitor::record(const StepRecord& r, double queue_level) {
  ++records_seen_;
  if (!enabled_ || fast_forwarded() || r.step < warmup_)
    return;
  auto& done = pending_[r.step];
  done.emplace_back(r.rank, figures_of(r, queue_level));
  if (static_cast<int>(done.size()) < ranks_)
    return;
  // Step r.step is complete on every rank; steps complete in order because each rank runs them in order.
  std::sort(done.begin(), done.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Figures> by_rank;
  for (auto& [rank, f] : done)
    by_rank.push_back(f);
  pending_.erase(r.step);
  complete_.push_back(std::move(by_rank));
  if (complete_.size() > static_cast<size_t>(2 * kWindow))
    complete_.pop_front();
  if (sample_) {
    samples_.emplace_back(r.end, sample_());
    if (samples_.size() > static_cast<size_t>(kWindow + 1))
      samples_.pop_front();
  }
  if (complete_.size() == static_cast<size_t>(2 * kWindow) && windows_agree()) {
    stop_at_ = r.step + 2; // ranks are at most one step apart here: each finishes the step it is in
    if (samples_.size() == static_cast<size_t>(kWindow + 1)) {
      const auto& [t0, v0] = samples_.front();
      const auto& [t1, v1] = samples_.back();
      for (const auto& [name, v] : v1) {
        auto before = v0.find(name);
        window_rate_[name] = t1 > t0 ? (v - (before == v0.end() ? 0.0 : before->second)) / (t1 - t0) : 0.0;
      }
    }
  }
}

bool SteadyStateMonitor::windows_agree() const {
  for (long i = 0; i < kWindow; ++i) {
    const auto& a = complete_[static_cast<size_t>(i)];
    const auto& b = complete_[static_cast<size_t>(i + kWindow)];
    for (size_t k = 0; k < a.size(); ++k)
      for (size_t f = 0; f < a[k].size(); ++f)
        if (std::abs(a[k][f] - b[k][f]) > 1e-9 * std::max(std::abs(a[k][f]), std::abs(b[k][f])) + 1e-12)
          return false;
  }
  return true;
}

SteadyStateMonitor::Totals SteadyStateMonitor::extrapolate(Totals totals, double simulated_end,
                                                          double extended_end) const {
  for (auto& [name, v] : totals)
    if (auto rate = window_rate_.find(name); rate != window_rate_.end())
      v += rate->second * (extended_end - simulated_end);
  return totals;
}

double SteadyStateMonitor::extend(Recorder& rec, double simulated_end) const {
  double end = simulated_end;
  if (!fast_forwarded())
    return end;
  // Each rank's own last window (ranks need not have stopped at the same step without an all-reduce).
  std::map<int, std::vector<StepRecord>> by_rank;
  for (const auto& r : rec.steps())
    by_rank[r.rank].push_back(r);
  for (auto& [rank, recs] : by_rank) {
    std::sort(recs.begin(), recs.end(), [](const auto& a, const auto& b) { return a.step < b.step; });
    const long simulated = static_cast<long>(recs.size());
    if (simulated < kWindow + 1)
      continue;
    const size_t first = static_cast<size_t>(simulated - kWindow);
    const double period = recs.back().end - recs[first - 1].end; // duration of the last window
    for (long step = simulated; step < steps_; ++step) {
      long k = step - simulated;
      StepRecord r = recs[first + static_cast<size_t>(k % kWindow)];
      double shift = static_cast<double>(k / kWindow + 1) * period;
      r.step = step;
      r.start += shift;
      r.end += shift;
      end = std::max(end, r.end);
      rec.step(r);
    }
  }
  return end;
}

} // namespace mlsim
