// A node's cores at run time, per-core policy (cpu_scheduler.hpp, run_queues.hpp), served in closed form.
//
//   B = busy cores of the node, n_c = pieces queued on core c; core c runs at  r * s(n_c),
//   r = v * e(B)  reference core-seconds per second (cpu.hpp: co-running and shared-core factors); the
//   k_c pieces of the core whose work has not ended share it equally, r * s(n_c) / k_c each.
//   Kept in work space: W = the integral of r over time (what a piece alone on an otherwise idle core
//   would have done); a core's pieces each receive dW * s_c / k_c, so a piece of work w joining core c
//   when c's pieces have each received S_c ends when S_c reaches S_c + w, and core c's next end is at
//       W_end(c) = W_c + (min finish - S_c) * k_c / s_c,     t_end = now + (W_end - W) / r.
//   A change of B changes r only: W_end of every core stays, so it costs nothing per piece; an arrival,
//   an end, a removal or a pull touches one or two cores; the next end is the smallest W_end (a tree
//   over the cores, O(log cores) per change).
// Events: a piece arrives, a piece's work ends (its core's k falls), the server completes it (removes
// it: B may fall, a core may run dry; then runs its completion), a dry core takes a piece from a busier
// one `balance_delay` after it ran dry, or after a piece of a thread that kept running crowded its core
// while this one was idle (k changes on both, B rises), a piece of a thread that woke on
// busy cores arrives `busy_wake_delay` after it was submitted.
// The same times as a one-core SimGrid host per core, an exec per piece, a pstate of speed v * e(B) on
// every core switched when B changes and a balancing actor that sleeps until each pull is due (the
// form this replaces), up to rounding. Why not that form: every change of B re-solved every running
// exec of the node, and each piece cost an exec, a host per core and a wake-up of the balancer. Here the
// server keeps the pieces and plans its next step at the next end, pull or delayed arrival, or earlier
// when an arrival brings one forward; the engine sees one planned step per node and no variable per
// piece.
// A piece needs no actor: submit() hands the server a completion, which the server runs once the piece
// is removed (so a pool of W workers costs no W actors, and a chunk no wake-up of one); run() is
// submit() for an actor that waits. The server needs no actor either: its steps run on the engine's
// timers (server_wakeup.hpp), at its next event or at the instant a change needs one. A piece belongs
// to a thread, a key of the caller's (an actor's pid for run()): the thread's last core is where its
// next piece prefers to go, and a thread whose previous piece ended at this instant never stopped
// running (no busy_wake_delay).
// Every event due by `now` is applied by whatever touches the server first (an arrival, or the
// server's own step), in time order, ends before pulls before delayed arrivals at the same instant: the
// state at an instant does not depend on which actor SimGrid runs first. Pieces ending together are
// completed in arrival order, each removed just before its completion runs. S restarts at 0 whenever
// a core empties, so its rounding stays relative to the pieces present.
// Ignores: what cpu_scheduler.hpp ignores.
#pragma once

#include "sim/core/base/units.hpp"
#include "sim/hardware/cpu.hpp"
#include "sim/hardware/run_queues.hpp"
#include "sim/hardware/server_wakeup.hpp"

#include <simgrid/forward.h>

#include <deque>
#include <functional>
#include <unordered_map>
#include <utility>
#include <vector>

namespace mlsim {

class CoreServer {
public:
  // `home`: the node's host (where the end-of-run sentinel of server_wakeup.hpp may live).
  CoreServer(const CpuSpec& spec, simgrid::s4u::Host* home);

  // Runs when a piece's work is done (in the engine, not in an actor), after the piece left its core. It
  // must not block; it may submit pieces.
  using Completion = std::function<void()>;

  // Places `core_seconds` of reference-core work of `thread` on the node's cores now (or busy_wake_delay
  // later, see above); `done` runs when it is done (at once, in the caller, if core_seconds <= 0).
  void submit(Seconds core_seconds, long thread, Completion done);

  // Blocks the calling actor until `core_seconds` of reference-core work of `thread` is done.
  void run(Seconds core_seconds, long thread);
  // The same for the calling actor's own thread (its pid).
  void run(Seconds core_seconds);

  // A thread key that is no actor's pid (a worker that is not an actor): negative, unique to this server.
  long new_thread() { return --last_thread_; }

  // `thread` spends the time until its next submit running on its core (a copy out of the page cache),
  // not asleep: a piece without an end holds its place (and its share) on the core the thread last ran
  // on, so other threads waking meanwhile see the core busy; the next piece of the thread takes the
  // hold's place, wherever a pull has moved it, and is not placed (nor delayed) as a wake-up.
  void keeps_core(long thread);

  // The per-core speed v * e(B) with `busy` cores busy, in reference core-seconds per second.
  double core_rate(int busy) const;

private:
  struct Piece {
    double finish = 0.0; // the service S of its core at which its work ends
    size_t core = 0;
    long order = 0;      // arrival number: pieces ending together complete in this order
    bool ended = false;
    long thread = 0;
    double entered = 0.0; // when it joined a core
    Completion done;
  };
  struct Core {
    int running = 0;         // pieces whose work has not ended
    double factor = 1.0;     // s(pieces queued): the shared-core factor
    double anchor = 0.0;     // W when `served` was last brought up to date
    double served = 0.0;     // S: what each running piece of the core has received since it was last empty
  };
  // The smallest of n values and its index (the lowest on a tie), kept up to date in O(log n) per change.
  class MinTree {
  public:
    explicit MinTree(size_t n);
    void set(size_t i, double v);
    double min() const { return value_[1]; }
    size_t argmin() const { return at_[1]; }

  private:
    size_t leaves_ = 1;
    std::vector<double> value_;
    std::vector<size_t> at_;
  };
  struct Ended {
    double at;
    long order, id;
  };
  struct Arrival { // a piece of a thread that woke on busy cores: it enters the queues at `at`
    double at;
    double work;
    long thread;
    Completion done;
  };

  void step(double reached);                   // applies the events due by then, completes, plans the next
  void advance(double now);                    // applies every event due by `now`, in time order
  void elapse(double to);                      // moves W to time `to`
  void touch(size_t core);                     // brings the core's S up to the present W
  void refresh(size_t core);                   // its factor and W_end after a change of its pieces
  void end_core(size_t core, double at);       // ends its pieces due by `at` (into ended_)
  double next_end() const;                     // the earliest end of a piece, with nothing arriving
  double next_event() const;                   // the earliest end, pull or delayed arrival
  void pull(size_t core);                      // the dry `core` takes a piece, if one can move
  void ran_dry(size_t core);                   // `core`'s last piece left: it takes one now or after the delay
  void changed();                              // after a change: brings the server's step forward if needed
  void set_rate() { rate_ = core_rate(queues_.busy()); }
  bool wakes_on_busy_cores(long thread) const; // busy_wake_delay applies (cpu_scheduler.hpp)
  bool continues(long thread) const;           // its previous piece ended at this instant: it never slept
  bool stays(long thread) const;               // its next piece stays on its last core (continues, above)
  size_t release_hold(long thread);            // removes the thread's hold (keeps_core); returns its core
  void enter(double work, long thread, Completion done); // the piece joins a core now
  long join(double work, long thread, Completion done);  // a new piece (work kNever: a hold) on its core
  void complete_ended();                       // removes the ended pieces and runs their completions, in order
  void complete(long id);                      // removes one and runs its completion
  long new_piece();

  CpuSpec spec_;
  RunQueues queues_;
  std::vector<Core> cores_;
  MinTree ends_;                               // by core: W_end
  std::vector<bool> pull_pending_;             // by core
  std::deque<std::pair<size_t, double>> pulls_due_; // (core, when), in the order the cores ran dry
  std::vector<Piece> pieces_;                  // by id (a slot, reused once its piece is complete)
  std::vector<long> free_ids_;
  std::vector<Ended> ended_;                   // pieces whose work ended, not yet complete
  std::deque<Arrival> arriving_;               // in the order they come due (one delay for all)
  std::unordered_map<long, double> last_end_;  // thread -> when its last piece ended
  std::unordered_map<long, long> holds_;       // thread -> its hold piece (keeps_core)
  long last_thread_ = 0;
  long arrivals_ = 0;
  double now_ = 0.0;                           // the time of work_
  double work_ = 0.0;                          // W at now_
  double rate_ = 0.0;                          // r at the present B
  bool stepping_ = false;                      // in step(): it plans its next step after the completions
  ServerWakeup wakeup_;
};

} // namespace mlsim
