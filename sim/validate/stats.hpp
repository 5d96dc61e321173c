// Repeated timing: run a piece of real work several times, keep the median
// and the spread.
//
// Measures wall-clock time with std::chrono::steady_clock. The spread is the
// relative half-width of the inter-quartile range, (p75 - p25) / (2 * median),
// so 0.05 means "typical repetitions land within about 5 % of the median".
// CPU-bound work is timed in thread CPU time (CLOCK_THREAD_CPUTIME_ID): that
// is the core-seconds a stage costs, and it stays right while other tenants
// time-slice the cores; waits on a device (cold reads) are timed in wall time.
// Ignores: CPU frequency changes and cache pollution by other tenants — they
// show up as spread, which is why it is recorded next to every median.
#pragma once

#include <chrono>
#include <functional>
#include <vector>

namespace mlsim::validate {

struct Timing {
  double median_s = 0.0; // median of the repetitions, seconds
  double spread = 0.0;   // (p75 - p25) / (2 * median)
  int reps = 0;
};

// The q-quantile (0..1) of `v` by linear interpolation; `v` need not be sorted.
double quantile(std::vector<double> v, double q);
double median(const std::vector<double>& v);
// (p75 - p25) / (2 * median), 0 when the median is 0.
double relative_spread(const std::vector<double>& v);

// Runs `work` once untimed (warm-up), then `reps` times timed (CPU or wall time).
Timing time_reps(int reps, const std::function<void()>& work, bool wall_clock = false);

// Seconds since an arbitrary origin, for ad-hoc intervals.
inline double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// CPU time consumed by the calling thread, seconds.
double thread_cpu_s();

} // namespace mlsim::validate
