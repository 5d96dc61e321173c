#include "sim/core/studies/sweep_grid.hpp"

#include "sim/core/base/errors.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <set>

namespace mlsim {
namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  size_t e = s.find_last_not_of(" \t");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

// Splits at commas outside {}, [] and quotes.
std::vector<std::string> split_top_level(const std::string& s) {
  std::vector<std::string> parts;
  std::string cur;
  int depth = 0;
  char quote = 0;
  for (char c : s) {
    if (quote) {
      quote = c == quote ? 0 : quote;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      --depth;
    } else if (c == ',' && depth == 0) {
      parts.push_back(trim(cur));
      cur.clear();
      continue;
    }
    cur += c;
  }
  parts.push_back(trim(cur));
  return parts;
}

bool parse_double(const std::string& s, double& out) {
  if (s.empty())
    return false;
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return *end == '\0' && std::isfinite(out);
}

} // namespace

std::string format_number(double v) {
  if (std::abs(v - std::round(v)) < 1e-9 * std::max(1.0, std::abs(v)) && std::abs(v) < 1e15)
    return fmt::format("{}", static_cast<long long>(std::llround(v)));
  return fmt::format("{}", std::stod(fmt::format("{:.12g}", v)));
}

SweepAxis parse_axis(const std::string& spec) {
  auto fail = [&](const std::string& expected) -> InputError {
    return InputError("--vary " + spec, "", expected, "'" + spec + "'");
  };
  size_t eq = spec.find('=');
  if (eq == std::string::npos || eq == 0)
    throw fail("KEY=V1,V2,... or KEY=LO..HI[:STEP]");
  SweepAxis axis;
  axis.key = trim(spec.substr(0, eq));
  std::string rhs = trim(spec.substr(eq + 1));
  size_t dots = rhs.find("..");
  double lo = 0, hi = 0, step = 1;
  if (dots != std::string::npos && rhs.find_first_of("{[\"',") == std::string::npos) {
    std::string lo_s = trim(rhs.substr(0, dots)), rest = rhs.substr(dots + 2), hi_s = rest, step_s;
    if (size_t colon = rest.find(':'); colon != std::string::npos) {
      hi_s = rest.substr(0, colon);
      step_s = rest.substr(colon + 1);
    }
    if (!parse_double(lo_s, lo) || !parse_double(trim(hi_s), hi) ||
        (!step_s.empty() && !parse_double(trim(step_s), step)))
      throw fail("a numeric range LO..HI[:STEP]");
    if (!(step > 0) || hi < lo)
      throw fail("LO <= HI and STEP > 0");
    if ((hi - lo) / step >= static_cast<double>(kMaxSweepPoints))
      throw fail("a range of at most " + std::to_string(kMaxSweepPoints) + " values (the grid limit)");
    axis.is_range = true;
    for (long k = 0;; ++k) {
      double v = lo + static_cast<double>(k) * step;
      if (v > hi + 1e-9 * std::max(1.0, std::abs(hi)))
        break;
      axis.values.push_back(format_number(v));
    }
    return axis;
  }
  axis.values = split_top_level(rhs);
  for (const auto& v : axis.values)
    if (v.empty())
      throw fail("a comma-separated list without empty values");
  return axis;
}

Shard parse_shard(const std::string& spec) {
  auto fail = [&] { return InputError("--shard " + spec, "", "I/N with 0 <= I < N", "'" + spec + "'"); };
  size_t slash = spec.find('/');
  if (slash == std::string::npos)
    throw fail();
  char* end = nullptr;
  std::string i_s = spec.substr(0, slash), n_s = spec.substr(slash + 1);
  long i = std::strtol(i_s.c_str(), &end, 10);
  if (i_s.empty() || *end != '\0')
    throw fail();
  long n = std::strtol(n_s.c_str(), &end, 10);
  if (n_s.empty() || *end != '\0' || n < 1 || i < 0 || i >= n)
    throw fail();
  return Shard{static_cast<size_t>(i), static_cast<size_t>(n)};
}

SweepGrid::SweepGrid(std::vector<SweepAxis> axes) : axes_(std::move(axes)) {
  std::set<std::string> keys;
  for (const auto& a : axes_) {
    if (!keys.insert(a.key).second)
      throw InputError("--vary " + a.key, "", "each key varied once", "it twice");
    if (a.values.empty())
      throw InputError("--vary " + a.key, "", "at least one value", "none");
    if (size_ > kMaxSweepPoints / a.values.size()) { // checked before multiplying: no overflow
      double points = 1;
      for (const auto& b : axes_)
        points *= static_cast<double>(b.values.size());
      throw InputError("--vary", "", "a grid of at most " + std::to_string(kMaxSweepPoints) + " points",
                       fmt::format("{:.3g} points (the product of the axes' sizes)", points));
    }
    size_ *= a.values.size();
  }
}

std::vector<std::string> SweepGrid::values(size_t p) const {
  std::vector<std::string> v(axes_.size());
  for (size_t i = axes_.size(); i-- > 0;) {
    const auto& vals = axes_[i].values;
    v[i] = vals[p % vals.size()];
    p /= vals.size();
  }
  return v;
}

std::vector<std::string> SweepGrid::overrides(size_t p) const {
  auto v = values(p);
  std::vector<std::string> o;
  for (size_t i = 0; i < axes_.size(); ++i)
    o.push_back(axes_[i].key + "=" + v[i]);
  return o;
}

std::vector<size_t> SweepGrid::shard_points(const Shard& shard) const {
  std::vector<size_t> pts;
  for (size_t p = shard.index; p < size_; p += shard.count)
    pts.push_back(p);
  return pts;
}

} // namespace mlsim
