// Slots that serve items one at a time (read slots, worker slots), in the order a blocking queue
// would: an item that comes while slots are free goes to the one free the longest (as actors blocked
// on a semaphore are served, in the order they blocked); else it waits, and a slot that becomes free
// takes the first waiting item. No actor: `start(slot, item)` begins the work, and whoever ends it
// calls release(). An item may also be offered to one slot (offer_to): it waits in that slot's own
// queue until the slot is free, even while others are (PyTorch's DataLoader hands batch i to worker
// i mod W, input_pipeline.hpp); a slot serves its own queue before the shared one.
// Ignores: everything about time.
#pragma once

#include <algorithm>
#include <deque>
#include <functional>
#include <utility>
#include <vector>

namespace mlsim {

template <class Item> class SlotQueue {
public:
  using Start = std::function<void(int slot, Item item)>;
  explicit SlotQueue(Start start) : start_(std::move(start)) {}

  void add_free(int slot) {
    free_.push_back(slot);
    if (static_cast<size_t>(slot) >= own_.size())
      own_.resize(static_cast<size_t>(slot) + 1);
  }

  // `item` goes to a free slot now, else waits (at the back, or ahead of every waiting item).
  void offer(Item item, bool ahead = false) {
    if (free_.empty()) {
      ahead ? waiting_.push_front(std::move(item)) : waiting_.push_back(std::move(item));
      return;
    }
    const int slot = free_.front();
    free_.pop_front();
    start_(slot, std::move(item)); // may offer or release again: the queues are consistent by now
  }

  // `item` goes to `slot` alone: now if it is free, else into its own queue (at the back, or ahead).
  void offer_to(int slot, Item item, bool ahead = false) {
    auto it = std::find(free_.begin(), free_.end(), slot);
    if (it == free_.end()) {
      auto& own = own_.at(static_cast<size_t>(slot));
      ahead ? own.push_front(std::move(item)) : own.push_back(std::move(item));
      return;
    }
    free_.erase(it);
    start_(slot, std::move(item));
  }

  // `slot` is done with its item: it takes the first of its own queue, else the first waiting one,
  // else becomes free.
  void release(int slot) {
    if (auto& own = own_.at(static_cast<size_t>(slot)); !own.empty()) {
      Item item = std::move(own.front());
      own.pop_front();
      start_(slot, std::move(item));
      return;
    }
    if (waiting_.empty()) {
      free_.push_back(slot);
      return;
    }
    Item item = std::move(waiting_.front());
    waiting_.pop_front();
    start_(slot, std::move(item));
  }

private:
  Start start_;
  std::deque<int> free_;     // in the order they became free
  std::deque<Item> waiting_;
  std::vector<std::deque<Item>> own_; // per slot: items offered to it alone
};

} // namespace mlsim
