#include "sim/hardware/cpu.hpp"

#include <algorithm>
#include <cmath>

namespace mlsim {

namespace {
// Piecewise linear in x through (xs, ys); ys[0] below, ys.back() * x / xs.back() above (or the nearest
// value when `proportional_above` is false).
double interpolate(const std::vector<double>& xs, const std::vector<double>& ys, double x, bool proportional_above) {
  if (x <= xs.front())
    return ys.front();
  if (x >= xs.back())
    return proportional_above && xs.back() > 0 ? ys.back() * x / xs.back() : ys.back();
  const size_t i = static_cast<size_t>(std::upper_bound(xs.begin(), xs.end(), x) - xs.begin());
  const double t = (x - xs[i - 1]) / (xs[i] - xs[i - 1]);
  return ys[i - 1] + t * (ys[i] - ys[i - 1]);
}
} // namespace

double FreshPages::at(double px, double batch) const {
  if (pixels.empty() || pages.empty())
    return 0.0;
  if (pages.size() > 1)
    return for_batch(batch).at(px, batch);
  return interpolate(pixels, pages.front(), px, true);
}

double SourceScale::at(double source_px) const {
  return pixels.empty() || scale.size() != pixels.size() ? 1.0 : interpolate(pixels, scale, source_px, false);
}

FreshPages FreshPages::for_batch(double batch) const {
  if (pages.size() <= 1)
    return {pixels, {}, pages, launches, by_source};
  std::vector<double> log_batches;
  for (double b : batches)
    log_batches.push_back(std::log2(b));
  const double x = std::log2(std::max(batch, 1.0));
  auto one_row = [&](const Table& t) { // interpolating each size's count in batch, then in pixels
    std::vector<double> row(pixels.size()), column(t.size());
    for (size_t i = 0; i < pixels.size(); ++i) {
      for (size_t r = 0; r < t.size(); ++r)
        column[r] = t[r][i];
      row[i] = interpolate(log_batches, column, x, false);
    }
    return Table{row};
  };
  FreshPages one{pixels, {}, one_row(pages), {}, by_source};
  for (const Table& t : launches)
    one.launches.push_back(one_row(t));
  return one;
}

double corunning_efficiency(const CpuSpec& cpu, int busy) {
  if (cpu.cores <= 1)
    return 1.0;
  const int n = std::clamp(busy, 1, cpu.cores);
  return 1.0 - (1.0 - cpu.all_cores_efficiency) * (n - 1) / (cpu.cores - 1);
}

double shared_core_factor(const CpuSpec& cpu, size_t threads) {
  const auto& e = cpu.shared_core_efficiency;
  if (threads <= 1 || e.empty())
    return 1.0;
  return e[std::min(threads - 2, e.size() - 1)];
}

} // namespace mlsim
