// `mlsim calibrate --client pytorch`: a real torch.utils.data.DataLoader measured by the Python client
// (clients/pytorch_loader_bench.py) and fitted here into the profile.
//
// Fits (least squares weighted by 1/y^2, i.e. relative residuals; fit.hpp fit_multi, costs >= 0):
//   decode (pil_loader)      cost = per_sample + per_byte x file bytes + per_pixel x pixels
//   each transform           cost = per_sample + per_pixel x input pixels   (its input as the chain makes
//                            it and, for transforms after a resize, full-size inputs up to 500x375 px:
//                            2+ sizes around the crop's output; far larger ones leave the caches and
//                            cost more per pixel, e.g. ToTensor 3.4 ns/px at 224x224 but 12 ns/px at
//                            1024x768 on the 2-core development VM)
//   receive (next())         receive_per_batch + receive_per_byte x batch bytes   (training process CPU,
//                            next() itself plus the process' other threads, with workers doing no image work)
//   receive latency          the mean over those points of the median over calls of next()'s wall time
//                            less its CPU time, the batch ready (a 2 x the workers' pace sleep before each
//                            call) and the cores idle: receive_latency (a busy core adds busy_wake_delay)
//   worker                   worker_per_batch + worker_per_byte x batch bytes     (the workers' CPU per
//                            batch: fetch, default_collate into shared memory, pickling; one worker in a
//                            fresh interpreter, clients/pytorch_loader_bench.py loader_points_fresh)
//   pin                      pin_per_byte x batch bytes (the pin-memory thread; only where CUDA is usable)
//   shared core              samples per CPU-second of k processes running the chain on one core over
//                            one process's (k = 2, 3): cpu.shared_core_efficiency, each process
//                            timed after a warm-up of 24 samples (a fresh process's start-up
//                            faults are not the sharing's: timed from its first sample, 3 processes
//                            met ~1.7x the faults a sample of one). On the 2-core development VM,
//                            quiet: 0.98 / 0.97 over the sweep's files; at a load average of 8
//                            (other tenants switching in too) ~0.93 / ~0.85 at 500x375, ~0.90 /
//                            ~0.79 at 1024x768 (both before the warm-up).
//   worker start-up          time from iter() to each worker's first batch = a + worker_startup x W:
//                            the training process starts its W workers one after another and sends
//                            the first indices only when all have started (torch 1.13's iterator).
// In a DataLoader worker (the costs a worker pays): for each size of the sweep and each batch size, a fresh
// loader with one worker takes those files through pil_loader and the whole chain, and each stage is timed
// once per sample with its minor page faults (the client's `in_loop` points, from 3 fresh processes: the
// faults move with the address-space layout, clients/pytorch_loader_bench.py fresh_process). The faults at
// the price of one (`page_fault`, see fit_in_loop) are taken out of each point and tabulated
// per source image size (the point's `source_pixels`, its file's; else its input's) and batch
// (StageCost::fresh_pages, pixels_of: source; sim/hardware/cpu.hpp says why they step and move);
// the rest is the stage's work. A stage whose input took kDirectFitSizes or more sizes there (decode, the
// crop) is fitted on those points directly; the others (after the crop, one input size) keep their
// isolated fit's shape scaled by the worker's total over what the isolated fit gives for the same inputs;
// every stage gets that ratio as its in_loader_factor. A transform timed again and again on one input
// finds that input and its code in the caches. Those one-size stages also get the same ratio per source
// image size over the overall one (StageCost::work_by_source, sim/hardware/cpu.hpp SourceScale): their
// work grows with the image decoded before them in the sample (a flip ~3-5x from 500x375 to 2048x1536
// files on the development VM), which one factor would price at the sweep's mean size.
// The stage costs go into cpu.stage_costs as torch_<transform> (torch_decode, torch_random_resized_crop,
// ...), the framework costs into framework_costs.pytorch, the fit qualities under calibration.
// Ignores: the per-sample index fetch in the worker (part of the worker fit), pin memory without CUDA.
#pragma once

#include "sim/pipeline/pipeline_spec.hpp"
#include "sim/validate/fit.hpp"
#include "sim/validate/in_loader_bench.hpp"
#include "sim/validate/profile.hpp"

#include <nlohmann/json.hpp>

#include <ostream>
#include <string>
#include <vector>

namespace mlsim::validate {

// A fit with non-negative coefficients over rows of regressors, and its quality.
struct CostFit {
  MultiFit fit;
  FitQuality quality;
};
// Relative errors: each residual over y, or over scale[i] where given (a point's cost as measured, when
// y is what is left of it).
CostFit fit_costs(const std::vector<std::vector<double>>& x, const std::vector<double>& y,
                  const std::vector<double>& scale = {});

// One transform's raw points (the client's JSON) -> its stage cost.
StageCost fit_transform(const nlohmann::json& transform);

// The client's in-loop points against the isolated fits -> direct fits and factors (in_loader_bench.hpp).
inline constexpr size_t kDirectFitSizes = 3;
// Points with `faults` (minor page faults of the stage on that sample) are split at a price per fault:
// the faults' mean per source image size (per input size for points without source_pixels) becomes the
// stage's fresh_pages, the rest its work (fitted or scaled).
// The price is the loop's own (in_loop_fault_price) where it lies within kFaultPriceBand of page_fault_s
// (fresh anonymous pages touched once), else page_fault_s; 0 splits nothing. On the 2-core development
// VM: 15.1 us touched from Python, 10.1 us from C, ~11 us inside pil_loader. Splitting at the Python
// figure took more than the decode cost out of the points that faulted most, and the fit of the rest
// came out a constant (231 us at any size; ~2.8 ms decodes a 1024x768 JPEG there with no fault).
inline constexpr double kFaultPriceBand[2] = {0.25, 4.0};
InLoaderResult fit_in_loop(const nlohmann::json& in_loop, const std::map<std::string, StageCost>& isolated,
                           double page_fault_s = 0.0);
// The price of one fault as the loop pays it: the cost of the stage with the most faults among those
// measured at kDirectFitSizes+ sizes (decode), fitted on its regressors and its faults together (the
// faults vary at one size between batches and processes, which sets their coefficient apart from the
// pixels'). 0: no such stage.
double in_loop_fault_price(const nlohmann::json& in_loop, const std::map<std::string, StageCost>& isolated);
// The client's shared_core points -> cpu.shared_core_efficiency (shared_core_bench.hpp's fit: for k = 2, 3
// processes on one core, the mean of their samples per CPU-second over the mean with one process, at most 1).
std::vector<double> fit_shared_core(const nlohmann::json& shared_core);
// " (minor faults a sample, timed after each process's warm-up: 1 680, 2 650, 3 700)" from the same points,
// or "" where the client gave none.
std::string shared_core_faults(const nlohmann::json& shared_core);
// The client's loader, pin and start-up points -> the framework costs; the workers' faults priced at
// `page_fault_s` (cpu.page_fault; 0: not priced apart, fit_worker_costs).
FrameworkCostsProfile fit_framework_costs(const nlohmann::json& raw, double page_fault_s = 0.0);
// The worker cost from the loader points: where each point counts the workers' minor faults a batch
// (worker_faults) and `page_fault_s` > 0, worker_fresh_pages_per_byte is their slope against the batch's bytes
// and each point's faults x page_fault_s are taken out before worker_per_batch/_per_byte are fitted to the
// rest (what the faults' price does not explain); else the whole CPU is fitted and no pages are counted.
void fit_worker_costs(FrameworkCostsProfile& f, const nlohmann::json& points, double page_fault_s);

// The torchvision transforms a scenario's map stages stand for, by name: *tensor* or *convert* is
// ToTensor(); *crop* RandomResizedCrop(its output size), *resize* Resize(its output
// size), *flip* RandomHorizontalFlip(), *normaliz* Normalize(ImageNet mean and std). Read, decode
// (always measured, as pil_loader), shuffle, cache and other stages are left out and named in `skipped`.
std::vector<std::string> transforms_from_stages(const PipelineSpec& pipeline, std::vector<std::string>* skipped = nullptr);

struct PytorchCalibrateOptions {
  bool quick = false;
  int reps = 3;
  std::vector<std::string> transforms; // torchvision expressions; empty: the client's default chain
  std::string cache_dir;
  // Fresh interpreters the in-loop sweep runs in, each one launch of the page-fault tables
  // (fresh_pages.launches); 0: the client's default (3; 2 quick). More narrow the launches' mean where
  // each process draws its own fault count (1024x768 at batch 16: 320-1,650 a sample on the development VM).
  int launches = 0;
};

// Runs the client over the calibration images and adds its stage and framework costs to `p`.
// Throws std::runtime_error when the client fails.
void add_pytorch_calibration(Profile& p, const PytorchCalibrateOptions& opt, std::ostream& log);

} // namespace mlsim::validate
