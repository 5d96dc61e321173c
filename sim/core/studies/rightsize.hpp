// `mlsim rightsize`: the smallest value of one scenario key that meets a
// target on a figure of the run, found by simulating as few points as it can.
//
// Targets: FIGURE OP THRESHOLD with OP one of < <= > >=, e.g. `stall<0.05`,
// `stall<5%`, `utilization>0.9`, `step_time<150 ms`, `throughput>=20000`,
// `cost_per_million<3` (figures: sweep_row.hpp's report_figure).
//
// Search. The candidate values (the --vary range or list, numeric, sorted)
// are probed `jobs` at a time: first evenly spread probes including both
// ends, then, while the figures seen so far are monotone in the value, only
// values inside the bracket between the largest failing and the smallest
// passing value (a k-ary bisection; "monotone" ignores wiggles under 5 % of
// the figure's range, the jitter of a plateau: with k parallel probes a round shrinks
// the bracket k+1 times). When the figures seen are not monotone, or a point
// fails to simulate, the rest of the values are scanned, so the answer is
// then exact over the list. Bisection is exact only if the figure is
// monotone between the probes: a figure that rises and falls between two
// probes can hide a smaller passing value — a scan is the cure, and the
// curve printed shows what was simulated.
#pragma once

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
  size_t index = 0;   // in the sorted candidate list
  std::string value;  // as passed to --set
  double numeric = 0;
  VariantResult result;
  std::optional<double> figure; // when the point simulated
  bool meets = false;
};

struct RightsizeOptions {
  std::string scenario;
  std::vector<std::string> base_overrides;
  SweepAxis axis;
  Target target;
  int jobs = 1;
};

struct RightsizeResult {
  std::vector<CurvePoint> curve;     // every simulated point, by value
  std::optional<size_t> answer;      // position in `curve` of the smallest value that meets the target
  std::string method;                // "bisection" or "scan"
  size_t candidates = 0;             // values in the range
};

RightsizeResult rightsize(const RightsizeOptions& options);

} // namespace mlsim

namespace CLI {
class App;
}
namespace mlsim {
struct CommandStatus;
void add_rightsize_command(CLI::App& app, CommandStatus& status); // rightsize_command.cpp
} // namespace mlsim
