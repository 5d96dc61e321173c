// Timing of the real loader stages on this CPU, and their cost fits.
// Costs are thread CPU time (core-seconds), except device waits (cold reads).
//
// Each stage runs on a list of real inputs (the calibration photos at several
// sizes, the Fashion-MNIST IDX files). Single core: every input is timed
// `reps` times after a warm-up; the medians are fitted (Eigen least squares)
// to cost = a + b * size (bytes, pixels or both). All cores: one thread per
// core runs the whole list at once (after one untimed pass, which builds each
// thread's own inputs); single-core CPU time / CPU time per thread
// under full load is the stage's all_cores_efficiency (1 = perfect scaling;
// less means busy cores slow each other down: shared caches, memory
// bandwidth, SMT siblings). Being CPU time, it excludes time slicing by other
// tenants, which validate measures and models separately.
// Ignores: NUMA placement, frequency boost differences between 1 and N busy cores
// beyond what the all-cores run shows.
#pragma once

#include "sim/validate/calib_dataset.hpp"
#include "sim/validate/profile.hpp"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace mlsim::validate {

// One stage to measure: per input i, its regressors and the work itself
// (`work` must be callable from several threads at once).
struct StageSpec {
  std::string name;
  std::string regressor;                 // "bytes", "pixels", "bytes+pixels", "records", "flops"
  std::vector<std::vector<double>> x;    // per input: one value per regressor
  std::function<void(size_t)> work;      // processes input i once
  std::function<void(size_t)> before;    // untimed, before each timed run (e.g. evict the page cache)
  bool measure_all_cores = true;
  bool wall_clock = false;               // time in wall time (device waits) instead of thread CPU time
};

struct StageBenchOptions {
  int reps = 5;
  int cores = 1;
};

// Fits per-input medians `y` (and their spreads) to cost = a + b * regressors (fit_multi, relative);
// the regressor names map to StageCost fields. Leaves all_cores_efficiency unset.
StageCost fit_stage_cost(const std::string& regressor, const std::vector<std::vector<double>>& x,
                         const std::vector<double>& y, const std::vector<double>& spreads, int reps);

// Times and fits one stage. The fit maps regressors to StageCost fields by name.
StageCost measure_stage(const StageSpec& spec, const StageBenchOptions& opt);

// Builds the specs of the image pipeline stages over `images` and of the IDX parse
// (skipped if Fashion-MNIST is absent) and measures them all.
std::map<std::string, StageCost> measure_loader_stages(const std::vector<CalibImage>& images,
                                                       const StageBenchOptions& opt, bool quick);

// Host fp16 elementwise work (software conversion in and out) / the same in fp32.
double measure_fp16_emulation_factor(int reps);

// Keeps the optimiser from deleting work whose result is otherwise unused.
inline void keep(const void* p) { asm volatile("" : : "g"(p) : "memory"); }

} // namespace mlsim::validate
