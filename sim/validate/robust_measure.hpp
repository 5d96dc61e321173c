// Measuring a grid of configurations on a noisy host: interleaved repeats and a CPU-speed reference.
//
// Order: repeat r runs every configuration once, in the grid's order rotated by r (so that no
// configuration always follows the same one), before repeat r + 1 starts: a slow phase of the host
// spreads over many configurations instead of spoiling one.
// Reference: a fixed integer spin loop, timed in thread CPU time (median of 5), before and after each
// run. drift = after / before - 1 is how much the core's speed changed during the run (frequency, a
// busy hyper-thread sibling, cache pressure; time-slicing by other tenants is not in it: that is the
// run's background CPU, measured apart). A run whose |drift| exceeds the threshold is rejected: left
// out of the medians and said in the output. speed = the session's first reference / this run's mean
// reference (1: as fast as at the start).
// Per configuration: the median of each figure over the kept runs, and its spread: throughput and
// step time (max - min) / (2 median) relative, stall (max - min) / 2 absolute.
// Ignores: drift within a run that returns to its start value.
#pragma once

#include "sim/validate/calib_dataset.hpp"
#include "sim/validate/loader_job.hpp"

#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace mlsim::validate {

struct RobustOptions {
  int repeats = 1;
  double drift_threshold = 0.10; // |drift| above this rejects a run
  // After `repeats` rounds, a configuration whose kept runs' throughput spread (half the range over the
  // median) is above spread_threshold runs again, one more round of such configurations at a time,
  // until its spread is below or it has max_repeats runs (<= repeats: no extra runs). Why: where each
  // run is a fresh draw of something the host decides (a PyTorch worker's page faults follow the
  // address-space layout, clients/pytorch_loader_bench.py fresh_process), two runs 50 % apart say
  // little about the mean, and the time goes where the spread is.
  int max_repeats = 0;
  double spread_threshold = 0.10;
  // References timed before and after each run beside the spin, each for one kind of work: the consumer's
  // (reference_gemm_s for the host GEMM consumer) and the loader stages' (reference_decode_s); empty: none.
  std::function<double()> consumer_reference, stage_reference;
  // A third for the kernel's page faults (reference_page_fault_s): the loader's fresh pages (a PyTorch
  // worker's shared-memory batches, its stages' new buffers) are priced by it, not by the cores' speed.
  std::function<double()> fault_reference;
};

struct RobustMeasured {
  Measured median;               // medians over the kept runs
  double throughput_spread = 0.0; // relative
  double step_spread = 0.0;       // relative
  double stall_spread = 0.0;      // absolute (share)
  int runs = 0, rejected = 0;
  double max_abs_drift = 0.0;     // over all runs
  double speed = 1.0;             // median over the runs
  double reference_s = 0.0;       // the reference spin's time, median over the runs (of before and after)
  double consumer_reference_s = 0.0; // the consumer's reference (RobustOptions::consumer_reference), likewise; 0: none
  double stage_reference_s = 0.0;    // the loader stages' reference (RobustOptions::stage_reference), likewise; 0: none
  double fault_reference_s = 0.0;    // the page-fault reference (RobustOptions::fault_reference), likewise; 0: none
  std::vector<double> drifts;     // one per run, in run order
};

// Seconds of thread CPU time for the reference spin loop (median of 5), on each core this thread may
// use in turn (pinned there; the affinity is put back), their mean: a VM's vCPUs can run at different
// speeds, ~45 % apart at times on the 2-core development VM.
double reference_spin_s();
// Seconds of thread CPU time for one n x n x n fp32 GEMM (host_gemm_once, the C++ loader's consumer; median
// of 5), on each allowed core in turn, their mean: the consumer's reference, as reference_spin_s is the
// stages'.
double reference_gemm_s(int n);
constexpr int kReferenceGemmN = 256; // the consumer size of validate's grid (JobConfig::gemm_n)
// Seconds of thread CPU time to decode `jpeg` (the C++ loader's libjpeg-turbo decode into a reused buffer;
// median of 5) on each allowed core in turn, their mean: the loader stages' reference. Why not the spin: on
// the development VM the spin once ran 21 % faster than at calibration for a whole validation while the
// loader-bound configurations ran at the calibrated speed; a decode is SIMD and memory work, as the stages are.
double reference_decode_s(const std::vector<unsigned char>& jpeg);
// Seconds of thread CPU time for one minor page fault: each 4 KiB page of a fresh 16 MiB anonymous mapping
// written once, less a second pass over the same pages (the loop's own cost), per page; median of 5, on each
// allowed core in turn, their mean. Why a reference of its own: on the 2-core development VM a fault costs
// ~10-14 us, mostly the hypervisor's work, and its price moved 16 % between a calibration and a measurement
// two hours later (Python's touch loop, 13.6 and 11.4 us); a PyTorch worker's faults are ~40 % of its CPU for
// 224x224 samples. Validate applies it only with --fault-speed reference (validate.hpp: it did not track the
// workers' faults better than the cores' reference in run 41, README).
double reference_page_fault_s();
// The calibration set's reference JPEG (reference_decode_image), read once, and its decode timed on demand.
struct DecodeReference {
  explicit DecodeReference(const std::vector<CalibImage>& set);
  double time_s() const { return jpeg.empty() ? 0.0 : reference_decode_s(jpeg); } // 0 without the image
  std::string image; // the file's name in the set; empty without one
  std::vector<unsigned char> jpeg;
};

// How fast the cores run now against when the profile's costs were measured: the reference's time
// then over now (1 when either is unknown). A validation predicts each configuration on cores of that
// speed (JobInputs::host_speed), as the issue of a drifting shared host asks: measure a reference
// before and after and scale by it.
inline double speed_vs_calibration(double calibration_ref_s, double run_ref_s) {
  return calibration_ref_s > 0 && run_ref_s > 0 ? calibration_ref_s / run_ref_s : 1.0;
}

// The drift of a run from the references before and after it.
inline double drift(double before_s, double after_s) { return before_s > 0 ? after_s / before_s - 1.0 : 0.0; }

// Aggregates runs of one configuration: `runs[i]` measured with reference times before[i], after[i];
// `session_ref_s` is the session's first reference.
RobustMeasured aggregate_runs(const std::vector<Measured>& runs, const std::vector<double>& before,
                              const std::vector<double>& after, double session_ref_s, double drift_threshold);

// Runs configuration i (0..count-1) `repeats` times, interleaved, then the spread ones again (up to
// max_repeats, see RobustOptions); `run(i)` measures it once.
std::vector<RobustMeasured> measure_interleaved(size_t count, const RobustOptions& opt,
                                                const std::function<Measured(size_t)>& run,
                                                const std::function<std::string(size_t)>& label, std::ostream& log);

} // namespace mlsim::validate
