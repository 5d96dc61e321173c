// `mlsim validate`: run the real job over a grid of configurations, predict
// each with a Predictor, and compare.
//
// Errors: throughput relative error (predicted - measured) / measured;
// stall share absolute difference (predicted - measured), both summarised as
// the median and the max of their absolute values over the grid.
// Grid (full): loader threads {1,2,3} x prefetch {1,4} x consumer {light,
// heavy} x image size {imagenet 500x375, large 1024x768}; --quick runs 5 of them
// with shorter runs.
#pragma once

#include "sim/validate/calibrate.hpp"
#include "sim/validate/loader_job.hpp"
#include "sim/validate/predictor.hpp"

#include <nlohmann/json.hpp>

#include <ostream>
#include <string>
#include <vector>

namespace mlsim::validate {

struct ConfigResult {
  JobConfig cfg;
  JobInputs inputs;
  Prediction predicted;       // with the measured background load
  Prediction predicted_quiet; // as if the machine were otherwise idle
  Measured measured;
  double throughput_error = 0.0; // relative, signed
  double stall_error = 0.0;      // absolute, signed
};

struct ErrorSummary {
  double median_abs_error = 0.0, max_abs_error = 0.0;
};

struct ValidationReport {
  std::string predictor;      // what made the predictions
  std::string profile_source; // the profile file, or "in-process quick calibration"
  std::string host, cpu_model;
  bool gpu = false;
  std::vector<ConfigResult> rows;
  ErrorSummary throughput, stall;
};

struct ValidateOptions {
  bool quick = false;
  std::string cache_dir;       // calibration images (default_cache_dir() when empty)
  std::vector<JobConfig> grid; // empty: default_grid()
  RunLength length{};          // steps per configuration
  bool use_gpu = false;        // consumer on the GPU (probe_gpu().available)
};

std::vector<JobConfig> default_grid(bool quick, bool gpu);
RunLength default_length(bool quick);

// The loader inputs of a calibration set (built if needed).
JobInputs inputs_for_set(const std::string& set, const std::string& cache_dir, bool quick);

// Runs every configuration for real and predicts it; prints one line per configuration to `log`.
ValidationReport run_validation(const ValidateOptions& opt, const Predictor& predict, const std::string& predictor_name,
                                std::ostream& log);

ErrorSummary summarise(const std::vector<double>& signed_errors);
void print_report(const ValidationReport& r, std::ostream& out);
nlohmann::json report_to_json(const ValidationReport& r);

} // namespace mlsim::validate
