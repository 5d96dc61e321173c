#include "sim/validate/fit.hpp"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <tuple>

namespace mlsim::validate {

double r_squared(const std::vector<double>& y, const std::vector<double>& yhat) {
  if (y.empty())
    return 0.0;
  double mean = std::accumulate(y.begin(), y.end(), 0.0) / static_cast<double>(y.size());
  double ss_tot = 0.0, ss_res = 0.0;
  for (size_t i = 0; i < y.size(); ++i) {
    ss_tot += (y[i] - mean) * (y[i] - mean);
    ss_res += (y[i] - yhat[i]) * (y[i] - yhat[i]);
  }
  if (ss_tot <= 1e-300 * std::max<size_t>(1, y.size()))
    return ss_res <= 1e-24 ? 1.0 : 0.0;
  return 1.0 - ss_res / ss_tot;
}

namespace {
// Weighted least squares of y = a + b*x; returns {a, b}.
std::pair<double, double> wls(const std::vector<double>& x, const std::vector<double>& y,
                              const std::vector<double>& w) {
  Eigen::Index n = static_cast<Eigen::Index>(x.size());
  Eigen::MatrixXd A(n, 2);
  Eigen::VectorXd rhs(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    double sw = std::sqrt(w[static_cast<size_t>(i)]);
    A(i, 0) = sw;
    A(i, 1) = sw * x[static_cast<size_t>(i)];
    rhs(i) = sw * y[static_cast<size_t>(i)];
  }
  // Column scaling keeps the normal equations well conditioned when x spans 1e0..1e7.
  double scale = A.col(1).cwiseAbs().maxCoeff();
  if (scale <= 0.0)
    return {rhs.sum() / A.col(0).sum(), 0.0}; // all x == 0: a weighted mean, no slope
  A.col(1) /= scale;
  Eigen::Vector2d c = A.colPivHouseholderQr().solve(rhs);
  return {c(0), c(1) / scale};
}
} // namespace

LinearFit fit_linear(const std::vector<double>& x, const std::vector<double>& y, bool nonneg) {
  if (x.size() != y.size() || x.empty())
    throw std::invalid_argument("fit_linear: need matching, non-empty x and y");
  std::vector<double> w(x.size(), 1.0);
  LinearFit f;
  bool distinct = std::any_of(x.begin(), x.end(), [&](double v) { return v != x.front(); });
  if (!distinct) {
    f.a = std::accumulate(y.begin(), y.end(), 0.0) / static_cast<double>(y.size());
  } else {
    std::tie(f.a, f.b) = wls(x, y, w);
    if (nonneg && f.b < 0.0) { // no size dependence: a constant cost
      f.b = 0.0;
      f.a = std::accumulate(y.begin(), y.end(), 0.0) / static_cast<double>(y.size());
    } else if (nonneg && f.a < 0.0) { // through the origin: b = sum(xy)/sum(xx)
      double sxy = 0.0, sxx = 0.0;
      for (size_t i = 0; i < x.size(); ++i) {
        sxy += x[i] * y[i];
        sxx += x[i] * x[i];
      }
      f.a = 0.0;
      f.b = std::max(0.0, sxy / sxx);
    }
  }
  std::vector<double> yhat(x.size());
  f.residuals.resize(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    yhat[i] = f.eval(x[i]);
    f.residuals[i] = y[i] - yhat[i];
  }
  f.r2 = r_squared(y, yhat);
  return f;
}

double MultiFit::eval(const std::vector<double>& x) const {
  double v = a;
  for (size_t j = 0; j < b.size() && j < x.size(); ++j)
    v += b[j] * x[j];
  return v;
}

MultiFit fit_multi(const std::vector<std::vector<double>>& x, const std::vector<double>& y, bool nonneg,
                   bool relative) {
  std::vector<double> scale(y.size(), 1.0);
  if (relative)
    for (size_t i = 0; i < y.size(); ++i)
      scale[i] = y[i];
  return fit_multi_scaled(x, y, scale, nonneg);
}

MultiFit fit_multi_scaled(const std::vector<std::vector<double>>& x, const std::vector<double>& y,
                          const std::vector<double>& scale_of, bool nonneg) {
  if (x.size() != y.size() || x.empty() || scale_of.size() != y.size())
    throw std::invalid_argument("fit_multi: need matching, non-empty x and y");
  const size_t k = x.front().size();
  std::vector<bool> active(k, true);
  MultiFit f;
  f.b.assign(k, 0.0);
  for (size_t round = 0; round <= k; ++round) {
    std::vector<size_t> cols;
    for (size_t j = 0; j < k; ++j)
      if (active[j])
        cols.push_back(j);
    const Eigen::Index n = static_cast<Eigen::Index>(y.size()), m = static_cast<Eigen::Index>(cols.size()) + 1;
    Eigen::MatrixXd A(n, m);
    Eigen::VectorXd rhs(n);
    Eigen::VectorXd scale = Eigen::VectorXd::Ones(m);
    for (Eigen::Index i = 0; i < n; ++i) {
      const double yi = y[static_cast<size_t>(i)], si = scale_of[static_cast<size_t>(i)];
      const double w = si > 0.0 ? 1.0 / si : 1.0; // row scale = sqrt(1/scale^2)
      A(i, 0) = w;
      for (size_t c = 0; c < cols.size(); ++c)
        A(i, static_cast<Eigen::Index>(c) + 1) = w * x[static_cast<size_t>(i)][cols[c]];
      rhs(i) = w * yi;
    }
    for (Eigen::Index c = 1; c < m; ++c) {
      double s = A.col(c).cwiseAbs().maxCoeff();
      scale(c) = s > 0.0 ? s : 1.0;
      A.col(c) /= scale(c);
    }
    Eigen::VectorXd sol = A.colPivHouseholderQr().solve(rhs);
    f.a = sol(0);
    std::fill(f.b.begin(), f.b.end(), 0.0);
    for (size_t c = 0; c < cols.size(); ++c)
      f.b[cols[c]] = sol(static_cast<Eigen::Index>(c) + 1) / scale(static_cast<Eigen::Index>(c) + 1);
    if (!nonneg)
      break;
    // Drop the most negative coefficient and refit; stop when none is negative.
    size_t worst = k;
    for (size_t c : cols)
      if (f.b[c] < 0.0 && (worst == k || f.b[c] < f.b[worst]))
        worst = c;
    if (worst == k)
      break;
    active[worst] = false;
  }
  if (nonneg && f.a < 0.0) { // refit through the origin is overkill here: clamp and keep slopes
    f.a = 0.0;
  }
  std::vector<double> yhat(y.size());
  f.residuals.resize(y.size());
  for (size_t i = 0; i < y.size(); ++i) {
    yhat[i] = f.eval(x[i]);
    f.residuals[i] = y[i] - yhat[i];
  }
  f.r2 = r_squared(y, yhat);
  return f;
}

SaturatingFit fit_saturating(const std::vector<double>& size, const std::vector<double>& eff) {
  std::vector<double> inv_s, inv_e, w, s_used, e_used;
  for (size_t i = 0; i < size.size() && i < eff.size(); ++i) {
    if (size[i] > 0.0 && eff[i] > 0.0) {
      inv_s.push_back(1.0 / size[i]);
      inv_e.push_back(1.0 / eff[i]);
      w.push_back(eff[i] * eff[i]); // d(1/e) = de / e^2: weight back to relative error in e
      s_used.push_back(size[i]);
      e_used.push_back(eff[i]);
    }
  }
  SaturatingFit f;
  if (inv_s.empty())
    return f;
  double a = 0.0, b = 0.0;
  bool distinct = std::any_of(inv_s.begin(), inv_s.end(), [&](double v) { return v != inv_s.front(); });
  if (distinct)
    std::tie(a, b) = wls(inv_s, inv_e, w);
  if (!distinct || a <= 0.0 || b < 0.0) { // degenerate: flat efficiency at the best point
    f.e_max = *std::max_element(e_used.begin(), e_used.end());
    f.s_half = 0.0;
  } else {
    f.e_max = 1.0 / a;
    f.s_half = b / a;
  }
  std::vector<double> yhat(s_used.size());
  for (size_t i = 0; i < s_used.size(); ++i) {
    yhat[i] = f.eval(s_used[i]);
    f.residuals.push_back(e_used[i] - yhat[i]);
  }
  f.r2 = r_squared(e_used, yhat);
  return f;
}

} // namespace mlsim::validate
