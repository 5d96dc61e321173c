// Steady-state fast-forward: stop simulating once every trainer repeats itself, and write the remaining
// steps as the repetition they would be.
//
// After the warm-up, the monitor keeps the last two windows of W steps (W = 60) of every simulated rank:
// per step, its duration, stall, copy, host and device compute, exposed collective wait and the level of
// its prefetch buffer when the step began. When the two windows agree step for step (to 1e-9 of the
// value plus 1 ps), the state is periodic with a period dividing W (1-6, 10, 12, 15, 20, 30 or 60 steps),
// and every further step repeats the window: the trainers stop after the step in progress, and extend()
// appends each rank's remaining step records as copies of its last W records shifted by whole windows of
// its own duration. Step statistics (mean, p50, p99, the breakdown, throughput) are then those of the full
// run; figures that are ratios of totals over the simulated time (link and stage utilisations, per-sample
// costs) are steady-state ratios already, and cover the simulated steps.
// Ignores: a period that does not divide W or a state that never repeats exactly (variable sample sizes
// drawn at random): then nothing is skipped and the run goes on to its last step.
#pragma once

#include "sim/core/base/recorder.hpp"

#include <array>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace mlsim {

class SteadyStateMonitor {
public:
  static constexpr long kWindow = 60;

  // `enabled` false (run.fast_forward: false, or a pipeline that must run to its last batch) never stops.
  SteadyStateMonitor(int ranks, long warmup_steps, long steps, bool enabled);

  // Trainers ask before each step and report after it.
  bool stop_before(long step) const { return step >= stop_at_; }
  void record(const StepRecord& r, double queue_level);

  bool fast_forwarded() const { return stop_at_ < steps_; }
  long records_seen() const { return records_seen_; }
  // Appends the step records of the steps not simulated (nothing when the run was not fast-forwarded)
  // and returns the time the last of them ends (the simulated end when nothing was appended).
  double extend(Recorder& rec, double simulated_end) const;

  // Named totals that grow with simulated time (bytes per link, the recorder's counters): sampled when
  // each step completes, so that extrapolate() adds what the skipped steps would have added at the
  // steady window's rate.
  using Totals = std::map<std::string, double>;
  void track_totals(std::function<Totals()> sample) { sample_ = std::move(sample); }
  Totals extrapolate(Totals totals, double simulated_end, double extended_end) const;

private:
  using Figures = std::array<double, 7>;
  static Figures figures_of(const StepRecord& r, double queue_level);
  bool windows_agree() const;

  int ranks_;
  long warmup_, steps_;
  bool enabled_;
  long stop_at_;
  long records_seen_ = 0;
  std::map<long, std::vector<std::pair<int, Figures>>> pending_; // step -> ranks done so far
  std::deque<std::vector<Figures>> complete_;                    // last 2W complete steps, by rank
  std::function<Totals()> sample_;
  std::deque<std::pair<double, Totals>> samples_; // (time, totals) at the last W+1 completions
  Totals window_rate_;                            // totals per second over the last window
};

} // namespace mlsim
