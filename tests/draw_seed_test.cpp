// A batch's generator is seeded from (run seed, stream, batch) through SplitMix64; the sample sizes
// it draws follow the dataset's distribution.
#include "sim/pipeline/draw_seed.hpp"
#include "sim/pipeline/sample_size.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <vector>

namespace {

TEST(DrawSeed, SplitMix64GivesThePublishedOutputsFromZero) {
  // Vigna's splitmix64.c from state 0 (the values the xoshiro generators' seeding documents).
  std::uint64_t state = 0;
  EXPECT_EQ(mlsim::splitmix64(state), 0xE220A8397B1DCDAFULL);
  EXPECT_EQ(mlsim::splitmix64(state), 0x6E789E6AA1B965F4ULL);
  EXPECT_EQ(mlsim::splitmix64(state), 0x06C45D188009454FULL);
  EXPECT_EQ(mlsim::splitmix64(state), 0xF88BB8A8724C81ECULL);
}

TEST(DrawSeed, EveryBatchOfEveryStreamGetsItsOwnSeed) {
  std::set<std::uint64_t> seen;
  for (std::uint64_t run : {0ULL, 1ULL, 42ULL})
    for (std::uint64_t stream = 0; stream < 64; ++stream)
      for (std::uint64_t batch = 0; batch < 2000; ++batch)
        seen.insert(mlsim::draw_seed(run, stream, batch));
  EXPECT_EQ(seen.size(), 3u * 64u * 2000u);
  // The arguments are not interchangeable.
  EXPECT_NE(mlsim::draw_seed(1, 2, 3), mlsim::draw_seed(1, 3, 2));
  EXPECT_NE(mlsim::draw_seed(1, 2, 3), mlsim::draw_seed(2, 1, 3));
}

TEST(DrawSeed, TheSameArgumentsDrawTheSameSizes) {
  const auto d = mlsim::SampleSizeDistribution::spread(mlsim::SampleSizeDistribution::Kind::lognormal,
                                                       mlsim::Bytes(110e3), mlsim::Bytes(60e3));
  std::vector<double> a(256), b(256), c(256);
  auto ra = mlsim::draw_engine(7, 3, 11), rb = mlsim::draw_engine(7, 3, 11), rc = mlsim::draw_engine(7, 3, 12);
  d.draw(ra, a);
  d.draw(rb, b);
  d.draw(rc, c);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

// Moments over many batches, each from its own generator as the pipeline draws them: the mean and
// standard deviation the scenario gives (within 4 standard errors).
void expect_moments(mlsim::SampleSizeDistribution::Kind kind, double mean, double sd) {
  const auto d = mlsim::SampleSizeDistribution::spread(kind, mlsim::Bytes(mean), mlsim::Bytes(sd));
  std::vector<double> batch(256);
  double n = 0, sum = 0, sum2 = 0;
  for (std::uint64_t b = 0; b < 2000; ++b) {
    auto rng = mlsim::draw_engine(1, 1, b);
    d.draw(rng, batch);
    for (double s : batch) {
      n += 1;
      sum += s;
      sum2 += s * s;
    }
  }
  const double m = sum / n, v = sum2 / n - m * m;
  EXPECT_NEAR(m, mean, 4 * sd / std::sqrt(n));
  EXPECT_NEAR(std::sqrt(v), sd, 0.01 * sd);
}

TEST(SampleSizeDistribution, NormalDrawsHaveTheGivenMoments) {
  expect_moments(mlsim::SampleSizeDistribution::Kind::normal, 3.5e6, 0.5e6);
}

TEST(SampleSizeDistribution, LognormalDrawsHaveTheGivenMoments) {
  expect_moments(mlsim::SampleSizeDistribution::Kind::lognormal, 110e3, 60e3);
}

TEST(SampleSizeDistribution, HistogramDrawsFollowTheWeights) {
  const auto d = mlsim::SampleSizeDistribution::histogram({1000, 2000, 4000}, {1, 2, 1});
  std::vector<double> batch(1000);
  double count[3] = {0, 0, 0};
  for (std::uint64_t b = 0; b < 100; ++b) {
    auto rng = mlsim::draw_engine(1, 1, b);
    d.draw(rng, batch);
    for (double s : batch)
      count[s == 1000 ? 0 : s == 2000 ? 1 : 2] += 1;
  }
  // 100,000 draws: shares 1/4, 1/2, 1/4 within 4 standard errors (~0.0055).
  EXPECT_NEAR(count[0] / 1e5, 0.25, 0.0055);
  EXPECT_NEAR(count[1] / 1e5, 0.50, 0.0064);
  EXPECT_NEAR(count[2] / 1e5, 0.25, 0.0055);
}

TEST(SampleSizeDistribution, NormalDrawsAreAtLeastOneWholeByte) {
  const auto d = mlsim::SampleSizeDistribution::spread(mlsim::SampleSizeDistribution::Kind::normal,
                                                       mlsim::Bytes(2.0), mlsim::Bytes(5.0));
  std::vector<double> batch(10000);
  auto rng = mlsim::draw_engine(1, 1, 0);
  d.draw(rng, batch);
  for (double s : batch) {
    EXPECT_GE(s, 1.0);
    EXPECT_EQ(s, std::round(s));
  }
}

} // namespace
