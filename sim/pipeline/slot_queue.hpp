// Slots that serve items one at a time (read slots, worker slots), in the order a blocking queue
// would: an item that comes while slots are free goes to the one free the longest (as actors blocked
// on a semaphore are served, in the order they blocked); else it waits, and a slot that becomes free
// takes the first waiting item. No actor: `start(slot, item)` begins the work, and whoever ends it
// calls release(). Ignores: everything about time.
#pragma once

#include <deque>
#include <functional>
#include <utility>

namespace mlsim {

template <class Item> class SlotQueue {
public:
  using Start = std::function<void(int slot, Item item)>;
  explicit SlotQueue(Start start) : start_(std::move(start)) {}

  void add_free(int slot) { free_.push_back(slot); }

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

  // `slot` is done with its item: it takes the first waiting one, else becomes free.
  void release(int slot) {
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
};

} // namespace mlsim
