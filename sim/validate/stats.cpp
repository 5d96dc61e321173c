#include "sim/validate/stats.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>

namespace mlsim::validate {

double quantile(std::vector<double> v, double q) {
  if (v.empty())
    return 0.0;
  std::sort(v.begin(), v.end());
  double pos = q * static_cast<double>(v.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, v.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return v[lo] * (1.0 - frac) + v[hi] * frac;
}

double median(const std::vector<double>& v) { return quantile(v, 0.5); }

double relative_spread(const std::vector<double>& v) {
  double m = median(v);
  if (m == 0.0)
    return 0.0;
  return (quantile(v, 0.75) - quantile(v, 0.25)) / (2.0 * std::fabs(m));
}

double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

Timing time_reps(int reps, const std::function<void()>& work, bool wall_clock) {
  auto clock = wall_clock ? now_s : thread_cpu_s;
  work(); // warm-up: caches, page faults, lazy allocations
  std::vector<double> t;
  t.reserve(static_cast<size_t>(reps));
  for (int i = 0; i < reps; ++i) {
    double t0 = clock();
    work();
    t.push_back(clock() - t0);
  }
  return {median(t), relative_spread(t), reps};
}

} // namespace mlsim::validate
