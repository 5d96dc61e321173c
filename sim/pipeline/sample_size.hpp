// Sizes of the samples in a dataset, drawn from a distribution.
//
// constant, normal (truncated at 1 byte), lognormal (given the mean and
// standard deviation of the size itself, not of its log), or an empirical
// histogram of (size, weight) bins. Draws use the caller's seeded generator,
// so the same seed gives the same sizes.
#pragma once

#include "sim/core/base/named_enum.hpp"
#include "sim/core/base/units.hpp"

#include <random>
#include <span>
#include <string>
#include <vector>

namespace mlsim {

class SampleSizeDistribution {
public:
  enum class Kind { constant, normal, lognormal, histogram };

  static SampleSizeDistribution constant(Bytes size);
  // normal or lognormal of the size's own mean and standard deviation.
  static SampleSizeDistribution spread(Kind kind, Bytes mean, Bytes stddev);
  // Bins of (size in bytes, weight >= 0) with a positive total weight (the loader checks it).
  static SampleSizeDistribution histogram(std::vector<double> sizes, std::vector<double> weights);

  // Fills `sizes` (bytes) from `rng`: one distribution object for them all, so the normal draws
  // come in pairs (std::normal_distribution keeps the spare variate of each pair).
  void draw(std::mt19937_64& rng, std::span<double> sizes) const;
  Bytes mean() const;
  bool is_constant() const { return kind_ == Kind::constant; }

private:
  Kind kind_ = Kind::constant;
  Bytes mean_{0.0};
  std::vector<double> bin_sizes_;
  // Each distribution's parameters, derived once (the logarithms and the histogram's cumulative
  // table are not redone for each batch).
  std::normal_distribution<double>::param_type normal_;
  std::lognormal_distribution<double>::param_type lognormal_;
  std::discrete_distribution<size_t>::param_type bins_;
};
template <> struct EnumNames<SampleSizeDistribution::Kind> {
  static constexpr std::array<std::pair<SampleSizeDistribution::Kind, std::string_view>, 4> table{{
      {SampleSizeDistribution::Kind::constant, "constant"}, {SampleSizeDistribution::Kind::normal, "normal"},
      {SampleSizeDistribution::Kind::lognormal, "lognormal"},
      {SampleSizeDistribution::Kind::histogram, "histogram"}}};
};

} // namespace mlsim
