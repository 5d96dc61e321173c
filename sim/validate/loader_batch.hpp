// One batch as a loader thread builds it: for each sample, read the file,
// decode the JPEG, RandomResizedCrop to out x out, flip, normalise to float32
// CHW into the sample's own buffer; then collate the samples into a fresh
// batch tensor. `mlsim validate`'s loader threads run this, and so does the
// in-loader calibration (in_loader_bench.hpp), which times each stage of each
// sample on the thread CPU clock while doing exactly the same work.
// Per loader thread, the decode buffer and the B sample buffers are reused
// from batch to batch (as a framework's allocator and PIL's block cache do);
// the batch tensor is new each time (as a framework allocates one).
// Ignores: colour jitter and other augmentations; decode failures (the
// calibration set is well-formed: a corrupt file throws).
#pragma once

#include <array>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace mlsim::validate {

enum class LoaderStage { read, decode, crop, flip, normalize, count };

// Thread CPU seconds of each stage of one sample (flip: 0 when not flipped).
using SampleStageTimes = std::array<double, static_cast<size_t>(LoaderStage::count)>;

struct BatchTiming {
  std::vector<SampleStageTimes> samples; // in batch order
  double collate_s = 0.0;                // the whole batch's collation
};

struct LoaderBatch {
  std::unique_ptr<float[]> data; // samples x 3 x out x out, collated
  size_t floats = 0;
};

enum class FlipPolicy {
  half,  // rng() & 1, as RandomHorizontalFlip(0.5)
  every, // every sample (the calibration times flip on each)
};

// Builds one batch of `files.size()` samples with the calling thread's buffers. `timing` may be null
// (no clock reads).
LoaderBatch build_loader_batch(const std::vector<const std::string*>& files, int out_side, std::mt19937& rng,
                               FlipPolicy flips, BatchTiming* timing);

} // namespace mlsim::validate
