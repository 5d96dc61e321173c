#include "sim/validate/in_loader_bench.hpp"

#include "sim/validate/loader_batch.hpp"
#include "sim/validate/stage_bench.hpp"
#include "sim/validate/stats.hpp"

#include <algorithm>
#include <map>
#include <thread>

namespace mlsim::validate {

namespace {
// The profile's names for the loop's stages, and collate (timed per batch).
constexpr std::array<const char*, 6> kProfileNames = {"file_read_warm", "jpeg_decode", "random_resized_crop",
                                                       "flip", "normalize_fp32", "collate"};
constexpr size_t kCollate = 5;
static_assert(static_cast<size_t>(LoaderStage::count) == kCollate, "the loop's stages, then collate");

struct Variant {
  std::vector<CalibImage> images; // one sweep width x quality, every photo
};

std::vector<Variant> sweep_variants(const std::vector<CalibImage>& images) {
  std::map<std::pair<int, int>, Variant> by;
  for (const auto& c : select_set(images, "sweep"))
    by[{c.width, c.quality}].images.push_back(c);
  std::vector<Variant> v;
  for (auto& [key, var] : by)
    v.push_back(std::move(var));
  return v;
}

// One sample's six stage times (collate: the batch's share) and the image it came from.
struct Sample {
  const CalibImage* image;
  std::array<double, 6> t;
};

// The whole loop once on the calling thread: every variant, one warm-up and `reps` timed batches each.
std::vector<Sample> run_loop(const std::vector<Variant>& variants, const InLoaderOptions& opt) {
  std::vector<Sample> out;
  for (size_t v = 0; v < variants.size(); ++v) {
    const auto& imgs = variants[v].images;
    std::vector<const std::string*> files;
    for (int j = 0; j < opt.batch; ++j)
      files.push_back(&imgs[static_cast<size_t>(j) % imgs.size()].path);
    for (int r = -1; r < opt.reps; ++r) {
      std::mt19937 rng(static_cast<unsigned>(v * 1000 + r + 1));
      BatchTiming bt;
      LoaderBatch b = build_loader_batch(files, opt.out_side, rng, FlipPolicy::every, &bt);
      keep(b.data.get());
      if (r < 0)
        continue;
      for (size_t j = 0; j < bt.samples.size(); ++j) {
        Sample s{&imgs[j % imgs.size()], {}};
        std::copy(bt.samples[j].begin(), bt.samples[j].end(), s.t.begin());
        s.t[kCollate] = bt.collate_s / static_cast<double>(bt.samples.size());
        out.push_back(s);
      }
    }
  }
  return out;
}

// The isolated fit's cost of stage `k` for one sample of the loop.
double isolated_cost(const StageCost& c, size_t k, const CalibImage& img, int out_side) {
  const double out_px = double(out_side) * out_side;
  switch (k) {
  case 0: return c.cost_s(static_cast<double>(img.bytes), 0.0);
  case 1: return c.cost_s(static_cast<double>(img.bytes), img.pixels());
  case 2: return c.cost_s(0.0, img.pixels());
  case 3:
  case 4: return c.cost_s(0.0, out_px);
  default: return c.cost_s(out_px * 3 * sizeof(float), out_px);
  }
}

std::array<double, 6> totals(const std::vector<Sample>& samples) {
  std::array<double, 6> sum{};
  for (const auto& s : samples)
    for (size_t k = 0; k < sum.size(); ++k)
      sum[k] += s.t[k];
  return sum;
}
} // namespace

InLoaderResult measure_in_loader(const std::vector<CalibImage>& images, const std::map<std::string, StageCost>& isolated,
                                 const InLoaderOptions& opt) {
  const double t_start = now_s();
  InLoaderResult r;
  const std::vector<Variant> variants = sweep_variants(images);
  if (variants.empty())
    return r;
  const std::vector<Sample> single = run_loop(variants, opt);

  // Direct fits: per image, the median of its timed samples.
  std::map<const CalibImage*, std::array<std::vector<double>, 3>> per_image;
  for (const auto& s : single)
    for (size_t k = 0; k < 3; ++k)
      per_image[s.image][k].push_back(s.t[k]);
  const std::array<const char*, 3> regressors = {"bytes", "bytes+pixels", "pixels"};
  for (size_t k = 0; k < 3; ++k) {
    std::vector<std::vector<double>> x;
    std::vector<double> y, spreads;
    for (const auto& [img, t] : per_image) {
      const double bytes = static_cast<double>(img->bytes), px = img->pixels();
      x.push_back(k == 0 ? std::vector<double>{bytes} : k == 1 ? std::vector<double>{bytes, px} : std::vector<double>{px});
      y.push_back(median(t[k]));
      spreads.push_back(relative_spread(t[k]));
    }
    r.direct[kProfileNames[k]] = fit_stage_cost(regressors[k], x, y, spreads, opt.reps);
  }

  for (size_t k = 0; k < kProfileNames.size(); ++k) {
    auto it = isolated.find(kProfileNames[k]);
    if (it == isolated.end())
      continue;
    std::vector<double> ratios;
    for (const auto& s : single)
      if (double iso = isolated_cost(it->second, k, *s.image, opt.out_side); iso > 0)
        ratios.push_back(s.t[k] / iso);
    if (!ratios.empty())
      r.factor[kProfileNames[k]] = median(ratios);
  }

  if (opt.cores > 1) { // the same loop on every core at once
    std::vector<std::vector<Sample>> runs(static_cast<size_t>(opt.cores));
    std::vector<std::thread> threads;
    for (size_t c = 0; c < runs.size(); ++c)
      threads.emplace_back([&, c] { runs[c] = run_loop(variants, opt); });
    for (auto& t : threads)
      t.join();
    const std::array<double, 6> alone = totals(single);
    std::array<double, 6> busy{};
    for (const auto& run : runs) {
      const auto t = totals(run);
      for (size_t k = 0; k < busy.size(); ++k)
        busy[k] += t[k] / static_cast<double>(runs.size());
    }
    double sum_alone = 0.0, sum_busy = 0.0;
    for (size_t k = 0; k < busy.size(); ++k) {
      if (busy[k] > 0)
        r.all_cores[kProfileNames[k]] = alone[k] / busy[k];
      sum_alone += alone[k];
      sum_busy += busy[k];
    }
    r.loop_all_cores_efficiency = sum_busy > 0 ? sum_alone / sum_busy : 0.0;
  }
  r.seconds = now_s() - t_start;
  return r;
}

void apply_in_loader(std::map<std::string, StageCost>& costs, const InLoaderResult& r, const std::string& client) {
  for (const auto& [name, fit] : r.direct) {
    StageCost c = fit;
    c.context = client + "loader";
    costs[name] = c;
  }
  for (const auto& [name, factor] : r.factor) {
    auto it = costs.find(name);
    if (it == costs.end() || r.direct.count(name))
      continue;
    StageCost& c = it->second;
    for (double* v : {&c.per_sample_s, &c.per_byte_s, &c.per_pixel_s})
      *v *= factor;
    c.context = client + "isolated x in_loader_factor";
  }
  for (const auto& [name, pages] : r.fresh_pages)
    if (auto it = costs.find(name); it != costs.end()) {
      it->second.fresh_pages = pages;
      it->second.page_fault_s = r.page_fault_s;
    }
  for (const auto& [name, scale] : r.work_by_source)
    if (auto it = costs.find(name); it != costs.end() && !r.direct.count(name))
      it->second.work_by_source = scale;
  for (auto& [name, c] : costs) {
    if (auto f = r.factor.find(name); f != r.factor.end())
      c.in_loader_factor = f->second;
    if (auto e = r.all_cores.find(name); e != r.all_cores.end())
      c.all_cores_efficiency = e->second;
  }
}

} // namespace mlsim::validate
