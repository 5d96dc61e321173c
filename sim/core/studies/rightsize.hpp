// `mlsim rightsize`: the smallest value of one scenario key that meets a
// target on a figure of the run, found by simulating as few points as it can;
// with more keys (`--vary cores --vary prefetch`, or `--vary cores,prefetch`),
// the smallest value of the first together with the smallest values of the
// others (loader settings users change along with it) that meet it.
//
// Targets: FIGURE OP THRESHOLD with OP one of < <= > >=, e.g. `stall<0.05`,
// `stall<5%`, `utilization>0.9`, `step_time<150 ms`, `throughput>=20000`,
// `cost_per_million<3` (figures: sweep_row.hpp's report_figure).
//
// Keys: any scenario key, or a short name: `cores` (the cores of the node
// group that runs the pipeline; the data-service node count under service
// placement), `workers` (pipeline.workers), `prefetch` (pipeline.prefetch).
// A short name without values takes a default range: cores 1..8x as written,
// workers 1..the most cores tried, prefetch 0..32.
//
// Search of one key. The candidate values (the range or list, numeric,
// sorted) are probed `jobs` at a time: first evenly spread probes including
// both ends, then, while the figures seen so far are monotone in the value,
// only values inside the bracket between the largest failing and the smallest
// passing value (a k-ary bisection; "monotone" ignores wiggles under 5 % of
// the figure's range, the jitter of a plateau: with k parallel probes a round shrinks
// the bracket k+1 times). When the figures seen are not monotone, or a point
// fails to simulate, the rest of the values are scanned, so the answer is
// then exact over the list. Bisection is exact only if the figure is
// monotone between the probes: a figure that rises and falls between two
// probes can hide a smaller passing value — a scan is the cure, and the
// curve printed shows what was simulated.
// Several keys: the first is searched with the others at their largest
// values (more workers or a deeper prefetch never make the input side
// slower); then each other key in turn, with the ones before it at their
// answers and the ones after at their largest. Exact when the figure is
// monotone in each key; the largest values are simulated, so a key that
// helps only at its top shows in the curve.
// When nothing meets the target, the run with every key at its largest
// names its limiter (limiter.hpp): the stage, workers, read, link or
// prefetch depth that binds, with its figures.
#pragma once

#include "sim/core/studies/limiter.hpp"
#include "sim/core/studies/sweep_grid.hpp"
#include "sim/core/studies/sweep_simulate.hpp"

#include <optional>
#include <string>
#include <vector>

namespace mlsim {

struct Target {
  std::string figure;
  std::string op; // < <= > >=
  double threshold = 0;
  std::string text; // as written
  bool met(double value) const;
};

// InputError for an unknown figure, a missing operator or a bad threshold.
Target parse_target(const std::string& text);

struct CurvePoint {
  std::vector<std::string> values; // one per key, as passed to --set
  VariantResult result;
  std::optional<double> figure; // when the point simulated
  bool meets = false;
};

struct RightsizeOptions {
  std::string scenario;
  std::vector<std::string> base_overrides;
  std::vector<SweepAxis> axes; // the first is minimised; the others are searched at its answer
  Target target;
  int jobs = 1;
};

struct RightsizeResult {
  std::vector<CurvePoint> curve;     // every simulated point, by key searched, then by value
  std::optional<size_t> answer;      // position in `curve` of the answer (the smallest values that meet the target)
  std::string method;                // per key: "bisection" or "scan"
  size_t candidates = 0;             // combinations of the values in the ranges
  std::optional<Limiter> limiter;    // no answer: what binds with every key at its largest value
};

// The --vary arguments as axes: short names resolved against the scenario, a bare list of short names
// ("cores,prefetch") split and given default ranges. InputError for a repeated key or a malformed one.
std::vector<SweepAxis> rightsize_axes(const std::vector<std::string>& specs, const Scenario& scenario);

RightsizeResult rightsize(const RightsizeOptions& options);

} // namespace mlsim

namespace CLI {
class App;
}
namespace mlsim {
struct CommandStatus;
void add_rightsize_command(CLI::App& app, CommandStatus& status); // rightsize_command.cpp
} // namespace mlsim
