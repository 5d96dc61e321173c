// The pool's slot queue (sim/pipeline/slot_queue.hpp): items go to the slot free the longest, wait
// when none is free, and a slot that becomes free takes the first waiting item (an item offered
// ahead first), as actors blocked on a semaphore would be served.
#include "sim/pipeline/slot_queue.hpp"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

using mlsim::SlotQueue;

namespace {
struct Log {
  std::vector<std::pair<int, int>> started; // (slot, item)
};
} // namespace

TEST(SlotQueue, ItemsGoToTheSlotFreeTheLongestThenWait) {
  Log log;
  SlotQueue<int> q([&log](int slot, int item) { log.started.emplace_back(slot, item); });
  q.add_free(2);
  q.add_free(0);
  q.offer(10);
  q.offer(11);
  q.offer(12); // no slot free: waits
  q.offer(13);
  ASSERT_EQ(log.started.size(), 2u);
  EXPECT_EQ(log.started[0], std::make_pair(2, 10));
  EXPECT_EQ(log.started[1], std::make_pair(0, 11));
  q.release(0); // takes the first waiting item
  q.release(2);
  ASSERT_EQ(log.started.size(), 4u);
  EXPECT_EQ(log.started[2], std::make_pair(0, 12));
  EXPECT_EQ(log.started[3], std::make_pair(2, 13));
  q.release(2); // nothing waits: free, then first to take the next item
  q.release(0);
  q.offer(14);
  EXPECT_EQ(log.started.back(), std::make_pair(2, 14));
}

TEST(SlotQueue, AnItemOfferedAheadIsTakenBeforeTheWaitingOnes) {
  Log log;
  SlotQueue<int> q([&log](int slot, int item) { log.started.emplace_back(slot, item); });
  q.add_free(0);
  q.offer(1);
  q.offer(2);
  q.offer(3);
  q.offer(99, /*ahead=*/true); // a collate task: to the head of the queue
  q.release(0);
  q.release(0);
  q.release(0);
  ASSERT_EQ(log.started.size(), 4u);
  EXPECT_EQ(log.started[1].second, 99);
  EXPECT_EQ(log.started[2].second, 2);
  EXPECT_EQ(log.started[3].second, 3);
}

TEST(SlotQueue, AStartMayReleaseItsSlotAtOnce) {
  // Work of nothing: the start releases its slot, which takes the next waiting item from inside the
  // start; every item is started once, in order.
  std::vector<int> order;
  SlotQueue<int>* self = nullptr;
  SlotQueue<int> q([&](int slot, int item) {
    order.push_back(item);
    if (item % 2 == 0)
      self->release(slot);
  });
  self = &q;
  q.add_free(0);
  q.offer(1); // odd: keeps the slot
  q.offer(2);
  q.offer(4);
  q.offer(5);
  q.release(0); // 2 and 4 end at once, 5 keeps the slot
  EXPECT_EQ(order, (std::vector<int>{1, 2, 4, 5}));
}

TEST(SlotQueue, AnItemForOneSlotWaitsForItEvenWhileAnotherIsFree) {
  // Round robin (PyTorch's DataLoader): item 1 is worker 1's; worker 0 stays free, and worker 1 serves
  // its own queue (an item offered ahead to it first) before the shared one.
  Log log;
  SlotQueue<int> q([&log](int slot, int item) { log.started.emplace_back(slot, item); });
  q.add_free(0);
  q.add_free(1);
  q.offer_to(1, 10);
  q.offer_to(1, 11); // slot 1 busy: waits for it although slot 0 is free
  q.offer(20);       // a shared item: slot 0 takes it
  q.offer(21);       // none free: waits in the shared queue
  q.offer_to(1, 19, /*ahead=*/true);
  ASSERT_EQ(log.started.size(), 2u);
  EXPECT_EQ(log.started[0], std::make_pair(1, 10));
  EXPECT_EQ(log.started[1], std::make_pair(0, 20));
  q.release(1); // its own queue first: 19 (ahead), then 11, then the shared 21
  q.release(1);
  q.release(1);
  ASSERT_EQ(log.started.size(), 5u);
  EXPECT_EQ(log.started[2], std::make_pair(1, 19));
  EXPECT_EQ(log.started[3], std::make_pair(1, 11));
  EXPECT_EQ(log.started[4], std::make_pair(1, 21));
  q.release(0); // nothing left anywhere: both free, and an item for slot 0 starts at once
  q.release(1);
  q.offer_to(0, 30);
  EXPECT_EQ(log.started.back(), std::make_pair(0, 30));
}
