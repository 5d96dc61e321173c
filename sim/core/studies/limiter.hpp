// What limits the input side of a run: the stage, worker count, storage read,
// link or buffering whose capacity binds, with its figures, from the run's
// own metrics (never a guess).
//
// Per trainer node and step, with B samples per step (batch x accelerators),
// W workers on c cores (worker_cores), x_i the seconds one core spends per
// sample in CPU stage i, and T_dev = step x (1 - stall) the step without its
// wait for input:
//   CPU period  P = sum_i x_i x B / min(W, c)
//   utilisation of the CPU stages = consumed / (min(W, c) / sum_i x_i)
// A resource binds when its utilisation reaches kBinds (0.9: a bound
// resource runs at ~100 % in steady state, the margin absorbs start-up and
// burst effects). The busiest binding one is the limiter:
//   workers  the CPU stages bind and W < c: more workers, not cores
//   stage    the CPU stages bind with W >= c: more cores (or cheaper stages)
//   read     the read stage (storage IOPS/bandwidth, NIC, RAM) binds
//   link     a link of the transfer chain binds
// Nothing binds and the stall is still at or over the target: batches are
// made, on average, fast enough but not early enough (prefetch depth, or
// whole-batch workers that each take B x_i to build one): `prefetch`.
// Stall under the target: `device` (nothing on the input side limits).
// Ignores: the collective (it is not input), per-step jitter.
#pragma once

#include "sim/core/run/metrics.hpp"
#include "sim/core/run/scenario.hpp"

#include <string>

namespace mlsim {

inline constexpr double kBinds = 0.9;

struct Limiter {
  std::string kind; // workers | stage | read | link | prefetch | device | host (the step's host-placed ops)
  std::string name; // the stage, link or key; the accelerator for `device`
  double utilization = 0;
  std::string text; // one sentence with the figures that show it
};

// `stall_target`: the input share under which the input side is not limiting.
Limiter find_limiter(const Scenario& scenario, const RunMetrics& metrics, double stall_target);

} // namespace mlsim
