// `mlsim sweep`: simulate every point of a grid (or of one shard of it) and
// write one CSV row per point (columns: sweep_row.hpp).
//
// With an output file, each row is appended with one write() as its point
// finishes, so a sweep that is killed keeps every finished point; `resume`
// reads the file back and runs only the missing points (a row cut short by
// the kill is dropped and its point run again). When every point of the
// shard is in the file, it is rewritten in grid order, so a complete file
// does not depend on which child finished first. Without an output file the
// rows go to stdout, in grid order, at the end. A point that fails during
// simulation is an `error` row; a point that does not even parse stops the
// sweep before anything runs (InputError, exit 2).
#pragma once

#include "sim/core/studies/sweep_grid.hpp"

#include <string>
#include <vector>

namespace mlsim {

struct SweepOptions {
  std::string scenario;
  std::vector<std::string> base_overrides; // --set, applied to every point
  std::vector<SweepAxis> axes;
  int jobs = 1;
  std::string out; // empty: stdout
  bool resume = false;
  Shard shard;
  bool progress = false; // a progress line on stderr
  // Test hook (env MLSIM_SWEEP_STOP_AFTER): exit abruptly, like a kill, after
  // this many rows were appended. 0 = never.
  size_t stop_after = 0;
};

struct SweepSummary {
  size_t points = 0;  // in this shard
  size_t skipped = 0; // already in the file (--resume)
  size_t ran = 0, failed = 0;
};

SweepSummary run_sweep(const SweepOptions& options);

} // namespace mlsim
