#include "sim/validate/stage_bench.hpp"

#include "sim/validate/file_io.hpp"
#include "sim/validate/fit.hpp"
#include "sim/validate/idx_reader.hpp"
#include "sim/validate/image_ops.hpp"
#include "sim/validate/stats.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <thread>

namespace mlsim::validate {

namespace {
void assign(StageCost& c, const std::string& regressor, const MultiFit& f) {
  c.per_sample_s = f.a;
  if (regressor == "bytes")
    c.per_byte_s = f.b[0];
  else if (regressor == "pixels")
    c.per_pixel_s = f.b[0];
  else if (regressor == "bytes+pixels") {
    c.per_byte_s = f.b[0];
    c.per_pixel_s = f.b[1];
  } else if (regressor == "flops")
    c.per_flop_s = f.b[0];
  else if (regressor == "records") { // a file of N records: a per file, b per record
    c.per_file_s = f.a;
    c.per_sample_s = f.b[0];
  }
}
} // namespace

StageCost fit_stage_cost(const std::string& regressor, const std::vector<std::vector<double>>& x,
                         const std::vector<double>& y, const std::vector<double>& spreads, int reps) {
  MultiFit f = fit_multi(x, y, true, /*relative=*/true);
  StageCost c;
  c.regressor = regressor;
  assign(c, regressor, f);
  c.r2 = f.r2;
  c.reps = reps;
  c.spread = spreads.empty() ? 0.0 : median(spreads);
  c.points = static_cast<int>(y.size());
  for (size_t i = 0; i < y.size(); ++i)
    if (y[i] > 0)
      c.max_rel_residual = std::max(c.max_rel_residual, std::fabs(f.residuals[i]) / y[i]);
  return c;
}

StageCost measure_stage(const StageSpec& spec, const StageBenchOptions& opt) {
  const size_t n = spec.x.size();
  std::vector<double> y(n), spreads(n);
  auto clock = spec.wall_clock ? now_s : thread_cpu_s;
  for (size_t i = 0; i < n; ++i) {
    std::vector<double> t;
    for (int r = -1; r < opt.reps; ++r) { // r = -1: warm-up
      if (spec.before)
        spec.before(i);
      double t0 = clock();
      spec.work(i);
      if (r >= 0)
        t.push_back(clock() - t0);
    }
    y[i] = median(t);
    spreads[i] = relative_spread(t);
  }
  StageCost c = fit_stage_cost(spec.regressor, spec.x, y, spreads, opt.reps);

  if (spec.measure_all_cores && opt.cores > 1 && !spec.before) {
    // Every core runs the whole list `passes` times (enough work that thread start-up
    // is noise); efficiency = single-core time of that work / wall time with all busy.
    double single = 0.0;
    for (double v : y)
      single += v;
    const int passes = static_cast<int>(std::clamp(std::ceil(0.1 / std::max(single, 1e-9)), 1.0, 1000.0));
    std::vector<double> ratios;
    for (int r = 0; r < std::max(2, opt.reps / 2); ++r) {
      std::vector<double> cpu(static_cast<size_t>(opt.cores));
      std::vector<std::thread> threads;
      for (int k = 0; k < opt.cores; ++k)
        threads.emplace_back([&, k] {
          // One untimed pass first: a thread's first calls build its thread-local inputs (the host GEMM's
          // random matrices, drawn with std::rand behind a lock), which is not the stage's co-running speed.
          for (size_t j = 0; j < n; ++j)
            spec.work(j);
          const double t0 = thread_cpu_s();
          for (int pass = 0; pass < passes; ++pass)
            for (size_t j = 0; j < n; ++j)
              spec.work((j + static_cast<size_t>(k) * 7) % n);
          cpu[static_cast<size_t>(k)] = thread_cpu_s() - t0;
        });
      for (auto& t : threads)
        t.join();
      for (double c_k : cpu)
        ratios.push_back(single * passes / c_k);
    }
    c.all_cores_efficiency = median(ratios);
  }
  return c;
}

double measure_fp16_emulation_factor(int reps) {
  const size_t n = 1 << 18;
  std::vector<float> x32(n, 0.5f), y32(n, 0.25f);
  std::vector<uint16_t> x16(n, float_to_half(0.5f)), y16(n, float_to_half(0.25f));
  Timing t32 = time_reps(reps, [&] {
    for (size_t i = 0; i < n; ++i)
      y32[i] = 1.0001f * x32[i] + y32[i] * 0.5f;
    keep(y32.data());
  });
  Timing t16 = time_reps(reps, [&] {
    for (size_t i = 0; i < n; ++i) // what fp16 arithmetic costs without hardware support
      y16[i] = float_to_half(1.0001f * half_to_float(x16[i]) + half_to_float(y16[i]) * 0.5f);
    keep(y16.data());
  });
  return t32.median_s > 0 ? t16.median_s / t32.median_s : 1.0;
}

std::map<std::string, StageCost> measure_loader_stages(const std::vector<CalibImage>& images,
                                                       const StageBenchOptions& opt, bool quick) {
  std::map<std::string, StageCost> out;
  std::vector<CalibImage> sweep = select_set(images, "sweep");
  for (const auto& c : select_set(images, "native"))
    sweep.push_back(c);
  auto files = std::make_shared<std::vector<std::vector<uint8_t>>>();
  std::vector<std::vector<double>> by_bytes, by_both, by_pixels;
  for (const auto& c : sweep) {
    files->push_back(read_file(c.path));
    by_bytes.push_back({static_cast<double>(c.bytes)});
    by_both.push_back({static_cast<double>(c.bytes), c.pixels()});
    by_pixels.push_back({c.pixels()});
  }

  out["file_read_warm"] = measure_stage(
      {"file_read_warm", "bytes", by_bytes, [&](size_t i) { keep(read_file(sweep[i].path).data()); }, {}, true}, opt);
  StageBenchOptions cold = opt;
  cold.reps = std::max(2, opt.reps / 2);
  out["file_read_cold"] = measure_stage({"file_read_cold", "bytes", by_bytes,
                                         [&](size_t i) { keep(read_file(sweep[i].path).data()); },
                                         [&](size_t i) { evict_page_cache(sweep[i].path); }, false, true},
                                        cold);
  out["jpeg_decode"] = measure_stage({"jpeg_decode", "bytes+pixels", by_both,
                                      [&](size_t i) {
                                        Image img = decode_jpeg((*files)[i].data(), (*files)[i].size());
                                        keep(img.rgb.data());
                                      },
                                      {}, true},
                                     opt);

  // Decoded sources for the crop (cost vs. source pixels), then 224-class outputs.
  std::vector<Image> decoded;
  std::vector<std::vector<double>> src_px;
  for (size_t i = 0; i < sweep.size(); ++i)
    if (sweep[i].set == "sweep" && sweep[i].quality == 95) {
      decoded.push_back(decode_jpeg((*files)[i].data(), (*files)[i].size()));
      src_px.push_back({static_cast<double>(decoded.back().pixels())});
    }
  out["random_resized_crop"] = measure_stage({"random_resized_crop", "pixels", src_px,
                                              [&](size_t i) {
                                                thread_local std::mt19937 rng(7);
                                                Image o = random_resized_crop(decoded[i], rng, 224);
                                                keep(o.rgb.data());
                                              },
                                              {}, true},
                                             opt);

  // Per-output-pixel stages on crops of several output sizes.
  std::vector<int> sides = quick ? std::vector<int>{112, 224, 320} : std::vector<int>{96, 160, 224, 288, 384};
  std::vector<Image> crops;
  std::vector<std::vector<float>> planes;
  std::vector<std::vector<double>> out_px, out_bytes;
  for (int s : sides) {
    crops.push_back(resize_crop_bilinear(decoded.front(), 0, 0, decoded.front().width, decoded.front().height, s, s));
    planes.emplace_back(crops.back().pixels() * 3);
    normalize_to_fp32(crops.back(), planes.back().data());
    out_px.push_back({static_cast<double>(crops.back().pixels())});
    out_bytes.push_back({static_cast<double>(crops.back().pixels() * 3 * sizeof(float))});
  }
  out["flip"] = measure_stage({"flip", "pixels", out_px,
                               [&](size_t i) {
                                 Image c = crops[i]; // the copy is part of a flip that keeps its input
                                 hflip(c);
                                 keep(c.rgb.data());
                               },
                               {}, true},
                              opt);
  // Output buffers are reused per thread, as the validate loader does (no page faults in the timing).
  out["normalize_fp32"] = measure_stage({"normalize_fp32", "pixels", out_px,
                                         [&](size_t i) {
                                           thread_local std::vector<float> o;
                                           o.resize(crops[i].pixels() * 3);
                                           normalize_to_fp32(crops[i], o.data());
                                           keep(o.data());
                                         },
                                         {}, true},
                                        opt);
  out["to_fp16"] = measure_stage({"to_fp16", "pixels", out_px,
                                  [&](size_t i) {
                                    thread_local std::vector<uint16_t> o;
                                    o.resize(planes[i].size());
                                    convert_to_fp16(planes[i].data(), o.data(), o.size());
                                    keep(o.data());
                                  },
                                  {}, true},
                                 opt);
  const size_t batch = 16;
  out["collate"] = measure_stage({"collate", "bytes", out_bytes,
                                  [&](size_t i) {
                                    // The batch tensor's memory reused, as the loader's allocations are once
                                    // the heap has grown: a fresh mapping per rep timed the page faults (on
                                    // a VM with costly faults 20x the copy, far above what the loader paid).
                                    std::vector<const void*> samples(batch, planes[i].data());
                                    thread_local std::vector<float> b;
                                    b.resize(planes[i].size() * batch);
                                    collate(samples, planes[i].size() * sizeof(float), b.data());
                                    keep(b.data());
                                  },
                                  {}, true},
                                 opt);
  // collate was timed per batch: the stage cost is per sample.
  for (double* v : {&out["collate"].per_sample_s, &out["collate"].per_byte_s})
    *v /= static_cast<double>(batch);

  if (std::string dir = fashion_mnist_dir(); !dir.empty()) {
    std::vector<uint32_t> counts = quick ? std::vector<uint32_t>{1000, 4000, 10000}
                                         : std::vector<uint32_t>{1000, 2500, 5000, 10000, 30000, 60000};
    std::vector<std::vector<double>> recs;
    for (uint32_t c : counts)
      recs.push_back({static_cast<double>(c)});
    StageBenchOptions idx = opt;
    idx.reps = std::max(2, opt.reps / 2);
    out["idx_gzip_parse"] = measure_stage(
        {"idx_gzip_parse", "records", recs,
         [&, dir](size_t i) {
           const char* name = counts[i] > 10000 ? "train-images-idx3-ubyte.gz" : "t10k-images-idx3-ubyte.gz";
           IdxData d = read_idx_gz(dir + "/" + name, counts[i]);
           keep(d.data.data());
         },
         {}, true},
        idx);
  }
  return out;
}

} // namespace mlsim::validate
