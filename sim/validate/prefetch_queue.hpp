// A bounded FIFO between loader threads and the consumer: the prefetch buffer.
//
// push() blocks while `capacity` items wait; pop() blocks while none does.
// close() wakes everyone: push() then returns false and pop() returns nullopt
// once the queue is empty. Ignores: ordering by batch index (PyTorch's
// DataLoader hands batches out in order; this queue hands out whichever is ready).
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>

namespace mlsim::validate {

template <typename T> class PrefetchQueue {
public:
  explicit PrefetchQueue(size_t capacity) : capacity_(capacity < 1 ? 1 : capacity) {}

  bool push(T item) {
    std::unique_lock lock(mutex_);
    not_full_.wait(lock, [&] { return closed_ || items_.size() < capacity_; });
    if (closed_)
      return false;
    items_.push_back(std::move(item));
    not_empty_.notify_one();
    return true;
  }

  std::optional<T> pop() {
    std::unique_lock lock(mutex_);
    not_empty_.wait(lock, [&] { return closed_ || !items_.empty(); });
    if (items_.empty())
      return std::nullopt;
    T item = std::move(items_.front());
    items_.pop_front();
    not_full_.notify_one();
    return item;
  }

  void close() {
    std::lock_guard lock(mutex_);
    closed_ = true;
    not_full_.notify_all();
    not_empty_.notify_all();
  }

private:
  size_t capacity_;
  std::mutex mutex_;
  std::condition_variable not_full_, not_empty_;
  std::deque<T> items_;
  bool closed_ = false;
};

} // namespace mlsim::validate
