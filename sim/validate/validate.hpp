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
#include "sim/validate/robust_measure.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace mlsim::validate {

struct ConfigResult {
  JobConfig cfg;
  JobInputs inputs;
  Prediction predicted;       // with the measured background load
  Prediction predicted_quiet; // as if the machine were otherwise idle
  Measured measured;        // medians over the kept repeats (robust_measure.hpp)
  double spin_speed = 1.0;  // the cores' speed by the spin against calibration (inputs.host_speed: the stages')
  RobustMeasured robust;    // spreads, drift, rejected runs
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
  std::string client = "mlsim";
  RobustOptions robust;
  RunLength length{};         // the steps each configuration ran (and is simulated for)
  bool at_calibrated_speed = false; // predicted on cores as calibrated, not at the references' measured speed
  bool faults_by_reference = false; // fresh pages priced by the reference page fault, not the cores' speed
  std::vector<ConfigResult> rows;
  ErrorSummary throughput, stall;
};

struct ValidateOptions {
  bool quick = false;
  std::string cache_dir;       // calibration images (default_cache_dir() when empty)
  std::vector<JobConfig> grid; // empty: default_grid()
  RunLength length{};          // steps per configuration
  bool use_gpu = false;        // consumer on the GPU (probe_gpu().available)
  RobustOptions robust;        // repeats and the drift threshold
  // The profile's reference spin for this client's costs (calibration.reference_spin, or the pytorch
  // client's): each configuration is predicted on cores as much faster or slower as the reference ran
  // during its runs (JobInputs::host_speed). 0: predicted at the calibrated speed.
  double calibration_reference_s = 0.0;
  // The profile's reference GEMM (calibration.reference_gemm): with the host GEMM consumer, each
  // configuration's consumer runs as much faster or slower as the reference GEMM timed around its runs
  // (JobInputs::consumer_speed). 0: the consumer follows the spin.
  double calibration_gemm_reference_s = 0.0;
  // The profile's reference decode for this client's stage costs (calibration.reference_decode, or the
  // pytorch client's) and its image's file name in the calibration set: where both are known and the
  // file is in the cache, each configuration's stages are predicted as much faster or slower as that
  // decode ran around its runs (JobInputs::host_speed), instead of the spin.
  double calibration_decode_reference_s = 0.0;
  std::string reference_decode_image;
  // The profile's reference page fault for this client (the pytorch client's framework_fits reference_page_fault):
  // where known, each configuration's fresh pages are priced as much higher or lower as the reference page
  // fault timed around its runs (JobInputs::fault_speed). 0: as calibrated.
  double calibration_fault_reference_s = 0.0;
  // Predict on cores as calibrated (the references are still timed and reported, not applied).
  bool at_calibrated_speed = false;
  // Price the loader's fresh pages by the reference page fault (JobInputs::fault_speed) rather than with the
  // cores' speed (the default: a fault as much faster or slower as the stages' reference says). The fault
  // reference is always timed and reported (`pf`); see README on why it is not the default.
  bool faults_by_reference = false;
  // Measures one configuration once; empty: mlsim's own loader job (run_loader_job).
  std::function<Measured(const JobConfig&, const JobInputs&, const RunLength&)> run;
};

std::vector<JobConfig> default_grid(bool quick, bool gpu);
RunLength default_length(bool quick);
// The steps a client's configurations run: the torch client's quick run is shorter (its steps are the
// emulated accelerator's sleeps, up to ~0.5 s).
RunLength client_length(const std::string& client, bool quick);

// The loader inputs of a calibration set (built if needed).
JobInputs inputs_for_set(const std::string& set, const std::string& cache_dir, bool quick);

// Runs every configuration for real (interleaved repeats) and predicts it; prints one line per run to `log`.
ValidationReport run_validation(const ValidateOptions& opt, const Predictor& predict, const std::string& predictor_name,
                                std::ostream& log);

// Predicts a measured row at the machine's state during its runs (row.inputs: the cores' speeds, the other
// tenants' load; `at_calibrated_speed`: the load only, the cores as calibrated) and as calibrated on an idle
// machine (predicted_quiet), and sets its errors.
void predict_measured(ConfigResult& row, const Predictor& predict, bool at_calibrated_speed = false,
                      bool faults_by_reference = false);
// The report's error summaries over its rows (a row whose every run drifted is left out).
void summarise_rows(ValidationReport& r);

ErrorSummary summarise(const std::vector<double>& signed_errors);
void print_report(const ValidationReport& r, std::ostream& out);
nlohmann::json report_to_json(const ValidationReport& r);

// `mlsim validate --repredict FILE`: the measured rows of an earlier report (report_to_json's output), each
// predicted again by `predict` at the same machine state (speeds, other tenants' load). Measures nothing:
// how the current model and profile compare with measurements already made. InputError (file, key, what
// was expected) on a file that is not such a report.
ValidationReport read_validation_json(const std::string& path);
void repredict(ValidationReport& r, const Predictor& predict, const std::string& predictor_name,
               bool at_calibrated_speed = false, bool faults_by_reference = false);

} // namespace mlsim::validate
