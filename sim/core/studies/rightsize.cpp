#include "sim/core/studies/rightsize.hpp"

#include "sim/core/base/errors.hpp"
#include "sim/core/studies/cores_needed.hpp"
#include "sim/core/studies/sweep_row.hpp"
#include "sim/core/run/isolated.hpp"
#include "sim/core/base/units_parse.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <sstream>

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

namespace {

// The candidates of one axis: numeric, ascending, each once.
std::vector<std::pair<double, std::string>> candidates_of(const SweepAxis& axis) {
  std::vector<std::pair<double, std::string>> cands;
  for (const auto& v : axis.values) {
    char* end = nullptr;
    double x = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0')
      throw InputError("--vary " + axis.key, "", "numeric values (rightsize looks for the smallest)", "'" + v + "'");
    cands.emplace_back(x, v);
  }
  std::sort(cands.begin(), cands.end());
  cands.erase(std::unique(cands.begin(), cands.end(), [](auto& a, auto& b) { return a.first == b.first; }),
              cands.end());
  return cands;
}

// The points simulated so far, by their values (one per axis), shared by the searches of every axis.
struct Search {
  const RightsizeOptions& o;
  std::map<std::vector<std::string>, CurvePoint> done;
  std::vector<std::vector<std::string>> order; // every point simulated

  std::vector<std::string> overrides(const std::vector<std::string>& values) const {
    auto v = o.base_overrides;
    for (size_t a = 0; a < values.size(); ++a)
      v.push_back(o.axes[a].key + "=" + values[a]);
    return v;
  }
  // Simulates the points not simulated yet, `jobs` at a time.
  void simulate(const std::vector<std::vector<std::string>>& points) {
    std::vector<std::vector<std::string>> fresh, variants;
    for (const auto& p : points)
      if (!done.count(p) && std::find(fresh.begin(), fresh.end(), p) == fresh.end()) {
        fresh.push_back(p);
        variants.push_back(overrides(p));
      }
    std::vector<size_t> all(fresh.size());
    for (size_t i = 0; i < all.size(); ++i)
      all[i] = i;
    simulate_variants(o.scenario, variants, all, o.jobs, [&](size_t i, const VariantResult& r) {
      CurvePoint c{fresh[i], r, std::nullopt, false};
      if (r.ok) {
        c.figure = report_figure(r.metrics, o.target.figure);
        c.meets = o.target.met(*c.figure);
      }
      done[fresh[i]] = c;
    });
    for (const auto& p : fresh)
      order.push_back(p);
  }

  // The smallest value of axis `a` that meets the target, the others as in `at`; and the method used.
  std::pair<std::optional<std::string>, std::string> axis(size_t a, std::vector<std::string> at) {
    const auto cands = candidates_of(o.axes[a]);
    auto point = [&](size_t i) {
      at[a] = cands[i].second;
      return at;
    };
    std::map<size_t, CurvePoint> seen;
    bool failed_point = false;
    auto evaluate = [&](const std::vector<size_t>& which) {
      std::vector<std::vector<std::string>> pts;
      for (size_t i : which)
        pts.push_back(point(i));
      simulate(pts);
      for (size_t i : which) {
        seen[i] = done.at(point(i));
        failed_point = failed_point || !seen[i].result.ok;
      }
    };
    std::string method = "bisection";
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
        method = "scan";
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
    for (const auto& [i, c] : seen)
      if (c.meets)
        return {cands[i].second, method};
    return {std::nullopt, method};
  }
};

} // namespace

RightsizeResult rightsize(const RightsizeOptions& o) {
  RightsizeResult result;
  result.candidates = 1;
  std::vector<std::string> at; // every axis at its largest value
  for (const auto& axis : o.axes) {
    auto cands = candidates_of(axis);
    result.candidates *= cands.size();
    at.push_back(cands.back().second);
  }
  // Every point's overrides parse before anything is simulated: one axis at a time, the others at their largest.
  std::vector<std::vector<std::string>> variants;
  for (size_t a = 0; a < o.axes.size(); ++a)
    for (const auto& [x, v] : candidates_of(o.axes[a])) {
      auto p = at;
      p[a] = v;
      variants.push_back(p);
    }
  Search search{o, {}, {}};
  std::vector<std::vector<std::string>> parsed;
  for (const auto& p : variants)
    parsed.push_back(search.overrides(p));
  validate_variants(o.scenario, parsed);

  const auto largest = at;
  std::optional<std::string> found;
  for (size_t a = 0; a < o.axes.size(); ++a) {
    auto [value, method] = search.axis(a, at);
    result.method += (a ? ", " : "") + method;
    if (!value) { // only the first axis can fail: the others start from a passing point
      found.reset();
      break;
    }
    at[a] = *value;
    found = value;
  }
  // The curve by value, first key first (numerically: "10" after "9").
  auto numeric = [](const std::vector<std::string>& v) {
    std::vector<double> x;
    for (const auto& s : v)
      x.push_back(std::strtod(s.c_str(), nullptr));
    return x;
  };
  std::sort(search.order.begin(), search.order.end(),
            [&](const auto& a, const auto& b) { return numeric(a) < numeric(b); });
  for (const auto& p : search.order) {
    result.curve.push_back(search.done.at(p));
    if (found && p == at)
      result.answer = result.curve.size() - 1;
  }
  if (!result.answer) {
    const CurvePoint& best = search.done.at(largest);
    if (best.result.ok)
      result.limiter = find_limiter(load_scenario_file(o.scenario, search.overrides(largest)), best.result.metrics,
                                    o.target.figure == "stall" ? o.target.threshold : kStallTarget);
  }
  return result;
}

std::vector<SweepAxis> rightsize_axes(const std::vector<std::string>& specs, const Scenario& sc) {
  const PipelineCores pc = pipeline_cores(sc);
  const std::map<std::string, std::string> short_names{
      {"cores", pc.key}, {"workers", "pipeline.workers"}, {"prefetch", "pipeline.prefetch"}};
  std::vector<std::string> words; // KEY=VALUES or a bare short name
  for (const auto& spec : specs) {
    if (spec.find('=') != std::string::npos) {
      words.push_back(spec);
      continue;
    }
    std::stringstream names(spec);
    for (std::string name; std::getline(names, name, ',');) {
      name.erase(0, name.find_first_not_of(' '));
      name.erase(name.find_last_not_of(' ') + 1);
      if (!short_names.count(name))
        throw InputError("--vary " + spec, "", "KEY=VALUES, or short names among cores, workers, prefetch",
                         "'" + name + "'");
      words.push_back(name);
    }
  }
  const int most_cores = std::min(pc.current * 8, pc.service ? 512 : 4096);
  std::vector<SweepAxis> axes;
  for (const auto& w : words) {
    size_t eq = w.find('=');
    std::string name = w.substr(0, eq), rest = eq == std::string::npos ? "" : w.substr(eq);
    name.erase(name.find_last_not_of(' ') + 1);
    if (auto it = short_names.find(name); it != short_names.end()) {
      if (rest.empty())
        rest = name == "cores"     ? "=1.." + std::to_string(most_cores)
               : name == "prefetch" ? "=0.." + std::to_string(kMaxPrefetch)
                                    : "";
      if (rest.empty()) { // workers: up to the most cores any point has
        int top = most_cores;
        for (const auto& a : axes)
          if (a.key == pc.key)
            top = static_cast<int>(std::strtod(candidates_of(a).back().second.c_str(), nullptr));
        rest = "=1.." + std::to_string(top);
      }
      name = it->second;
    }
    axes.push_back(parse_axis(name + rest));
    for (size_t a = 0; a + 1 < axes.size(); ++a)
      if (axes[a].key == axes.back().key)
        throw InputError("--vary " + w, "", "each key once", "'" + axes.back().key + "' again");
  }
  return axes;
}

} // namespace mlsim
