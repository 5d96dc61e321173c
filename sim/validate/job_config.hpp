// One configuration of the end-to-end validation job, and its inputs.
//
// The job: `loader_threads` threads, each building whole batches of
// `batch_size` samples (read file, JPEG decode, RandomResizedCrop 224, random
// flip, normalise to float32, collate), into a prefetch queue of
// `prefetch_depth` batches; one consumer thread taking a batch and running
// `consumer_layers` GEMMs of gemm_n^3 (Eigen fp32 on one core, or fp16 cuBLAS
// after a host-to-device copy on a GPU).
#pragma once

#include <string>
#include <vector>

namespace mlsim::validate {

struct JobConfig {
  // "mlsim": the job above. "pytorch": a torch DataLoader with `loader_threads` workers and the default
  // transforms feeding an emulated accelerator, a sleep of `step_s` per step, on `cores` cores
  // (pytorch_validate.hpp); prefetch_depth, consumer and gemm_n are not used.
  std::string client = "mlsim";
  double step_s = 0.0;     // pytorch: the emulated accelerator's step
  double step_ratio = 0.0; // pytorch: step_s / the loader's predicted time per batch
  int cores = 0;           // pytorch: cores the job may use (sched_setaffinity); 0: all
  int loader_threads = 1;
  int prefetch_depth = 2;
  std::string consumer = "light"; // a name for the consumer cost
  int consumer_layers = 8;        // GEMMs per step
  int gemm_n = 256;
  std::string image_set = "imagenet"; // a calibration set: imagenet (500x375) or large (1024x768)
  int batch_size = 16;
  int out_side = 224;
  bool gpu = false;

  std::string label() const; // "k2 d4 heavy imagenet"
  double consumer_flops() const { return 2.0 * consumer_layers * double(gemm_n) * gemm_n * gemm_n; }
};

struct JobInputs {
  std::vector<std::string> files; // the JPEGs the loader cycles through
  double mean_bytes = 0.0, mean_pixels = 0.0;
  // The machine's state: cores' worth of CPU that other processes used while
  // the job ran (measured from /proc/stat); 0 on a quiet machine.
  double background_cores = 0.0;
  // How the OS shares the cores between this job and the other tenants: per process group
  // (Linux autogroup: each session's threads together get a fair share) or per thread.
  bool group_scheduling = false;
  // The cores' speed during the run over their speed when the profile was calibrated (a reference spin
  // loop timed at both, robust_measure.hpp); 1: as calibrated.
  double host_speed = 1.0;
  // The host GEMM consumer's speed during the run over its calibrated speed (a reference GEMM of the
  // consumer's size timed at both, robust_measure.hpp); 0: unknown, the consumer follows host_speed. An
  // integer spin loop does not see what slows a cache- and memory-bound GEMM (another tenant's cache and
  // memory traffic, the vector units' clock), and the GEMM-bound configurations follow the GEMM.
  double consumer_speed = 0.0;
  double consumer_speed_or_host() const { return consumer_speed > 0 ? consumer_speed : host_speed; }
  // How much cheaper a minor page fault was during the run than at calibration (the calibration's
  // reference page fault over the run's, robust_measure.hpp reference_page_fault_s); 1: as calibrated.
  // The profile's cpu.page_fault prices the loader's fresh pages (stage tables, the workers' batches)
  // at the calibration's fault price over it, at whatever speed the cores run.
  double fault_speed = 1.0;
};

} // namespace mlsim::validate
