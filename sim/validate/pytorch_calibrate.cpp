#include "sim/validate/pytorch_calibrate.hpp"

#include "sim/validate/calib_dataset.hpp"
#include "sim/validate/client_process.hpp"
#include "sim/validate/file_io.hpp"
#include "sim/validate/in_loader_bench.hpp"
#include "sim/validate/robust_measure.hpp"
#include "sim/validate/shared_core_bench.hpp"
#include "sim/validate/stats.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <filesystem>
#include <cmath>
#include <numeric>
#include <set>
#include <stdexcept>

namespace mlsim::validate {

CostFit fit_costs(const std::vector<std::vector<double>>& x, const std::vector<double>& y,
                  const std::vector<double>& scale) {
  CostFit c;
  c.fit = scale.empty() ? fit_multi(x, y, true, true) : fit_multi_scaled(x, y, scale);
  c.quality.r2 = c.fit.r2;
  c.quality.points = static_cast<int>(y.size());
  for (size_t i = 0; i < y.size(); ++i)
    if (const double s = scale.empty() ? y[i] : scale[i]; s > 0)
      c.quality.max_rel_residual = std::max(c.quality.max_rel_residual, std::fabs(c.fit.residuals[i]) / s);
  return c;
}

StageCost fit_transform(const nlohmann::json& t) {
  const bool with_bytes = t.at("regressor") == "bytes+pixels";
  std::vector<std::vector<double>> x;
  std::vector<double> y, scale, spreads;
  for (const auto& pt : t.at("points")) {
    if (with_bytes)
      x.push_back({pt.at("bytes").get<double>(), pt.at("pixels").get<double>()});
    else
      x.push_back({pt.at("pixels").get<double>()});
    y.push_back(pt.at("cost_s").get<double>());
    scale.push_back(pt.value("measured_s", y.back()));
    spreads.push_back(pt.value("spread", 0.0));
  }
  if (y.empty())
    throw std::runtime_error("the pytorch client measured no points for " + t.value("name", std::string("?")));
  const CostFit f = fit_costs(x, y, scale);
  StageCost c;
  c.per_sample_s = f.fit.a;
  c.per_byte_s = with_bytes ? f.fit.b[0] : 0.0;
  c.per_pixel_s = f.fit.b[with_bytes ? 1 : 0];
  c.r2 = f.quality.r2;
  c.points = f.quality.points;
  c.max_rel_residual = f.quality.max_rel_residual;
  c.spread = median(spreads);
  c.regressor = with_bytes ? "bytes+pixels" : "pixels";
  c.context = "pytorch client (torchvision/PIL, thread CPU time)";
  return c;
}

namespace {
// batch bytes -> CPU seconds per batch, from the client's loader points.
CostFit fit_per_batch(const nlohmann::json& points, const std::vector<const char*>& fields) {
  std::vector<std::vector<double>> x;
  std::vector<double> y;
  for (const auto& pt : points) {
    double s = 0.0;
    for (const char* f : fields)
      s += pt.at(f).get<double>();
    x.push_back({pt.at("batch_bytes").get<double>()});
    y.push_back(s);
  }
  return fit_costs(x, y);
}

// Each worker's first batch after iter() against the number of workers W, over every repetition.
CostFit fit_startup(const nlohmann::json& startup) {
  std::vector<std::vector<double>> x;
  std::vector<double> y;
  for (const auto& w : startup)
    for (const auto& rep : w.at("first_batch_s"))
      for (const auto& t : rep) {
        x.push_back({w.at("workers").get<double>()});
        y.push_back(t.get<double>());
      }
  return fit_costs(x, y);
}
} // namespace

double in_loop_fault_price(const nlohmann::json& in_loop, const std::map<std::string, StageCost>& isolated) {
  const nlohmann::json* best = nullptr;
  bool with_bytes = false;
  double most = 0.0;
  for (const auto& [name, points] : in_loop.items()) {
    auto iso = isolated.find(name);
    if (iso == isolated.end())
      continue;
    std::set<double> sizes;
    double faults = 0.0;
    for (const auto& pt : points) {
      sizes.insert(pt.at("pixels").get<double>());
      faults += pt.value("faults", 0.0);
    }
    if (sizes.size() >= kDirectFitSizes && faults > most) {
      best = &points;
      most = faults;
      with_bytes = iso->second.regressor == "bytes+pixels";
    }
  }
  if (best == nullptr)
    return 0.0;
  std::vector<std::vector<double>> x;
  std::vector<double> y;
  for (const auto& pt : *best) {
    std::vector<double> row;
    if (with_bytes)
      row.push_back(pt.at("bytes").get<double>());
    row.push_back(pt.at("pixels").get<double>());
    row.push_back(pt.value("faults", 0.0));
    x.push_back(row);
    y.push_back(pt.at("cost_s").get<double>());
  }
  return fit_costs(x, y).fit.b.back();
}

InLoaderResult fit_in_loop(const nlohmann::json& in_loop, const std::map<std::string, StageCost>& isolated,
                           double page_fault_s) {
  InLoaderResult r;
  // The price the loop paid, where the faults explain part of its costs and it is of the measured one's
  // order; else the measured one.
  if (page_fault_s > 0) {
    r.page_fault_fitted_s = in_loop_fault_price(in_loop, isolated);
    const double k = r.page_fault_fitted_s / page_fault_s;
    if (k >= kFaultPriceBand[0] && k <= kFaultPriceBand[1])
      page_fault_s = r.page_fault_fitted_s;
  }
  for (const auto& [name, raw_points] : in_loop.items()) {
    auto iso = isolated.find(name);
    if (iso == isolated.end() || raw_points.empty())
      continue;
    // Each point's faults at the measured price go to the stage's fresh pages (their mean per input size);
    // the rest is the stage's work, fitted or scaled as before.
    nlohmann::json points = nlohmann::json::array();
    using FaultSums = std::map<double, std::map<double, std::pair<double, int>>>; // batch -> pixels -> (sum, points)
    FaultSums faults_at;
    std::map<double, FaultSums> by_process; // the same, each fresh process's own (its launch)
    std::set<double> all_pixels;
    bool by_source = false;
    double any = 0.0;
    for (const auto& pt : raw_points) {
      nlohmann::json work = pt;
      const double faults = page_fault_s > 0 ? pt.value("faults", 0.0) : 0.0;
      work["cost_s"] = std::max(0.0, pt.at("cost_s").get<double>() - faults * page_fault_s);
      work["measured_s"] = pt.at("cost_s"); // the fit's relative errors against what was measured: a rest
                                            // near 0 (most of the point was faults) is noise, not a figure
      points.push_back(work);
      // The faults by the sample's source image where the client says which it was (cpu.hpp FreshPages::by_source).
      by_source = by_source || pt.contains("source_pixels");
      const double px = pt.value("source_pixels", pt.at("pixels").get<double>());
      for (FaultSums* sums : {&faults_at, &by_process[pt.value("process", 0.0)]}) {
        auto& [sum, n] = (*sums)[pt.value("batch", 0.0)][px];
        sum += faults;
        ++n;
      }
      any += faults;
      all_pixels.insert(px);
    }
    if (any > 0) {
      FreshPages fresh;
      fresh.by_source = by_source;
      fresh.pixels.assign(all_pixels.begin(), all_pixels.end());
      if (faults_at.size() > 1)
        for (const auto& entry : faults_at)
          fresh.batches.push_back(entry.first);
      // A batch or a size one process did not see: the nearest size it saw at that batch, else the mean's.
      auto table = [&](const FaultSums& sums) {
        FreshPages::Table rows;
        for (const auto& [batch, mean_by_px] : faults_at) {
          auto own = sums.find(batch);
          const auto& by_px = own != sums.end() ? own->second : mean_by_px;
          std::vector<double> row;
          for (double px : fresh.pixels) {
            auto it = by_px.lower_bound(px);
            if (it == by_px.end())
              --it;
            row.push_back(it->second.first / it->second.second);
          }
          rows.push_back(row);
        }
        return rows;
      };
      fresh.pages = table(faults_at);
      if (by_process.size() > 1)
        for (const auto& [process, sums] : by_process)
          fresh.launches.push_back(table(sums));
      r.fresh_pages[name] = fresh;
    }
    // The ratio of the sums, not a median of per-sample ratios: a random transform (a flip with p = 0.5)
    // costs nothing on some samples and everything on the others, and its isolated fit is their mean.
    double measured = 0.0, predicted = 0.0;
    std::set<double> sizes;
    std::map<double, std::pair<double, double>> at; // source pixels -> (measured, predicted)
    for (const auto& pt : points) {
      const double m = pt.at("cost_s").get<double>(), p = iso->second.cost_s(pt.at("bytes"), pt.at("pixels"));
      measured += m;
      predicted += p;
      sizes.insert(pt.at("pixels").get<double>());
      auto& [m_at, p_at] = at[pt.value("source_pixels", pt.at("pixels").get<double>())];
      m_at += m;
      p_at += p;
    }
    if (predicted > 0)
      r.factor[name] = measured / predicted;
    if (sizes.size() < kDirectFitSizes && by_source && measured > 0 && predicted > 0) {
      // One input size (after the crop): the same ratio per source image, over the overall one (cpu.hpp
      // SourceScale).
      SourceScale t;
      for (const auto& [px, mp] : at)
        if (mp.first > 0 && mp.second > 0) {
          t.pixels.push_back(px);
          t.scale.push_back(mp.first / mp.second / (measured / predicted));
        }
      if (t.pixels.size() >= 2)
        r.work_by_source[name] = t;
    }
    if (sizes.size() >= kDirectFitSizes) {
      StageCost c = fit_transform({{"name", name}, {"regressor", iso->second.regressor}, {"points", points}});
      c.spread = iso->second.spread;
      r.direct[name] = c;
    }
  }
  r.page_fault_s = page_fault_s;
  return r;
}

std::vector<std::string> transforms_from_stages(const PipelineSpec& pipeline, std::vector<std::string>* skipped) {
  std::vector<std::string> out;
  auto has = [](const std::string& name, const char* part) { return name.find(part) != std::string::npos; };
  for (const auto& s : pipeline.stages) {
    const auto& o = s.output;
    const std::string size = o.width && o.height && *o.width != *o.height
                                 ? fmt::format("({:g}, {:g})", *o.height, *o.width)
                                 : o.width ? fmt::format("{:g}", *o.width) : std::string();
    if (s.kind != StageKind::map) {
      if (skipped)
        skipped->push_back(s.name);
    } else if (has(s.name, "tensor") || has(s.name, "convert"))
      out.push_back("ToTensor()");
    else if (has(s.name, "crop") && !size.empty())
      out.push_back("RandomResizedCrop(" + size + ")");
    else if (has(s.name, "resize") && !size.empty())
      out.push_back("Resize(" + size + ")");
    else if (has(s.name, "flip"))
      out.push_back("RandomHorizontalFlip()");
    else if (has(s.name, "normaliz"))
      out.push_back("Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])");
    else if (skipped)
      skipped->push_back(s.name);
  }
  return out;
}

void fit_worker_costs(FrameworkCostsProfile& f, const nlohmann::json& points, double page_fault_s) {
  // The workers' minor faults a batch (the shared-memory batch, one a page) against its bytes; their price is
  // taken out of each point before the CPU fit, as the stages' in-loop faults are (fit_in_loop).
  std::vector<std::vector<double>> x;
  std::vector<double> faults, rest;
  const bool counted = page_fault_s > 0 && !points.empty() &&
                       std::all_of(points.begin(), points.end(), [](const auto& pt) { return pt.contains("worker_faults"); });
  for (const auto& pt : points) {
    const double n = counted ? pt.at("worker_faults").get<double>() : 0.0;
    x.push_back({pt.at("batch_bytes").get<double>()});
    faults.push_back(n);
    rest.push_back(pt.at("worker_s").get<double>() - n * page_fault_s);
  }
  const CostFit worker = fit_costs(x, rest);
  f.worker_per_batch_s = worker.fit.a;
  f.worker_per_byte_s = worker.fit.b[0];
  f.worker_fit = worker.quality;
  f.worker_fresh_pages_per_byte = counted ? std::max(0.0, fit_costs(x, faults).fit.b[0]) : 0.0;
}

FrameworkCostsProfile fit_framework_costs(const nlohmann::json& raw, double page_fault_s) {
  FrameworkCostsProfile f;
  const CostFit receive = fit_per_batch(raw.at("loader"), {"receive_s", "other_threads_s"});
  f.receive_per_batch_s = receive.fit.a;
  f.receive_per_byte_s = receive.fit.b[0];
  f.receive_fit = receive.quality;
  fit_worker_costs(f, raw.at("loader"), page_fault_s);
  if (raw.contains("pin")) { // the pin thread's CPU: the whole process' other threads, less without pinning
    std::vector<std::vector<double>> x;
    std::vector<double> y;
    const auto& pin = raw.at("pin");
    const auto& base = raw.at("loader");
    for (size_t i = 0; i < pin.size() && i < base.size(); ++i) {
      x.push_back({pin[i].at("batch_bytes").get<double>()});
      y.push_back(std::max(0.0, pin[i].at("other_threads_s").get<double>() - base[i].at("other_threads_s").get<double>()));
    }
    const CostFit p = fit_costs(x, y);
    f.pin_per_byte_s = p.fit.b[0]; // the per-batch part is the receive fit's
    f.pin_fit = p.quality;
  } else {
    f.pin_note = raw.value("pin_skipped", std::string("not measured"));
  }
  // The hand-off latency: the mean over the points (it hardly depends on the batch's size).
  std::vector<double> latencies;
  for (const auto& pt : raw.at("loader"))
    latencies.push_back(pt.value("latency_s", 0.0));
  f.receive_latency_s = latencies.empty() ? 0.0 : std::accumulate(latencies.begin(), latencies.end(), 0.0) / latencies.size();
  f.latency_fit.points = static_cast<int>(latencies.size());
  for (double l : latencies)
    if (f.receive_latency_s > 0)
      f.latency_fit.max_rel_residual = std::max(f.latency_fit.max_rel_residual, std::fabs(l - f.receive_latency_s) / f.receive_latency_s);
  const CostFit s = fit_startup(raw.at("startup"));
  f.worker_startup_s = s.fit.b[0];
  f.startup_fit = s.quality;
  return f;
}

std::string shared_core_faults(const nlohmann::json& shared_core) {
  std::string out;
  for (const auto& point : shared_core) {
    const auto f = point.value("faults_per_sample", std::vector<double>{});
    if (!f.empty())
      out += fmt::format("{}{} {:.0f}", out.empty() ? " (minor faults a sample, timed after each process's "
                                                      "warm-up: " : ", ",
                         point.at("processes").get<int>(),
                         std::accumulate(f.begin(), f.end(), 0.0) / static_cast<double>(f.size()));
  }
  return out.empty() ? out : out + ")";
}

std::vector<double> fit_shared_core(const nlohmann::json& shared_core) {
  SharedCoreRates rates;
  for (const auto& point : shared_core)
    rates[point.at("processes").get<int>()] = point.at("samples_per_cpu_s").get<std::vector<double>>();
  return fit_shared_core(rates);
}

void add_pytorch_calibration(Profile& p, const PytorchCalibrateOptions& opt, std::ostream& log) {
  const std::vector<CalibImage> images = build_calib_set({opt.quick, opt.cache_dir});
  nlohmann::json req = {{"op", "calibrate"}, {"quick", opt.quick}, {"reps", opt.reps}};
  if (opt.launches > 0)
    req["in_loop_processes"] = opt.launches;
  req["sweep"] = nlohmann::json::array();
  req["in_loop"] = nlohmann::json::array();
  req["sizes"] = nlohmann::json::array();
  std::set<int> widths; // the transforms: one image of each width (the sweep's and validate's sizes)
  for (const auto& c : images) {
    const nlohmann::json img = {{"path", c.path}, {"width", c.width}, {"height", c.height}, {"bytes", c.bytes}};
    if (c.set == "sweep")
      req["sweep"].push_back(img);
    // The in-loop sweep (fresh pages, pytorch_loader_bench.py measure_in_loop): every size group of the set
    // but the native photos, validate's sizes too. The faults a sample step with the allocator's state, not
    // smoothly with the pixels: at 1024x768 a DataLoader worker met 370-450 a sample (batch 16) where the
    // line between the sweep's 960x720 and 1280x960 gave 190. So the sizes a job loads are measured.
    if (c.set == "sweep" || (!opt.quick && c.set != "native"))
      req["in_loop"].push_back(img);
    if (c.set != "native" && widths.insert(c.width).second)
      req["sizes"].push_back(img);
  }
  if (!opt.transforms.empty())
    req["transforms"] = opt.transforms;
  const double t0 = now_s();
  const DecodeReference decode(images); // the stages' own reference (robust_measure.hpp)
  const double decode_before = decode.time_s();
  const double ref_before = reference_spin_s(); // the cores' speed while the client measures
  const double fault_before = reference_page_fault_s(); // and the kernel's price of a fresh page
  ClientProcess client(client_python(), pytorch_client_script());
  const nlohmann::json raw = client.ask(req);
  const double ref_after = reference_spin_s();
  const double fault_after = reference_page_fault_s();
  if (!raw.value("ok", false))
    throw std::runtime_error("the pytorch client failed: " + raw.value("reason", std::string("no reason given")));
  const auto& v = raw.at("versions");
  const double decode_after = decode.image.empty() ? 0.0 : decode.time_s();
  const std::string versions = fmt::format("torch {}, torchvision {}, PIL {}, python {}", v.value("torch", "?"),
                           v.value("torchvision", "?"), v.value("pil", "?"), v.value("python", "?"));
  fmt::print(log, "  pytorch client ({}; {:.1f} s; reference spin {:.3f} ms before, {:.3f} ms after; reference page "
                  "fault {:.2f} us before, {:.2f} us after):\n",
             versions, now_s() - t0, 1e3 * ref_before, 1e3 * ref_after, 1e6 * fault_before, 1e6 * fault_after);
  fmt::print(log, "    {:<32} {:>10} {:>10} {:>10} {:>7} {:>8} {:>6}\n", "stage (core-s/sample)", "per_smpl",
             "per_B", "per_px", "R^2", "max|res|", "points");
  std::string names;
  for (const auto& t : raw.at("transforms")) {
    const StageCost c = fit_transform(t);
    const std::string name = t.at("name");
    p.cpu.stage_costs[name] = c;
    if (t.contains("expr"))
      names += (names.empty() ? "" : "; ") + t.at("expr").get<std::string>();
    fmt::print(log, "    {:<32} {:>8.3g}us {:>8.3g}ns {:>8.3g}ns {:>7.4f} {:>7.1f}% {:>6}\n", name,
               c.per_sample_s * 1e6, c.per_byte_s * 1e9, c.per_pixel_s * 1e9, c.r2, 100 * c.max_rel_residual,
               c.points);
  }
  if (raw.contains("in_loop")) {
    const nlohmann::json pf = raw.value("page_fault", nlohmann::json::object());
    p.cpu.page_fault_s = pf.value("seconds", 0.0);
    const double touched = p.cpu.page_fault_s;
    const InLoaderResult in_loop = fit_in_loop(raw.at("in_loop"), p.cpu.stage_costs, touched);
    apply_in_loader(p.cpu.stage_costs, in_loop, "pytorch client, ");
    p.cpu.page_fault_s = in_loop.page_fault_s;
    std::set<double> processes;
    for (const auto& [name, points] : raw.at("in_loop").items())
      for (const auto& pt : points)
        processes.insert(pt.value("process", 0.0));
    fmt::print(log, "    in a DataLoader worker (the sweep's files of one size after another through the chain, in {} "
                    "fresh processes; a page fault costs {:.3g} us {}: {:.3g} us touched, spread {:.2f}, {:.3g} us "
                    "fitted in the loop):\n",
               processes.size(), in_loop.page_fault_s * 1e6,
               in_loop.page_fault_s == touched ? "as touched" : "as fitted in the loop", touched * 1e6,
               pf.value("spread", 0.0), in_loop.page_fault_fitted_s * 1e6);
    for (const auto& [name, factor] : in_loop.factor) {
      const StageCost& c = p.cpu.stage_costs.at(name);
      std::string pages;
      const FreshPages& t = c.fresh_pages;
      for (size_t r = 0; r < t.pages.size(); ++r) {
        pages += t.batches.empty() ? "" : fmt::format("{}batch {:g}:", r ? "; " : "", t.batches[r]);
        for (size_t i = 0; i < t.pixels.size(); ++i)
          pages += fmt::format(" {:.0f}@{:.3g}", t.pages[r][i], t.pixels[i]);
      }
      std::string by_source;
      for (size_t i = 0; i < c.work_by_source.pixels.size(); ++i)
        by_source += fmt::format(" x{:.2f}@{:.3g}", c.work_by_source.scale[i], c.work_by_source.pixels[i]);
      fmt::print(log, "    {:<32} x{:<5.2f} {}  -> {:>8.3g}us {:>8.3g}ns {:>8.3g}ns {:>7.4f} {:>6}  fresh pages {}{}\n", name,
                 factor, in_loop.direct.count(name) ? "fitted " : "scaled ", c.per_sample_s * 1e6, c.per_byte_s * 1e9,
                 c.per_pixel_s * 1e9, c.r2, c.points, pages.empty() ? "none" : pages + (t.by_source ? " (pages@source image px)" : " (pages@px)"),
                 by_source.empty() ? "" : "; work by source image px:" + by_source);
    }
  }
  // The framework's costs once the page fault's price is known: the workers' faults are priced apart.
  FrameworkCostsProfile f = fit_framework_costs(raw, p.cpu.page_fault_s);
  f.versions = versions;
  f.transforms = names;
  f.reference_spin_s = 0.5 * (ref_before + ref_after);
  f.reference_page_fault_s = 0.5 * (fault_before + fault_after);
  if (!decode.image.empty()) {
    f.reference_decode_s = 0.5 * (decode_before + decode_after);
    p.meta.reference_decode_image = decode.image;
  }
  fmt::print(log, "    receive in next(): {:.3g} us/batch + {:.3g} ns/B (R^2 {:.3f}, max|res| {:.1f} %, {} points)\n",
             f.receive_per_batch_s * 1e6, f.receive_per_byte_s * 1e9, f.receive_fit.r2,
             100 * f.receive_fit.max_rel_residual, f.receive_fit.points);
  fmt::print(log, "    receive latency:   {:.3g} ms/batch waiting inside next() with the batch ready (mean of {} points, "
                  "largest deviation {:.0f} %)\n",
             f.receive_latency_s * 1e3, f.latency_fit.points, 100 * f.latency_fit.max_rel_residual);
  fmt::print(log, "    worker per batch:  {:.3g} us/batch + {:.3g} ns/B{} (R^2 {:.3f}, max|res| {:.1f} %, {} points)\n",
             f.worker_per_batch_s * 1e6, f.worker_per_byte_s * 1e9,
             f.worker_fresh_pages_per_byte > 0
                 ? fmt::format(" + {:.3g} fresh pages/kB at {:.3g} us (= {:.3g} ns/B)", 1e3 * f.worker_fresh_pages_per_byte,
                               1e6 * p.cpu.page_fault_s, 1e9 * f.worker_fresh_pages_per_byte * p.cpu.page_fault_s)
                 : std::string(),
             f.worker_fit.r2, 100 * f.worker_fit.max_rel_residual, f.worker_fit.points);
  if (f.pin_note.empty())
    fmt::print(log, "    pin memory:        {:.3g} ns/B\n", f.pin_per_byte_s * 1e9);
  else
    fmt::print(log, "    pin memory:        not measured ({})\n", f.pin_note);
  fmt::print(log, "    worker start-up:   {:.3g} ms per worker, one after another before any works (R^2 {:.3f}, "
                  "max|res| {:.1f} %, {} points)\n",
             f.worker_startup_s * 1e3, f.startup_fit.r2, 100 * f.startup_fit.max_rel_residual, f.startup_fit.points);
  if (raw.contains("shared_core")) {
    p.cpu.shared_core_efficiency = fit_shared_core(raw.at("shared_core"));
    fmt::print(log, "    shared core:       samples per CPU-second of the chain on one core, over one process's: {}{}\n",
               describe_shared_core(p.cpu.shared_core_efficiency, "processes"),
               shared_core_faults(raw.at("shared_core")));
  }
  p.framework_costs = f;
}

} // namespace mlsim::validate
