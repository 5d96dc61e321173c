#include "sim/validate/gpu/kernel_fit.hpp"

#include "sim/core/run/load/hardware_load.hpp"
#include "sim/core/run/load/preset_library.hpp"
#include "sim/pipeline/step_graph/backward_rules.hpp"
#include "sim/pipeline/step_graph/layer_builders.hpp"
#include "sim/pipeline/step_graph/op_cost.hpp"
#include "sim/validate/fit.hpp"
#include "sim/validate/stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <map>
#include <stdexcept>

namespace mlsim::validate {

namespace {

std::string lower(std::string s) {
  for (auto& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

DType dtype_of(const std::string& name) {
  return name == "fp16" ? DType::fp16 : name == "bf16" ? DType::bf16 : name == "tf32" ? DType::tf32 : DType::fp32;
}
bool matrix_path(DType d) { return d != DType::fp32; }

FlopsPerSec datasheet_peak(const AcceleratorSpec& a, DType d) {
  if (matrix_path(d))
    if (auto p = a.matrix_peak_for(d))
      return *p;
  return a.vector_peak_for(d);
}

// One timed GEMM as the model sees it.
struct Sample {
  DType dtype;
  double m, n, k, seconds;
};

// The model's time of one sample with `p` (fractions inside) and launch floor L.
GemmTiming model_gemm(const KernelParams& p, const AcceleratorSpec& a, const Sample& s, double fraction) {
  return gemm_time(p, matrix_path(s.dtype), s.m, s.n, s.k, datasheet_peak(a, s.dtype), fraction,
                   a.memory_bandwidth * p.memory_fraction);
}

const DType kDtypes[] = {DType::fp32, DType::tf32, DType::fp16, DType::bf16};

struct LinearSolve {
  double L = 0;
  std::map<DType, double> fraction;
  double sse = 0; // squared relative errors
};

// For reuse saturations fixed in `p`: L and 1/f_d by least squares; twice, so the tile choice follows f.
LinearSolve solve(KernelParams p, const AcceleratorSpec& a, const std::vector<Sample>& samples) {
  LinearSolve out;
  std::map<DType, double> f;
  for (DType d : kDtypes)
    f[d] = 1.0;
  for (int pass = 0; pass < 2; ++pass) {
    std::vector<std::vector<double>> x;
    std::vector<double> y;
    for (const Sample& s : samples) {
      GemmTiming g = model_gemm(p, a, s, f[s.dtype]);
      std::vector<double> row(4, 0.0);
      row[static_cast<size_t>(s.dtype)] = g.compute.value() * f[s.dtype]; // the time at fraction 1
      x.push_back(row);
      y.push_back(s.seconds - g.reduction.value());
    }
    MultiFit fit = fit_multi(x, y, true, true);
    out.L = std::max(0.0, fit.a);
    for (DType d : kDtypes)
      if (fit.b[static_cast<size_t>(d)] > 0)
        f[d] = std::min(1.0, 1.0 / fit.b[static_cast<size_t>(d)]);
  }
  out.fraction = f;
  for (const Sample& s : samples) {
    double t = out.L + model_gemm(p, a, s, f[s.dtype]).total().value();
    out.sse += std::pow((t - s.seconds) / s.seconds, 2);
  }
  return out;
}

// Golden-section search of log R in [lo, hi] for the least `sse(R)`.
double refine(double lo, double hi, const std::function<double(double)>& sse) {
  const double phi = (std::sqrt(5.0) - 1) / 2;
  double a = std::log(lo), b = std::log(hi);
  double c = b - phi * (b - a), d = a + phi * (b - a);
  double fc = sse(std::exp(c)), fd = sse(std::exp(d));
  for (int i = 0; i < 30; ++i) {
    if (fc < fd) {
      b = d, d = c, fd = fc;
      c = b - phi * (b - a), fc = sse(std::exp(c));
    } else {
      a = c, c = d, fc = fd;
      d = a + phi * (b - a), fd = sse(std::exp(d));
    }
  }
  return std::exp((a + b) / 2);
}

// The best saturation of one path (`matrix` or not), the other held in `p`.
double best_reuse(const KernelParams& p0, bool matrix, const AcceleratorSpec& a, const std::vector<Sample>& samples) {
  KernelParams p = p0;
  auto sse = [&](double R) {
    (matrix ? p.saturating_reuse : p.vector_saturating_reuse) = R;
    return solve(p, a, samples).sse;
  };
  std::vector<double> grid;
  for (double R = 4; R <= 512 * 1.001; R *= std::sqrt(2.0))
    grid.push_back(R);
  size_t best = 0;
  std::vector<double> e;
  for (double R : grid)
    e.push_back(sse(R));
  for (size_t i = 1; i < grid.size(); ++i)
    if (e[i] < e[best])
      best = i;
  const double worst = *std::max_element(e.begin(), e.end());
  if (worst - e[best] <= 1e-9 * worst + 1e-18) // the sweep's shapes do not show the saturation: keep the preset's
    return matrix ? p0.saturating_reuse : p0.vector_saturating_reuse;
  return refine(grid[best > 0 ? best - 1 : 0], grid[std::min(best + 1, grid.size() - 1)], sse);
}

double median_of(std::vector<double> v) { return v.empty() ? 0.0 : median(v); }

} // namespace

std::optional<AcceleratorSpec> datasheet_for(const GpuInfo& gpu) {
  const std::string name = lower(gpu.name);
  // The form factor first (CUDA names a PCIe card "... PCIe" / "-PCIE-", an SXM part not always), then the
  // memory size: "NVIDIA A100-PCIE-40GB" is a100-pcie-40gb, "NVIDIA H100 80GB HBM3" h100-sxm.
  const bool pcie = name.find("pcie") != std::string::npos;
  std::optional<AcceleratorSpec> best;
  std::pair<bool, double> best_score{true, 0.0};
  for (const auto& preset : preset_names("accelerators")) {
    const std::string family = preset.substr(0, preset.find('-'));
    if (family.size() < 3 || name.find(family) == std::string::npos)
      continue;
    AcceleratorSpec a = accelerator_preset(preset);
    if (!a.kernels.has_tiles())
      continue;
    const std::pair<bool, double> score{(preset.find("pcie") != std::string::npos) != pcie,
                                        std::abs(a.memory_size.value() - gpu.memory_bytes)};
    if (!best || score < best_score) {
      best = a;
      best_score = score;
    }
  }
  return best;
}

Seconds modelled_conv_time(const ConvPoint& c, const AcceleratorSpec& acc) {
  LayerSpec l;
  l.type = "conv2d";
  l.name = "sweep";
  l.filters = c.k;
  l.kernel = c.r;
  l.stride = c.stride;
  l.padding = std::to_string(c.pad);
  l.bias = false;
  l.groups = c.groups;
  Op fwd = build_layer(l, {Shape{c.h, c.w, c.c}}, c.n).ops.front();
  const DType d = dtype_of(c.dtype);
  fwd.compute_dtype = d;
  fwd.in_dtype = fwd.out_dtype = fwd.param_dtype = d == DType::fp16 ? DType::fp16 : DType::fp32;
  fwd.nchw_activations = c.layout == "nchw";
  const Op op = c.op == "fwd" ? fwd : c.op == "bwd_data" ? input_gradient(fwd) : weight_gradient(fwd);
  return cost_device_op(op, acc).duration;
}

double modelled_norm_bytes(const NormPoint& b) {
  LayerSpec l;
  l.type = "batch_norm";
  l.name = "sweep";
  Op fwd = build_layer(l, {Shape{b.h, b.w, b.c}}, b.n).ops.front();
  fwd.in_dtype = fwd.out_dtype = b.dtype == "fp16" ? DType::fp16 : DType::fp32; // statistics and scales stay fp32
  return (b.op == "fwd" ? fwd : generic_gradient(fwd)).bytes().value();
}

std::optional<NormFit> fit_norm(const std::vector<NormSample>& s, double hbm, double clock) {
  if (s.size() < 2 || hbm <= 0)
    return std::nullopt;
  if (clock <= 0) { // no channel term: t = latency + bytes / (F x HBM) is linear in bytes / HBM
    std::vector<std::vector<double>> x;
    std::vector<double> y;
    for (const auto& p : s) {
      x.push_back({p.bytes / hbm});
      y.push_back(p.seconds);
    }
    MultiFit f = fit_multi(x, y, true, true);
    if (f.b.empty() || !(f.b[0] > 0))
      return std::nullopt;
    NormFit out{std::clamp(1.0 / f.b[0], 0.01, 1.0), std::max(0.0, f.a), 0.0, 0.0, 0.0};
    for (size_t i = 0; i < y.size(); ++i)
      out.max_rel_residual = std::max(out.max_rel_residual, std::abs(f.eval(x[i]) - y[i]) / y[i]);
    return out;
  }
  // rate(F, Rf, Rb) per point; the latency in closed form (relative least squares, at least 0).
  auto rate = [&](const NormSample& x, double f, double rf, double rb) {
    const double cap = f * hbm;
    return std::min(cap, x.channels * (x.backward ? rb : rf) * clock);
  };
  auto latency = [&](double f, double rf, double rb) {
    double num = 0, den = 0;
    for (const auto& x : s) {
      num += (x.seconds - x.bytes / rate(x, f, rf, rb)) / (x.seconds * x.seconds);
      den += 1 / (x.seconds * x.seconds);
    }
    return std::max(0.0, num / den);
  };
  auto cost = [&](double f, double rf, double rb) {
    const double l = latency(f, rf, rb);
    double c = 0;
    for (const auto& x : s) {
      const double e = (l + x.bytes / rate(x, f, rf, rb) - x.seconds) / x.seconds;
      c += e * e;
    }
    return c;
  };
  // Coordinate descent over grids: F in [0.01, 1] by 0.0005; a rate from 0.05 to 1024 bytes per cycle in steps
  // of 0.2 %. A rate at the top of its grid binds no point: the fit has no channel rate for that pass.
  constexpr double kRateMin = 0.05, kRateMax = 1024.0, kRateStep = 1.002;
  auto best_on = [&](auto&& objective, auto&& grid) {
    double best = grid.front(), best_cost = objective(best);
    for (double v : grid)
      if (double c = objective(v); c < best_cost) {
        best = v;
        best_cost = c;
      }
    return best;
  };
  std::vector<double> fractions, rates;
  for (int i = 20; i <= 2000; ++i)
    fractions.push_back(i * 0.0005);
  for (double v = kRateMin; v <= kRateMax; v *= kRateStep)
    rates.push_back(v);
  double f = 0.9, rf = rates.back(), rb = rates.back();
  for (int round = 0; round < 20; ++round) {
    const double before = cost(f, rf, rb);
    f = best_on([&](double v) { return cost(v, rf, rb); }, fractions);
    rf = best_on([&](double v) { return cost(f, v, rb); }, rates);
    rb = best_on([&](double v) { return cost(f, rf, v); }, rates);
    if (cost(f, rf, rb) >= before * (1 - 1e-9) && round > 0)
      break;
  }
  NormFit out{f, latency(f, rf, rb), 0.0, 0.0, 0.0};
  for (const auto& x : s) {
    const bool bound = x.channels * (x.backward ? rb : rf) * clock < f * hbm;
    if (bound)
      (x.backward ? out.rate_bwd : out.rate_fwd) = x.backward ? rb : rf;
    out.max_rel_residual =
        std::max(out.max_rel_residual, std::abs(out.latency + x.bytes / rate(x, f, rf, rb) - x.seconds) / x.seconds);
  }
  return out;
}

KernelFit fit_kernel_params(const GpuBenchResult& r, const AcceleratorSpec& datasheet) {
  KernelFit out;
  out.datasheet = datasheet.name;
  KernelParams p = datasheet.kernels;
  // HBM first: split-k partial sums go through memory at the fitted rate.
  std::vector<double> bytes, secs;
  for (const auto& c : r.hbm_copies) {
    bytes.push_back(c.bytes);
    secs.push_back(c.seconds);
  }
  const double bw = datasheet.memory_bandwidth.value();
  if (bytes.size() >= 2) {
    LinearFit f = fit_linear(bytes, secs);
    p.memory_latency = Seconds(f.a);
    p.memory_fraction = f.b > 0 ? std::clamp(1.0 / (f.b * bw), 0.01, 1.0) : p.memory_fraction;
    out.memory_r2 = f.r2;
    out.memory_points = static_cast<int>(bytes.size());
  } else if (r.hbm_Bps > 0) {
    p.memory_fraction = std::clamp(r.hbm_Bps / bw, 0.01, 1.0);
    out.memory_points = 1;
  }

  std::vector<Sample> samples;
  for (const auto& g : r.gemm)
    if (g.aligned())
      samples.push_back({dtype_of(g.dtype), double(g.m), double(g.n), double(g.k), g.seconds});
  if (samples.size() < 3)
    throw std::invalid_argument("fit_kernel_params: fewer than 3 aligned GEMM timings");
  // Coordinate search: the matrix path's saturation, then the vector path's, then the matrix path's again.
  p.saturating_reuse = best_reuse(p, true, datasheet, samples);
  p.vector_saturating_reuse = best_reuse(p, false, datasheet, samples);
  p.saturating_reuse = best_reuse(p, true, datasheet, samples);
  LinearSolve s = solve(p, datasheet, samples);
  p.matrix_fraction.clear();
  p.vector_fraction.clear();
  for (DType d : kDtypes) {
    bool measured = std::any_of(samples.begin(), samples.end(), [&](const Sample& x) { return x.dtype == d; });
    if (measured)
      (matrix_path(d) ? p.matrix_fraction : p.vector_fraction)[d] = s.fraction[d];
  }
  out.launch_floor_s = s.L;
  std::vector<double> y, yhat;
  for (const Sample& x : samples) {
    y.push_back(x.seconds);
    yhat.push_back(s.L + model_gemm(p, datasheet, x, s.fraction[x.dtype]).total().value());
    out.gemm_max_rel_residual = std::max(out.gemm_max_rel_residual, std::abs(yhat.back() - y.back()) / y.back());
  }
  out.gemm_r2 = r_squared(y, yhat);
  out.gemm_points = static_cast<int>(samples.size());
  p.source = fmt::format("fitted by mlsim calibrate to {} cuBLAS GEMMs{}{} on {} ({}), against the {} datasheet",
                         samples.size(), r.conv.empty() ? "" : fmt::format(", {} cuDNN convolutions", r.conv.size()),
                         r.norm.empty() ? "" : fmt::format(", {} cuDNN batch norms", r.norm.size()), r.info.name,
                         r.info.driver, datasheet.name);
  out.params = p;

  // The table: GEMMs per dtype, then convolutions per direction and dtype.
  auto row = [&](const std::string& op_class, const std::string& dtype, const std::vector<double>& achieved,
                 const std::vector<double>& predicted) {
    if (achieved.empty())
      return;
    out.table.push_back({op_class, dtype, static_cast<int>(achieved.size()), median_of(achieved),
                         datasheet_peak(datasheet, dtype_of(dtype)).value(), median_of(predicted)});
  };
  for (const char* d : {"fp32", "tf32", "fp16", "bf16"}) {
    std::vector<double> achieved, predicted;
    for (size_t i = 0; i < samples.size(); ++i)
      if (samples[i].dtype == dtype_of(d)) {
        const double flops = 2 * samples[i].m * samples[i].n * samples[i].k;
        achieved.push_back(flops / y[i]);
        predicted.push_back(flops / yhat[i]);
      }
    row("gemm", d, achieved, predicted);
  }
  // Convolutions: the step graph's ops costed with the fitted figures, against cuDNN's autotuned algorithms.
  AcceleratorSpec fitted = datasheet;
  fitted.kernels = p;
  fitted.launch_overhead = Seconds(s.L);
  fitted.efficiency.clear();
  const bool any_autotuned = std::any_of(r.conv.begin(), r.conv.end(), [](const ConvPoint& c) { return c.autotuned; });
  std::map<DType, std::vector<double>> ratios;
  for (const auto& c : r.conv)
    if (c.autotuned == any_autotuned && c.groups == 1) // the implicit GEMM and Winograd kernels it scales
      ratios[dtype_of(c.dtype)].push_back(modelled_conv_time(c, fitted).value() / c.seconds);
  for (auto& [d, v] : ratios)
    out.params.conv_efficiency[d] = std::clamp(median_of(v), 0.01, 1.0);
  fitted.kernels.conv_efficiency = out.params.conv_efficiency;
  // Dense, grouped (a few channels a group: ResNeXt) and depthwise (one a group) convolutions, each its own rows.
  auto kind_of = [](const ConvPoint& c) {
    return c.groups == 1 ? "conv " : c.depthwise() ? "depthwise conv " : "grouped conv ";
  };
  for (const char* kind : {"conv ", "grouped conv ", "depthwise conv "})
    for (const char* op : {"fwd", "bwd_data", "bwd_filter"})
      for (const char* d : {"fp32", "tf32", "fp16"}) {
        std::vector<double> achieved, predicted;
        for (const auto& c : r.conv)
          if (c.op == op && c.dtype == d && c.autotuned == any_autotuned && std::string(kind_of(c)) == kind) {
            achieved.push_back(c.flops() / c.seconds);
            predicted.push_back(c.flops() / modelled_conv_time(c, fitted).value());
          }
        row(std::string(kind) + op, d, achieved, predicted);
      }

  // Batch norm per layout: latency, fraction of HBM and (NCHW) the channels' rates (kernel_model.hpp), fitted to
  // the dtype PyTorch runs each layout in for training (NHWC: fp16 AMP, NCHW: fp32). Another dtype measured in a
  // layout (fp16 NCHW: AMP without channels_last) is not fitted: the layout's fit is applied to it and compared.
  const std::vector<std::pair<std::string, std::string>> fitted_dtype{{"nhwc", "fp16"}, {"nchw", "fp32"}};
  auto norm_samples = [&](const std::string& layout, const std::string& dtype) {
    std::vector<NormSample> samples;
    for (const auto& b : r.norm)
      if (b.layout == layout && b.dtype == dtype)
        samples.push_back({modelled_norm_bytes(b), static_cast<double>(b.c), b.seconds, b.op == "bwd"});
    return samples;
  };
  auto median_rate = [](const std::vector<NormSample>& samples) { // of the step graph's bytes
    std::vector<double> v;
    for (const auto& x : samples)
      v.push_back(x.bytes / x.seconds);
    return median_of(v);
  };
  for (const auto& [layout, dtype] : fitted_dtype) {
    const std::vector<NormSample> samples = norm_samples(layout, dtype);
    const double clock = layout == "nchw" ? datasheet.boost_clock.value() : 0.0;
    std::optional<NormFit> f = fit_norm(samples, bw, clock);
    if (!f)
      continue;
    out.params.norm_fraction[layout] = f->fraction;
    out.params.norm_latency[layout] = Seconds(f->latency);
    for (auto [pass, rate] : {std::pair{"fwd", f->rate_fwd}, std::pair{"bwd", f->rate_bwd}})
      if (rate > 0)
        out.params.norm_channel_rate[pass] = rate;
    out.norm_table.push_back({layout, dtype, static_cast<int>(samples.size()), median_rate(samples), bw,
                              f->max_rel_residual, 1.0, true});
  }
  for (const auto& [layout, fitted] : fitted_dtype)
    for (const char* dtype : {"fp16", "fp32"}) {
      std::vector<double> ratios;
      const std::vector<NormSample> samples = norm_samples(layout, dtype);
      if (dtype == fitted || samples.empty() || !out.params.norm_fraction.count(layout))
        continue;
      NormRow row{layout, dtype, static_cast<int>(samples.size()), median_rate(samples), bw, 0.0, 0.0, false};
      for (const auto& x : samples) {
        const double model = batch_norm_time(out.params, Bytes(x.bytes), BytesPerSec(bw), datasheet.boost_clock,
                                             layout == "nchw", x.backward, x.channels)
                                 ->total.value();
        ratios.push_back(model / x.seconds);
        row.max_rel_residual = std::max(row.max_rel_residual, std::abs(model - x.seconds) / x.seconds);
      }
      row.model_over_measured = median_of(ratios);
      out.norm_table.push_back(row);
    }
  return out;
}

std::string efficiency_table(const KernelFit& f) {
  std::string t = fmt::format("achieved vs datasheet ({}), median per op class:\n", f.datasheet);
  t += fmt::format("  {:<26} {:<5} {:>6} {:>14} {:>14} {:>10} {:>10}\n", "op class", "dtype", "points",
                   "achieved TF/s", "datasheet TF/s", "efficiency", "model");
  for (const auto& r : f.table)
    t += fmt::format("  {:<26} {:<5} {:>6} {:>14.1f} {:>14.1f} {:>9.1f}% {:>9.1f}%\n", r.op_class, r.dtype, r.points,
                     r.achieved_flops / 1e12, r.datasheet_flops / 1e12, 100 * r.achieved_flops / r.datasheet_flops,
                     100 * r.predicted_flops / r.datasheet_flops);
  for (const auto& [d, e] : f.params.conv_efficiency)
    t += fmt::format("  conv {:<5}: cuDNN at {:.1f} % of the model's time for the same op (median)\n", to_string(d),
                     100 * e);
  for (const auto& r : f.norm_table) {
    t += fmt::format("  batch norm {} {}: {} points, median {:.2f} TB/s of the step graph's bytes ({:.1f} % of {:.2f} "
                     "TB/s); ",
                     r.layout, r.dtype, r.points, r.achieved_Bps / 1e12, 100 * r.achieved_Bps / r.datasheet_Bps,
                     r.datasheet_Bps / 1e12);
    if (!r.fitted) {
      t += fmt::format("not fitted: the {} fit takes {:.2f} x the measured time (median), max residual {:.0f} %\n",
                       r.layout, r.model_over_measured, 100 * r.max_rel_residual);
      continue;
    }
    t += fmt::format("fitted {:.1f} % of HBM + {:.2f} us", 100 * f.params.norm_fraction.at(r.layout),
                     f.params.norm_latency.at(r.layout).value() * 1e6);
    if (r.layout == "nchw")
      for (const auto& [pass, rate] : f.params.norm_channel_rate)
        t += fmt::format(", {} at most {:.2f} B per SM cycle a channel", pass, rate);
    t += fmt::format(", max residual {:.0f} %\n", 100 * r.max_rel_residual);
  }
  return t;
}

} // namespace mlsim::validate
