// Watches a running simulation from outside the models (an observer of the
// engine clock and of a step counter): progress on a terminal, a wall-clock
// limit, and SIGINT/SIGTERM.
//
//   progress  printed to stderr at most once a second once the run has taken
//             longer than kProgressAfter of wall time and stderr is a terminal
//             (MLSIM_PROGRESS=1 forces it, MLSIM_PROGRESS=0 silences it):
//             simulated steps done / total, simulated time, steps per wall
//             second since the last report, ETA = steps left / that rate
//   max_wall  a run still going after `max_wall` seconds of wall time is
//             stopped: InputError naming the key (exit 2)
//   signals   SIGINT/SIGTERM while a simulation runs stop it: Interrupted
//             (exit 128 + signal); nothing has been written yet, so no output
//             is left half-written. Outside a simulation the default action applies.
// The checks run on every advance of the simulated clock; a simulation that
// never advances its clock is not watched (the loader's limits exist for that).
#pragma once

#include <functional>
#include <string>

namespace mlsim {

inline constexpr double kProgressAfter = 2.0; // seconds of wall time before a run reports progress

struct RunWatchOptions {
  long total_steps = 0;               // steps each accelerator simulates
  std::function<long()> steps_done;   // steps completed so far (of the slowest-reporting view)
  double max_wall_seconds = 0.0;      // 0: no limit
  std::string max_wall_where;         // "file:line:col" of run.max_wall, for the message
};

// While alive: signal handlers installed, the engine's clock watched. Create
// after the engine, before Engine::run(); check() after run() throws the reason
// the watch stopped the simulation, if it did.
class RunWatch {
public:
  explicit RunWatch(RunWatchOptions options);
  ~RunWatch();
  RunWatch(const RunWatch&) = delete;
  RunWatch& operator=(const RunWatch&) = delete;

  void on_time_advance(); // called by the engine's clock signal

private:
  void print_progress(double wall, bool last);

  RunWatchOptions o_;
  double start_ = 0.0;
  double last_print_ = 0.0;
  long last_done_ = 0;
  bool printing_ = false;
  int progress_mode_ = -1; // -1 terminal decides (once, at construction), 0 off, 1 on
  bool stderr_is_terminal_ = false;
  void (*old_int_)(int) = nullptr;
  void (*old_term_)(int) = nullptr;
};

// Wall-clock seconds from a monotonic clock.
double wall_seconds();

// "12.3 s", "4 min 05 s", "2 h 03 min".
std::string format_duration(double seconds);

} // namespace mlsim
