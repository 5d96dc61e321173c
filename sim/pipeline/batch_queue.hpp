// The prefetch buffer between an input pipeline and one accelerator.
//
// A bounded buffer of batches with request semantics: the producer must hold
// a token to START a batch; the buffer begins with `depth` tokens and each
// pop() returns one token before waiting. So at most `depth` batches are
// produced ahead of the one being consumed; depth 0 means on demand (the
// producer starts when the consumer asks: no overlap). Arrivals, waits and the
// time-weighted occupancy are kept so Little's law (L = lambda W) can be checked.
// In order (per-accelerator loaders: PyTorch's DataLoader yields batch i before i + 1, holding one that
// came early, `_rcvd_idx` / `_task_info`; Keras' ordered enqueuer alike): a batch is poppable once every
// earlier index has been pushed; until then it waits in the buffer, counted in its occupancy.
#pragma once

#include <simgrid/forward.h>

#include <deque>
#include <map>

namespace mlsim {

struct Batch {
  long index = 0;              // batch number for this accelerator
  double samples = 0;
  double bytes = 0;            // host tensor bytes to copy to the device
  double compute_scale = 1.0;  // padded work / nominal work (variable-size inputs)
  double padded_fraction = 0.0;
  double pushed_at = 0.0;
  double copy_start = -1.0;    // overlapped copy: when its host-to-device copy began (-1: not copied yet)
};

struct QueueStats {
  long arrivals = 0;
  double total_wait = 0.0;      // sum over batches of (pop time - push time)
  double occupancy_area = 0.0;  // integral of the number of batches in the buffer
  double last_change = 0.0;
};

class BatchQueue {
public:
  explicit BatchQueue(int depth, bool in_order = false);

  void acquire_token(); // producer, before starting a batch
  void push(Batch b);   // producer
  Batch pop();          // consumer: asks for one more batch, then waits for the next

  const QueueStats& stats() const { return stats_; }
  // The statistics over [0, now]: occupancy integrated up to `now`, and the batches still in the
  // buffer counted with their wait so far (so occupancy area == total wait, Little's law over the window).
  QueueStats stats_at(double now) const;
  size_t size() const { return items_.size() + early_.size(); }

private:
  void account(double now);

  simgrid::s4u::SemaphorePtr tokens_;
  simgrid::s4u::SemaphorePtr available_;
  std::deque<Batch> items_;        // poppable, in the order they will be popped
  std::map<long, Batch> early_;    // in order: pushed before an earlier index, by index
  bool in_order_ = false;
  long next_index_ = 0;            // in order: the index that becomes poppable next
  QueueStats stats_;
};

} // namespace mlsim
