// The per-core policy of cpu_scheduler.hpp, apart from how the pieces' times are kept: which core a
// new piece joins, which piece a dry core takes, how many cores are busy.
//
//   place:  an idle core (the actor's last one if idle), else the core with the fewest pieces (the
//           actor's last core on a tie, else the lowest index).
//   pull:   a dry core takes the most recently queued piece that can still move from the busiest core
//           that queues two or more (the lowest index on a tie).
//   busy:   the cores with at least one piece; a piece whose work ended stays queued (and its core
//           busy) until its actor resumes and removes it.
// Pieces are known by a number of the caller's. Ignores: everything about time (core_server.hpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <map>
#include <utility>
#include <vector>

namespace mlsim {

class RunQueues {
public:
  explicit RunQueues(int cores) : queues_(static_cast<size_t>(cores)) {}

  size_t cores() const { return queues_.size(); }
  const std::vector<long>& queue(size_t core) const { return queues_[core]; }
  int busy() const { return busy_; }

  // The core a new piece of `actor` joins.
  size_t place(long actor) const {
    size_t best = 0;
    for (size_t i = 1; i < queues_.size(); ++i)
      if (queues_[i].size() < queues_[best].size())
        best = i;
    auto last = last_core_.find(actor);
    if (last != last_core_.end() && queues_[last->second].size() == queues_[best].size())
      best = last->second;
    return best;
  }

  void push(size_t core, long piece) {
    busy_ += queues_[core].empty() ? 1 : 0;
    queues_[core].push_back(piece);
  }

  // Takes `piece` out of the queue of `core`.
  void remove(size_t core, long piece) {
    auto& q = queues_[core];
    q.erase(std::find(q.begin(), q.end(), piece));
    busy_ -= q.empty() ? 1 : 0;
  }

  // `actor`'s piece ended on `core`: its next piece prefers that core.
  void remember(long actor, size_t core) { last_core_[actor] = core; }

  // Whether some core queues two or more pieces (a dry core then has something to take).
  bool any_queued() const {
    return std::any_of(queues_.begin(), queues_.end(), [](const auto& q) { return q.size() >= 2; });
  }

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
  std::vector<std::vector<long>> queues_; // pieces placed on each core, oldest first
  std::map<long, size_t> last_core_;      // actor id -> the core its last piece ended on
  int busy_ = 0;
};

} // namespace mlsim
