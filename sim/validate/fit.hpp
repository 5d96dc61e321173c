// Least-squares fits of calibration measurements (Eigen).
//
// fit_linear: y = a + b*x (one regressor), the form of every loader stage cost
//   (seconds per sample = a + b * bytes or pixels) and of a copy
//   (seconds = latency + bytes / bandwidth).
// fit_saturating: efficiency(s) = e_max * s / (s + s_half), the GEMM efficiency
//   curve per dtype: small problems are launch/occupancy bound, large ones
//   approach e_max. Fitted as a line in 1/eff = 1/e_max + (s_half/e_max) / s,
//   weighted so each point counts by its relative error.
// Both report R^2 and the residuals. Ignores: heteroscedastic noise beyond the
// weighting above, outliers (the inputs are already medians of repetitions).
#pragma once

#include <vector>

namespace mlsim::validate {

struct LinearFit {
  double a = 0.0;                // intercept
  double b = 0.0;                // slope
  double r2 = 0.0;               // coefficient of determination (1 = perfect; 1 also when y is constant and fitted exactly)
  std::vector<double> residuals; // y - (a + b*x), in the order of the input
  double eval(double x) const { return a + b * x; }
};

// Ordinary least squares on points (x[i], y[i]); needs >= 2 points with distinct x
// (with one distinct x the slope is 0 and a is the mean). `nonneg` clamps a and b
// to >= 0 (refitting the other) since negative costs are not physical.
LinearFit fit_linear(const std::vector<double>& x, const std::vector<double>& y, bool nonneg = true);

struct SaturatingFit {
  double e_max = 0.0;  // asymptotic efficiency (fraction of peak)
  double s_half = 0.0; // size at which half of e_max is reached
  double r2 = 0.0;     // of the efficiency itself
  std::vector<double> residuals;
  double eval(double s) const { return s <= 0 ? 0.0 : e_max * s / (s + s_half); }
};

// Fits efficiency(size) = e_max * s / (s + s_half) to points with eff > 0.
SaturatingFit fit_saturating(const std::vector<double>& size, const std::vector<double>& eff);

// y = a + sum_j b_j * x_j with several regressors (rows of `x` are points), e.g. a
// JPEG decode cost per sample = a + b_pixel * pixels + b_byte * bytes. With
// `nonneg`, a regressor whose coefficient comes out negative is dropped and the
// rest refitted (a negative cost per byte is noise, not physics).
struct MultiFit {
  double a = 0.0;
  std::vector<double> b;
  double r2 = 0.0;
  std::vector<double> residuals;
  double eval(const std::vector<double>& x) const;
};
// `relative` weights each point by 1/y^2 (minimises relative errors): stage costs
// span 1000x in size, and absolute least squares would fit only the largest inputs.
MultiFit fit_multi(const std::vector<std::vector<double>>& x, const std::vector<double>& y, bool nonneg = true,
                   bool relative = false);
// The same with each point's residual scaled by scale[i] (weight 1/scale^2; relative: scale = y).
MultiFit fit_multi_scaled(const std::vector<std::vector<double>>& x, const std::vector<double>& y,
                          const std::vector<double>& scale, bool nonneg = true);

// R^2 of predictions `yhat` for observations `y`.
double r_squared(const std::vector<double>& y, const std::vector<double>& yhat);

} // namespace mlsim::validate
