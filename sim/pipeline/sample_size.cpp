#include "sim/pipeline/sample_size.hpp"

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
  d.stddev_ = stddev;
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
  d.bin_sizes_ = std::move(sizes);
  d.bin_weights_ = std::move(weights);
  return d;
}

Bytes SampleSizeDistribution::draw(std::mt19937_64& rng) const {
  switch (kind_) {
  case Kind::constant: return mean_;
  case Kind::normal: {
    std::normal_distribution<double> n(mean_.value(), stddev_.value());
    return Bytes(std::max(1.0, std::round(n(rng))));
  }
  case Kind::lognormal: {
    // Parameters of the underlying normal from the mean m and stddev s of the size.
    double m = mean_.value(), s = stddev_.value();
    double sigma2 = std::log(1.0 + (s * s) / (m * m));
    std::lognormal_distribution<double> ln(std::log(m) - sigma2 / 2.0, std::sqrt(sigma2));
    return Bytes(std::max(1.0, std::round(ln(rng))));
  }
  case Kind::histogram: break;
  }
  std::discrete_distribution<size_t> pick(bin_weights_.begin(), bin_weights_.end());
  return Bytes(bin_sizes_[pick(rng)]);
}

Bytes SampleSizeDistribution::mean() const { return mean_; }

} // namespace mlsim
