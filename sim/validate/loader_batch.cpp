#include "sim/validate/loader_batch.hpp"

#include "sim/validate/file_io.hpp"
#include "sim/validate/image_ops.hpp"
#include "sim/validate/stats.hpp"

namespace mlsim::validate {

LoaderBatch build_loader_batch(const std::vector<const std::string*>& files, int out_side, std::mt19937& rng,
                               FlipPolicy flips, BatchTiming* timing) {
  thread_local Image decoded;                    // reused: see decode_jpeg_into
  thread_local std::vector<std::vector<float>> samples; // one buffer per sample slot, reused
  const size_t per_sample = static_cast<size_t>(3 * out_side * out_side);
  samples.resize(std::max(samples.size(), files.size()));
  auto clock = [&] { return timing ? thread_cpu_s() : 0.0; };
  if (timing)
    timing->samples.assign(files.size(), SampleStageTimes{});
  std::vector<const void*> ptrs;
  for (size_t j = 0; j < files.size(); ++j) {
    constexpr size_t kStages = static_cast<size_t>(LoaderStage::count);
    double t[kStages + 1]; // clock readings between the stages
    t[0] = clock();
    std::vector<uint8_t> bytes = read_file(*files[j]);
    t[1] = clock();
    decode_jpeg_into(bytes.data(), bytes.size(), decoded);
    t[2] = clock();
    Image crop = random_resized_crop(decoded, rng, out_side);
    t[3] = clock();
    if (flips == FlipPolicy::every || (rng() & 1u))
      hflip(crop);
    t[4] = clock();
    auto& s = samples[j];
    s.resize(per_sample);
    normalize_to_fp32(crop, s.data());
    t[5] = clock();
    ptrs.push_back(s.data());
    if (timing)
      for (size_t k = 0; k < kStages; ++k)
        timing->samples[j][k] = t[k + 1] - t[k];
  }
  LoaderBatch b;
  b.floats = per_sample * files.size();
  const double c0 = clock();
  b.data.reset(new float[b.floats]); // a fresh batch tensor, as a framework allocates one
  collate(ptrs, per_sample * sizeof(float), b.data.get());
  if (timing)
    timing->collate_s = clock() - c0;
  return b;
}

} // namespace mlsim::validate
