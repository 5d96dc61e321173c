// The per-core policy of cpu_scheduler.hpp, apart from how the pieces' times are kept: which core a
// new piece joins, which piece a dry core takes, how many cores are busy.
//
//   place:  a thread that kept running: its last core; else an idle core (the thread's last one if
//           idle), else the core with the fewest pieces (the thread's last core on a tie, else the
//           lowest index).
//   pull:   a dry core takes the most recently queued piece that can still move from the busiest core
//           that queues two or more (the lowest index on a tie).
//   busy:   the cores with at least one piece; a piece whose work ended stays queued (and its core
//           busy) until the server completes it (core_server.hpp).
// Pieces and threads are known by numbers of the caller's (a thread: an actor's pid, or a worker slot's
// key). Ignores: everything about time (core_server.hpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

namespace mlsim {

class RunQueues {
public:
  explicit RunQueues(int cores) : queues_(static_cast<size_t>(cores)), idle_((queues_.size() + 63) / 64, 0) {
    for (size_t c = 0; c < queues_.size(); ++c)
      set_idle(c, true);
  }

  size_t cores() const { return queues_.size(); }
  const std::vector<long>& queue(size_t core) const { return queues_[core]; }
  int busy() const { return busy_; }

  // The core a new piece of `thread` joins. `running`: the thread never stopped (its previous piece ended
  // at this instant), so it stays on the core it ran on, as a thread that does not sleep is not placed
  // again; only a pull moves it.
  size_t place(long thread, bool running = false) const {
    auto last = last_core_.find(thread);
    if (running && last != last_core_.end())
      return last->second;
    if (busy_ < static_cast<int>(queues_.size())) // the fewest pieces are none: the last core if idle, else the lowest idle
      return last != last_core_.end() && queues_[last->second].empty() ? last->second : lowest_idle();
    size_t best = 0;
    for (size_t i = 1; i < queues_.size(); ++i)
      if (queues_[i].size() < queues_[best].size())
        best = i;
    if (last != last_core_.end() && queues_[last->second].size() == queues_[best].size())
      best = last->second;
    return best;
  }

  void push(size_t core, long piece) {
    auto& q = queues_[core];
    if (q.empty()) {
      ++busy_;
      set_idle(core, false);
    }
    q.push_back(piece);
    crowded_ += q.size() == 2 ? 1 : 0;
  }

  // Takes `piece` out of the queue of `core`.
  void remove(size_t core, long piece) {
    auto& q = queues_[core];
    q.erase(std::find(q.begin(), q.end(), piece));
    crowded_ -= q.size() == 1 ? 1 : 0;
    if (q.empty()) {
      --busy_;
      set_idle(core, true);
    }
  }

  // `thread`'s piece ended on `core`: its next piece prefers that core.
  void remember(long thread, size_t core) { last_core_[thread] = core; }
  // The core `thread`'s last piece ended on; cores() if none has.
  size_t last_core(long thread) const {
    auto last = last_core_.find(thread);
    return last == last_core_.end() ? queues_.size() : last->second;
  }

  // Whether some core queues two or more pieces (a dry core then has something to take).
  bool any_queued() const { return crowded_ > 0; }
  // The lowest-numbered core with no piece; cores() when every core has one.
  size_t idle_core() const { return busy_ < static_cast<int>(queues_.size()) ? lowest_idle() : queues_.size(); }

  // The (core, piece) that dry core `idle` takes now, of the pieces for which movable(piece) holds;
  // piece -1: none.
  template <class Movable> std::pair<size_t, long> pull_choice(size_t idle, Movable&& movable) const {
    if (!queues_[idle].empty())
      return {idle, -1};
    size_t from = idle;
    for (size_t i = 0; i < queues_.size(); ++i)
      if (queues_[i].size() >= 2 && (from == idle || queues_[i].size() > queues_[from].size()))
        from = i;
    if (from == idle)
      return {idle, -1};
    const auto& q = queues_[from];
    for (auto it = q.rbegin(); it != q.rend(); ++it)
      if (movable(*it))
        return {from, *it};
    return {from, -1};
  }

  void move(long piece, size_t from, size_t to) {
    remove(from, piece);
    push(to, piece);
  }

private:
  void set_idle(size_t core, bool idle) {
    const uint64_t bit = uint64_t{1} << (core % 64);
    idle ? idle_[core / 64] |= bit : idle_[core / 64] &= ~bit;
  }
  size_t lowest_idle() const { // some core is idle
    size_t w = 0;
    while (idle_[w] == 0)
      ++w;
    return w * 64 + static_cast<size_t>(__builtin_ctzll(idle_[w]));
  }

  std::vector<std::vector<long>> queues_; // pieces placed on each core, oldest first
  std::unordered_map<long, size_t> last_core_; // thread -> the core its last piece ended on
  std::vector<uint64_t> idle_;            // a bit per core with no piece (placement takes the lowest)
  int busy_ = 0;
  int crowded_ = 0;                       // cores with two or more pieces
};

} // namespace mlsim
