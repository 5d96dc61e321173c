#include "sim/pipeline/batch_queue.hpp"

#include <simgrid/s4u.hpp>

namespace sg4 = simgrid::s4u;

namespace mlsim {

BatchQueue::BatchQueue(int depth, bool in_order)
    : tokens_(sg4::Semaphore::create(static_cast<unsigned>(depth))), available_(sg4::Semaphore::create(0)),
      in_order_(in_order) {}

void BatchQueue::acquire_token() { tokens_->acquire(); }

void BatchQueue::account(double now) {
  stats_.occupancy_area += static_cast<double>(size()) * (now - stats_.last_change);
  stats_.last_change = now;
}

void BatchQueue::push(Batch b) {
  double now = sg4::Engine::get_clock();
  account(now);
  b.pushed_at = now;
  stats_.arrivals++;
  if (!in_order_) {
    items_.push_back(b);
    available_->release();
    return;
  }
  early_.emplace(b.index, b);
  for (auto it = early_.find(next_index_); it != early_.end(); it = early_.find(next_index_)) {
    items_.push_back(it->second);
    early_.erase(it);
    ++next_index_;
    available_->release();
  }
}

QueueStats BatchQueue::stats_at(double now) const {
  QueueStats s = stats_;
  s.occupancy_area += static_cast<double>(size()) * (now - s.last_change);
  s.last_change = now;
  for (const auto& b : items_)
    s.total_wait += now - b.pushed_at;
  for (const auto& [index, b] : early_)
    s.total_wait += now - b.pushed_at;
  return s;
}

Batch BatchQueue::pop() {
  tokens_->release();
  available_->acquire();
  double now = sg4::Engine::get_clock();
  account(now);
  Batch b = items_.front();
  items_.pop_front();
  stats_.total_wait += now - b.pushed_at;
  return b;
}

} // namespace mlsim
