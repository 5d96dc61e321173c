// A validation configuration as a scenario file, for the simulator.
//
// Generates the YAML of one `mlsim run` scenario equivalent to the real job:
// one node whose cpu/ram/disk (and accelerator) come from the calibrated
// profile (`preset: <profile path>`), a dataset of the calibration JPEGs
// resident in the page cache, a PyTorch-style pipeline (k workers building
// whole batches, prefetch d) whose stages reference the calibrated stage costs
// by name, and the consumer as the model. Kept in its own file because the
// scenario schema is still moving: adapt the keys here only.
// Ignores (for now): the CPU consumer of a GPU-less host has no scenario
// equivalent yet; it is written as a model with host placement.
#pragma once

#include "sim/validate/job_config.hpp"
#include "sim/validate/predictor.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

namespace mlsim::validate {

std::string scenario_yaml(const JobConfig& cfg, const JobInputs& in, const std::string& profile_path, int steps,
                          int warmup_steps);

// The simulator's entry point, as sim/core/simulate.hpp will declare it:
// scenario text + overrides -> the run's JSON report.
using SimulateFn = std::function<nlohmann::json(const std::string& yaml, const std::vector<std::string>& overrides)>;

// A Predictor that simulates each configuration's scenario and reads
// `throughput_samples_per_s` and `breakdown.input` from the report.
Predictor simulator_predictor(SimulateFn simulate, std::string profile_path, int steps = 60, int warmup_steps = 5);

} // namespace mlsim::validate
