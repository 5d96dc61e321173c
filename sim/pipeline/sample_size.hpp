// Sizes of the samples in a dataset, drawn from a distribution.
//
// constant, normal (truncated at 1 byte), lognormal (given the mean and
// standard deviation of the size itself, not of its log), or an empirical
// histogram of (size, weight) bins. Draws use the run's seeded generator, so
// the same seed gives the same sizes.
#pragma once

#include "sim/core/base/config_node.hpp"
#include "sim/core/base/units.hpp"

#include <random>
#include <string>
#include <vector>

namespace mlsim {

class SampleSizeDistribution {
public:
  static SampleSizeDistribution parse(const ConfigNode& node);
  static SampleSizeDistribution constant(Bytes size);

  Bytes draw(std::mt19937_64& rng) const;
  Bytes mean() const;
  bool is_constant() const { return kind_ == "constant"; }

private:
  std::string kind_ = "constant";
  Bytes mean_{0.0};
  Bytes stddev_{0.0};
  std::vector<double> bin_sizes_;
  std::vector<double> bin_weights_;
};

} // namespace mlsim
