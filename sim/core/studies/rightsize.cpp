#include "sim/core/studies/rightsize.hpp"

#include "sim/core/base/errors.hpp"
#include "sim/core/studies/sweep_row.hpp"
#include "sim/core/base/units_parse.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

namespace mlsim {
namespace {

double parse_threshold(const std::string& figure, const std::string& text, const std::string& whole) {
  std::string why;
  if (figure == "step_time" || figure == "step_time_p99") {
    if (auto q = parse_quantity<Seconds>(text, why))
      return q->value();
  }
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  std::string rest = end ? std::string(end) : std::string();
  rest.erase(0, rest.find_first_not_of(' '));
  if (end != text.c_str() && std::isfinite(v)) {
    if (rest.empty())
      return v;
    if (rest == "%" && (figure == "stall" || figure == "utilization"))
      return v / 100.0;
  }
  std::string expected = figure == "step_time" || figure == "step_time_p99" ? "a time such as '150 ms' or 0.15 (s)"
                         : figure == "stall" || figure == "utilization"     ? "a fraction such as 0.05 or 5%"
                                                                            : "a number";
  throw InputError("--target " + whole, figure, expected, "'" + text + "'");
}

// Whether the figures of the simulated points, in value order, never go both up and down.
bool monotone(const std::map<size_t, CurvePoint>& seen) {
  std::vector<double> f;
  for (const auto& [i, c] : seen)
    if (c.figure)
      f.push_back(*c.figure);
  if (f.size() < 3)
    return true;
  auto [lo, hi] = std::minmax_element(f.begin(), f.end());
  // Jitter on a plateau (a few % of the range) is not a trend that could hide a passing value.
  double tol = 0.05 * (*hi - *lo) + 1e-12;
  bool up = false, down = false;
  for (size_t k = 1; k < f.size(); ++k) {
    up = up || f[k] > f[k - 1] + tol;
    down = down || f[k] < f[k - 1] - tol;
  }
  return !(up && down);
}

// k indices spread evenly strictly between lo and hi (exclusive), not yet seen.
std::vector<size_t> probes_between(size_t lo, size_t hi, size_t k, const std::map<size_t, CurvePoint>& seen) {
  std::vector<size_t> out;
  if (hi <= lo + 1)
    return out;
  size_t gap = hi - lo - 1;
  k = std::min(k, gap);
  for (size_t j = 1; j <= k; ++j) {
    size_t idx = lo + (gap + 1) * j / (k + 1);
    if (idx > lo && idx < hi && !seen.count(idx) && (out.empty() || out.back() != idx))
      out.push_back(idx);
  }
  return out;
}

} // namespace

bool Target::met(double v) const {
  return op == "<" ? v < threshold : op == "<=" ? v <= threshold : op == ">" ? v > threshold : v >= threshold;
}

Target parse_target(const std::string& text) {
  size_t pos = text.find_first_of("<>");
  if (pos == std::string::npos || pos == 0)
    throw InputError("--target " + text, "", "FIGURE<VALUE or FIGURE>VALUE (also <=, >=), e.g. 'stall<0.05'",
                     "'" + text + "'");
  Target t;
  t.text = text;
  t.figure = text.substr(0, pos);
  t.figure.erase(t.figure.find_last_not_of(' ') + 1);
  t.op = text.substr(pos, 1);
  size_t value_at = pos + 1;
  if (value_at < text.size() && text[value_at] == '=') {
    t.op += "=";
    ++value_at;
  }
  auto names = figure_names();
  if (std::find(names.begin(), names.end(), t.figure) == names.end()) {
    std::string list;
    for (const auto& n : names)
      list += (list.empty() ? "" : ", ") + n;
    throw InputError("--target " + text, "", "a figure among " + list, "'" + t.figure + "'");
  }
  std::string value = text.substr(value_at);
  value.erase(0, value.find_first_not_of(' '));
  t.threshold = parse_threshold(t.figure, value, text);
  return t;
}

RightsizeResult rightsize(const RightsizeOptions& o) {
  // The candidates: numeric, ascending, each once.
  std::vector<std::pair<double, std::string>> cands;
  for (const auto& v : o.axis.values) {
    char* end = nullptr;
    double x = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0')
      throw InputError("--vary " + o.axis.key, "", "numeric values (rightsize looks for the smallest)", "'" + v + "'");
    cands.emplace_back(x, v);
  }
  std::sort(cands.begin(), cands.end());
  cands.erase(std::unique(cands.begin(), cands.end(), [](auto& a, auto& b) { return a.first == b.first; }),
              cands.end());
  std::vector<std::vector<std::string>> variants;
  for (const auto& [x, v] : cands) {
    variants.push_back(o.base_overrides);
    variants.back().push_back(o.axis.key + "=" + v);
  }
  validate_variants(o.scenario, variants);

  RightsizeResult result;
  result.candidates = cands.size();
  result.method = "bisection";
  std::map<size_t, CurvePoint> seen;
  bool failed_point = false;
  auto evaluate = [&](const std::vector<size_t>& which) {
    simulate_variants(o.scenario, variants, which, o.jobs, [&](size_t i, const VariantResult& r) {
      CurvePoint c{i, cands[i].second, cands[i].first, r, std::nullopt, false};
      if (r.ok) {
        c.figure = report_figure(r.metrics, o.target.figure);
        c.meets = o.target.met(*c.figure);
      } else {
        failed_point = true;
      }
      seen[i] = c;
    });
  };

  size_t n = cands.size(), k = static_cast<size_t>(std::max(1, o.jobs));
  std::vector<size_t> first = {0, n - 1};
  size_t interior = k >= 3 ? k - 2 : 1; // at least three points to judge monotony
  for (size_t j : probes_between(0, n - 1, interior, seen))
    first.push_back(j);
  std::sort(first.begin(), first.end());
  first.erase(std::unique(first.begin(), first.end()), first.end());
  evaluate(first);
  for (;;) {
    if (seen.at(0).meets)
      break; // the smallest candidate already meets the target
    if (failed_point || !monotone(seen)) {
      result.method = "scan";
      std::vector<size_t> rest;
      for (size_t i = 0; i < n; ++i)
        if (!seen.count(i))
          rest.push_back(i);
      evaluate(rest);
      break;
    }
    // Monotone so far: the passing values form one end of the range; bracket its edge.
    size_t lo = 0;
    std::optional<size_t> hi;
    for (const auto& [i, c] : seen) {
      if (c.meets && !hi)
        hi = i;
      if (!c.meets && !hi)
        lo = i;
    }
    if (!hi)
      break; // not even the largest value meets it (and the figure is monotone)
    auto next = probes_between(lo, *hi, k, seen);
    if (next.empty())
      break;
    evaluate(next);
  }
  for (auto& [i, c] : seen) {
    result.curve.push_back(c);
    if (c.meets && !result.answer)
      result.answer = result.curve.size() - 1;
  }
  return result;
}

} // namespace mlsim
