// Predictions for the validation job, and the closed-form fallback predictor.
//
// A Predictor maps a job configuration to {throughput, stall, step time}.
// `mlsim validate` predicts with the simulator (scenario_yaml.hpp:
// mlsim_simulator_predictor). `closed_form_predictor` is a FALLBACK kept for
// comparison and unit tests, labelled as such wherever it is used. Its model,
// from the calibrated profile:
//   P = batch * (file_read_warm + jpeg_decode + random_resized_crop
//                + 0.5 * flip + normalize_fp32 + collate)  core-s per batch
//   G = layers * host_gemm(2 n^3)                           core-s per batch
//   Other tenants (the OS view): they used b cores' worth of CPU during the
//   run (JobInputs::background_cores); the scheduler shares cores fairly per
//   runnable thread, so they count as b always-runnable threads.
//   With m of the job's threads busy each runs at min(1, c/(m + b)) * eta,
//   where eta = 1 alone and eta_all (the profile's cpu.all_cores_efficiency,
//   i.e. JPEG decode's measured one: cpu_all_cores_efficiency) when >= 2
//   threads are busy; the job as a whole gets
//   C = c * (k+1) / (k+1+b) cores at most.
//   throughput X = min(k * s_L / P, s_C / G, C * eta_all / (P + G)) batches/s,
//   stall = 1 - X * G / s_C, with s_C the consumer's speed while it computes
//   (loaders busy meanwhile: min(k, X * P / s_L)).
// Ignores: prefetch depth (the closed form assumes a deep enough queue to
// absorb the variance of batch times), per-image cost variance, OS scheduling
// latency. The simulator models these.
#pragma once

#include "sim/validate/job_config.hpp"
#include "sim/validate/profile.hpp"

#include <functional>
#include <string>
#include <vector>

namespace mlsim::validate {

struct Prediction {
  double throughput = 0.0; // samples/s
  double stall = 0.0;      // share of the consumer's time spent waiting for a batch
  double step_time_s = 0.0; // mean interval between consecutive steps' ends (0: not predicted)
  std::string bottleneck;  // closed form: "loader", "consumer", "cores"; simulator: its bottleneck kind:name
  // The simulator's throughput at each calibration launch's page faults, when the profile has them
  // (scenario_yaml.hpp); `throughput` is their mean.
  std::vector<double> launch_throughputs;
};

using Predictor = std::function<Prediction(const JobConfig&, const JobInputs&)>;

// Core-seconds per batch on this profile's reference core.
struct JobCosts {
  double loader_s = 0.0;   // P
  double consumer_s = 0.0; // G
  double eta_all = 1.0;    // speed of each core when all are busy
};
JobCosts job_costs(const Profile& p, const JobConfig& cfg, const JobInputs& in);

// The closed-form fallback described above.
Prediction closed_form_prediction(const Profile& p, const JobConfig& cfg, const JobInputs& in);
Predictor closed_form_predictor(const Profile& p);
inline constexpr const char* kClosedFormLabel = "closed-form fallback (not the simulator)";

} // namespace mlsim::validate
