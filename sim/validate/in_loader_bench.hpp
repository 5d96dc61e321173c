// Stage costs measured where they run: inside a loader building batches.
//
// stage_bench times each stage alone, on the same few buffers again and
// again, so its inputs and outputs stay in the core's caches. In a loader a
// sample's stages follow one another through a decoded frame of megabytes,
// B distinct sample buffers and a fresh batch tensor, and each stage finds
// less in the caches: on the 2-core VM this was written on, collation cost
// ~2x its isolated figure, normalisation ~1.2x (3.1x on another 2-core
// machine: its 600 kB output per sample streams to DRAM), the warm read's per-file part
// ~4x (microseconds), decode and crop ~1.0x. A simulator fed isolated costs is
// optimistic by that much for loader-bound jobs, so `calibrate` measures the
// costs the loader actually pays:
// measure_in_loader runs the loader's own batch builder (loader_batch.hpp,
// the code `mlsim validate`'s loader threads run) over batches of one sweep
// variant (width x quality) at a time, output 224x224, every sample flipped,
// and times each stage of each sample on the thread CPU clock.
//   Direct fits over the per-image medians (Eigen, relative least squares):
//     file_read_warm       a + b * bytes
//     jpeg_decode          a + b * bytes + c * pixels
//     random_resized_crop  a + b * source pixels
//   Per-output-pixel stages (flip, normalize_fp32) and collate see one output
//   size in the loop: their isolated fits (sizes 96..384) keep their shape and
//   are scaled by the loader / isolated ratio measured at 224 (the median over
//   the loop's samples).
//   in_loader_factor (every stage): median over the loop's samples of the
//   in-loader time / the isolated fit at that sample.
// All cores: one loop per core at once over the same batches; single-core
// CPU time / per-thread CPU time is each stage's all_cores_efficiency, and
// over the whole loop the CPU's `all_cores_efficiency` (a loader's co-running
// slowdown, rather than one stage's).
// Ignores: to_fp16 (not in this loop: it keeps its isolated cost), output
// sizes other than 224, batch sizes other than `batch`.
#pragma once

#include "sim/validate/calib_dataset.hpp"
#include "sim/validate/profile.hpp"

#include <map>
#include <string>
#include <vector>

namespace mlsim::validate {

struct InLoaderOptions {
  int reps = 3;      // timed batches per variant (after one warm-up batch)
  int cores = 1;     // threads in the all-cores run
  int batch = 16;    // samples per batch
  int out_side = 224;
};

struct InLoaderResult {
  std::map<std::string, StageCost> direct;       // file_read_warm, jpeg_decode, random_resized_crop
  std::map<std::string, double> factor;          // per profile stage name: in loader / isolated
  std::map<std::string, double> all_cores;       // per profile stage name
  double loop_all_cores_efficiency = 0.0;        // the whole loop (0: one core)
  double seconds = 0.0;                          // wall time of the measurement
  std::map<std::string, FreshPages> fresh_pages; // per stage: pages mapped fresh per sample (pytorch client)
  std::map<std::string, SourceScale> work_by_source; // per scaled stage: its work by source image (pytorch client)
  double page_fault_s = 0.0;                     // their price (0: faults not measured)
  double page_fault_fitted_s = 0.0;              // the loop's own price (pytorch_calibrate.hpp; 0: none)
};

// Measures the loop over the sweep images of `images`; `isolated` are stage_bench's costs (for the factors).
InLoaderResult measure_in_loader(const std::vector<CalibImage>& images, const std::map<std::string, StageCost>& isolated,
                                 const InLoaderOptions& opt);

// The costs to write: direct fits replace the isolated ones, the other stages with a factor (flip,
// normalize_fp32, collate) are scaled by it; every loader stage gets its in_loader_factor and in-loader
// all-cores efficiency. `client` prefixes the contexts ("loader", "isolated x in_loader_factor").
void apply_in_loader(std::map<std::string, StageCost>& costs, const InLoaderResult& r, const std::string& client = "");

} // namespace mlsim::validate
