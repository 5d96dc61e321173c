#include "sim/pipeline/sample_size.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace mlsim {

SampleSizeDistribution SampleSizeDistribution::constant(Bytes size) {
  SampleSizeDistribution d;
  d.mean_ = size;
  return d;
}

SampleSizeDistribution SampleSizeDistribution::spread(Kind kind, Bytes mean, Bytes stddev) {
  SampleSizeDistribution d;
  d.kind_ = kind;
  d.mean_ = mean;
  const double m = mean.value(), s = stddev.value();
  if (kind == Kind::normal)
    d.normal_ = std::normal_distribution<double>::param_type(m, s);
  if (kind == Kind::lognormal && m > 0) {
    // Parameters of the underlying normal from the mean m and stddev s of the size.
    const double sigma2 = std::log(1.0 + (s * s) / (m * m));
    d.lognormal_ = std::lognormal_distribution<double>::param_type(std::log(m) - sigma2 / 2.0, std::sqrt(sigma2));
  }
  return d;
}

SampleSizeDistribution SampleSizeDistribution::histogram(std::vector<double> sizes, std::vector<double> weights) {
  SampleSizeDistribution d;
  d.kind_ = Kind::histogram;
  double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  double m = 0;
  for (size_t i = 0; i < sizes.size(); ++i)
    m += sizes[i] * weights[i] / total;
  d.mean_ = Bytes(m);
  d.bins_ = std::discrete_distribution<size_t>::param_type(weights.begin(), weights.end());
  d.bin_sizes_ = std::move(sizes);
  return d;
}

void SampleSizeDistribution::draw(std::mt19937_64& rng, std::span<double> sizes) const {
  const auto whole_bytes = [&](auto distribution) { // at least one byte each
    for (double& s : sizes)
      s = std::max(1.0, std::round(distribution(rng)));
  };
  switch (kind_) {
  case Kind::constant: std::fill(sizes.begin(), sizes.end(), mean_.value()); return;
  case Kind::normal: whole_bytes(std::normal_distribution<double>(normal_)); return;
  case Kind::lognormal: whole_bytes(std::lognormal_distribution<double>(lognormal_)); return;
  case Kind::histogram: break;
  }
  std::discrete_distribution<size_t> bin(bins_);
  for (double& s : sizes)
    s = bin_sizes_[bin(rng)];
}

Bytes SampleSizeDistribution::mean() const { return mean_; }

} // namespace mlsim
