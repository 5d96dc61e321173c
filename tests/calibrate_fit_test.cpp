// Fits on synthetic data whose true coefficients are known by construction.
#include "sim/validate/fit.hpp"

#include <gtest/gtest.h>

#include <cmath>

using namespace mlsim::validate;

TEST(CalibrateFit, LinearRecoversInterceptAndSlope) {
  std::vector<double> x{1e3, 5e4, 2e5, 1e6, 4e6}, y;
  for (double v : x)
    y.push_back(20e-6 + 1.5e-9 * v); // 20 us + 1.5 ns per pixel
  LinearFit f = fit_linear(x, y);
  EXPECT_NEAR(f.a, 20e-6, 1e-12);
  EXPECT_NEAR(f.b, 1.5e-9, 1e-15);
  EXPECT_NEAR(f.r2, 1.0, 1e-9);
  for (double r : f.residuals)
    EXPECT_NEAR(r, 0.0, 1e-12);
}

TEST(CalibrateFit, NoisyDataHasRSquaredBelowOneAndResiduals) {
  std::vector<double> x{1, 2, 3, 4, 5, 6}, y{2.1, 3.9, 6.2, 7.8, 10.1, 12.2}; // ~2x with noise
  LinearFit f = fit_linear(x, y, /*nonneg=*/false); // plain OLS (its intercept is slightly negative)
  EXPECT_NEAR(f.b, 2.0, 0.1);
  EXPECT_LT(f.r2, 1.0);
  EXPECT_GT(f.r2, 0.99);
  double sum = 0;
  for (double r : f.residuals)
    sum += r;
  EXPECT_NEAR(sum, 0.0, 1e-9); // least squares with an intercept: residuals sum to zero
}

TEST(CalibrateFit, NegativeSlopeIsClampedToAConstantCost) {
  LinearFit f = fit_linear({1, 2, 3}, {3.0, 2.0, 1.0});
  EXPECT_EQ(f.b, 0.0);
  EXPECT_NEAR(f.a, 2.0, 1e-12);
}

TEST(CalibrateFit, MultiRegressorRecoversPerByteAndPerPixel) {
  // JPEG-like: 5 us + 7 ns/byte + 1.5 ns/pixel, bytes and pixels not collinear (two qualities).
  std::vector<std::vector<double>> x;
  std::vector<double> y;
  for (double px : {3e4, 2e5, 1e6, 3e6})
    for (double bpp : {0.4, 1.6}) {
      x.push_back({px * bpp, px});
      y.push_back(5e-6 + 7e-9 * px * bpp + 1.5e-9 * px);
    }
  MultiFit f = fit_multi(x, y);
  EXPECT_NEAR(f.a, 5e-6, 1e-9);
  EXPECT_NEAR(f.b[0], 7e-9, 1e-12);
  EXPECT_NEAR(f.b[1], 1.5e-9, 1e-12);
  EXPECT_NEAR(f.r2, 1.0, 1e-9);
}

TEST(CalibrateFit, SaturatingCurveRecoversPeakAndHalfSize) {
  std::vector<double> s{128, 256, 512, 1024, 2048, 4096}, e;
  for (double v : s)
    e.push_back(0.8 * v / (v + 600.0));
  SaturatingFit f = fit_saturating(s, e);
  EXPECT_NEAR(f.e_max, 0.8, 1e-6);
  EXPECT_NEAR(f.s_half, 600.0, 1e-3);
  EXPECT_NEAR(f.r2, 1.0, 1e-9);
  EXPECT_NEAR(f.eval(600.0), 0.4, 1e-6);
}

TEST(CalibrateFit, RelativeWeightingFitsSmallInputsToo) {
  // True cost 100 us + 1 ns/px; one huge input carries an extra 30 % (a different regime).
  std::vector<std::vector<double>> x{{1e4}, {5e4}, {1e5}, {2e5}, {2e7}};
  std::vector<double> y;
  for (const auto& v : x)
    y.push_back(100e-6 + 1e-9 * v[0]);
  y.back() *= 1.3;
  MultiFit rel = fit_multi(x, y, true, true);
  MultiFit abs = fit_multi(x, y, true, false);
  const double small = 100e-6 + 1e-9 * 1e4;
  EXPECT_LT(std::fabs(rel.eval({1e4}) - small) / small, 0.10);
  EXPECT_GT(std::fabs(abs.eval({1e4}) - small) / small, std::fabs(rel.eval({1e4}) - small) / small);
}
