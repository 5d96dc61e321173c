// The one place that knows the profile's YAML layout (see profile.hpp).
// Follow preset schema changes here.
#include "sim/validate/profile.hpp"

#include "sim/core/base/atomic_file.hpp"
#include "sim/core/run/load/hardware_load.hpp"
#include "sim/hardware/pcie.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <vector>

namespace mlsim::validate {

namespace {
std::string num(double v, const char* unit) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g %s", v, unit);
  return buf;
}
std::string seconds(double s) {
  double a = std::fabs(s);
  if (a >= 1.0 || a == 0.0)
    return num(s, "s");
  if (a >= 1e-3)
    return num(s * 1e3, "ms");
  if (a >= 1e-6)
    return num(s * 1e6, "us");
  return num(s * 1e9, "ns");
}
std::string scaled(double v, const char* const units[], int count) {
  int i = 0;
  while (i + 1 < count && std::fabs(v) >= 1000.0) {
    v /= 1000.0;
    ++i;
  }
  return num(v, units[i]);
}
std::string rate(double Bps) {
  static const char* const u[] = {"B/s", "kB/s", "MB/s", "GB/s", "TB/s"};
  return scaled(Bps, u, 5);
}
std::string bytes(double b) {
  static const char* const u[] = {"B", "kB", "MB", "GB", "TB"};
  return scaled(b, u, 5);
}
std::string flops(double f) {
  static const char* const u[] = {"FLOP/s", "kFLOP/s", "MFLOP/s", "GFLOP/s", "TFLOP/s", "PFLOP/s"};
  return scaled(f, u, 6);
}
double round4(double v) { return v == 0.0 ? 0.0 : std::stod(num(v, "").c_str()); }

// [v1, v2, ...] on one line, each to 4 significant digits.
void number_list(YAML::Emitter& y, const std::vector<double>& values) {
  y << YAML::Flow << YAML::BeginSeq;
  for (double v : values)
    y << round4(v);
  y << YAML::EndSeq;
}

void stage_cost(YAML::Emitter& y, const std::string& name, const StageCost& c) {
  // Only the keys the cpu schema accepts (sim/core/run/load/hardware_load.cpp parse_stage_cost).
  y << YAML::Key << name << YAML::Value << YAML::Flow << YAML::BeginMap;
  y << YAML::Key << "per_sample" << YAML::Value << seconds(c.per_sample_s);
  y << YAML::Key << "per_byte" << YAML::Value << seconds(c.per_byte_s);
  y << YAML::Key << "per_pixel" << YAML::Value << seconds(c.per_pixel_s);
  if (!c.fresh_pages.empty()) {
    const FreshPages& t = c.fresh_pages;
    y << YAML::Key << "fresh_pages" << YAML::Value << YAML::Flow << YAML::BeginMap;
    if (t.by_source)
      y << YAML::Key << "pixels_of" << YAML::Value << "source";
    y << YAML::Key << "pixels" << YAML::Value;
    number_list(y, t.pixels);
    if (!t.batches.empty()) {
      y << YAML::Key << "batches" << YAML::Value;
      number_list(y, t.batches);
    }
    auto table = [&](const FreshPages::Table& rows) { // a row, or with batches a list of rows
      if (t.batches.empty()) {
        number_list(y, rows.front());
        return;
      }
      y << YAML::Flow << YAML::BeginSeq;
      for (const auto& row : rows)
        number_list(y, row);
      y << YAML::EndSeq;
    };
    y << YAML::Key << "pages" << YAML::Value;
    table(t.pages);
    if (!t.launches.empty()) {
      y << YAML::Key << "launches" << YAML::Value << YAML::Flow << YAML::BeginSeq;
      for (const auto& launch : t.launches)
        table(launch);
      y << YAML::EndSeq;
    }
    y << YAML::EndMap;
  }
  if (!c.work_by_source.empty()) {
    y << YAML::Key << "work_by_source" << YAML::Value << YAML::Flow << YAML::BeginMap;
    y << YAML::Key << "pixels" << YAML::Value;
    number_list(y, c.work_by_source.pixels);
    y << YAML::Key << "scale" << YAML::Value;
    number_list(y, c.work_by_source.scale);
    y << YAML::EndMap;
  }
  y << YAML::Key << "r2" << YAML::Value << round4(c.r2);
  y << YAML::Key << "reps" << YAML::Value << c.reps;
  y << YAML::Key << "spread" << YAML::Value << round4(c.spread);
  y << YAML::EndMap;
}
bool is_host_compute(const StageCost& c) { return c.per_flop_s > 0.0; }

// framework_costs.<framework>: the keys of pipeline.framework_costs (sim/pipeline/framework_costs.hpp).
void framework_costs(YAML::Emitter& y, const FrameworkCostsProfile& f) {
  y << YAML::Key << "framework_costs" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << f.framework << YAML::Value << YAML::Flow << YAML::BeginMap;
  y << YAML::Key << "receive_per_batch" << YAML::Value << seconds(f.receive_per_batch_s);
  y << YAML::Key << "receive_per_byte" << YAML::Value << seconds(f.receive_per_byte_s);
  y << YAML::Key << "worker_per_batch" << YAML::Value << seconds(f.worker_per_batch_s);
  y << YAML::Key << "worker_per_byte" << YAML::Value << seconds(f.worker_per_byte_s);
  y << YAML::Key << "worker_fresh_pages_per_byte" << YAML::Value << f.worker_fresh_pages_per_byte;
  y << YAML::Key << "pin_per_byte" << YAML::Value << seconds(f.pin_per_byte_s);
  y << YAML::Key << "worker_startup" << YAML::Value << seconds(f.worker_startup_s);
  y << YAML::Key << "receive_latency" << YAML::Value << seconds(f.receive_latency_s);
  y << YAML::EndMap << YAML::EndMap;
}
void fit_quality(YAML::Emitter& y, const char* key, const FitQuality& q) {
  y << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginMap;
  y << YAML::Key << "r2" << YAML::Value << round4(q.r2);
  y << YAML::Key << "max_rel_residual" << YAML::Value << round4(q.max_rel_residual);
  y << YAML::Key << "points" << YAML::Value << q.points << YAML::EndMap;
}
// calibration.framework_fits.<framework>: how well each fit holds, and what was measured.
void framework_fits(YAML::Emitter& y, const FrameworkCostsProfile& f) {
  y << YAML::Key << "framework_fits" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << f.framework << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "versions" << YAML::Value << f.versions;
  y << YAML::Key << "transforms" << YAML::Value << f.transforms;
  fit_quality(y, "receive", f.receive_fit);
  fit_quality(y, "worker", f.worker_fit);
  fit_quality(y, "pin", f.pin_fit);
  fit_quality(y, "worker_startup", f.startup_fit);
  fit_quality(y, "receive_latency", f.latency_fit);
  if (!f.pin_note.empty())
    y << YAML::Key << "pin_note" << YAML::Value << f.pin_note;
  if (f.reference_spin_s > 0)
    y << YAML::Key << "reference_spin" << YAML::Value << seconds(f.reference_spin_s);
  if (f.reference_decode_s > 0)
    y << YAML::Key << "reference_decode" << YAML::Value << seconds(f.reference_decode_s);
  if (f.reference_page_fault_s > 0)
    y << YAML::Key << "reference_page_fault" << YAML::Value << seconds(f.reference_page_fault_s);
  y << YAML::EndMap << YAML::EndMap;
}
} // namespace

double cpu_all_cores_efficiency(const CpuProfile& cpu) {
  double e = cpu.all_cores_efficiency;
  if (!(e > 0.0)) {
    if (auto d = cpu.stage_costs.find("jpeg_decode"); d != cpu.stage_costs.end() && d->second.all_cores_efficiency > 0)
      e = d->second.all_cores_efficiency;
    else {
      std::vector<double> v;
      for (const auto& [name, c] : cpu.stage_costs)
        if (c.all_cores_efficiency > 0)
          v.push_back(c.all_cores_efficiency);
      std::sort(v.begin(), v.end());
      const size_t n = v.size();
      e = n == 0 ? 1.0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    }
  }
  return std::clamp(e, 0.01, 1.0);
}

PcieSchema pcie_schema_for(double bandwidth_Bps) {
  PcieSchema s;
  if (bandwidth_Bps <= 0.0)
    return s;
  for (int g = 1; g <= 5; ++g) {
    s.generation = g;
    if (pcie_lane_rate(g).value() * s.lanes >= bandwidth_Bps)
      break;
  }
  s.protocol_efficiency = std::clamp(bandwidth_Bps / (pcie_lane_rate(s.generation).value() * s.lanes), 0.05, 1.0);
  return s;
}

// The cpu, ram and disk sections (a host calibrated here).
static void host_sections(YAML::Emitter& y, const Profile& p) {
  y << YAML::Key << "cpu" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "cores" << YAML::Value << p.cpu.cores;
  y << YAML::Key << "core_speed" << YAML::Value << round4(p.cpu.core_speed);
  y << YAML::Key << "fp16_emulation_factor" << YAML::Value << round4(p.cpu.fp16_emulation_factor);
  // How long the kernel leaves a core idle before it moves queued work there (cpu_scheduler.hpp).
  if (p.cpu.balance_delay_s > 0)
    y << YAML::Key << "balance_delay" << YAML::Value << seconds(p.cpu.balance_delay_s);
  // How long a thread waking on a core that another thread runs waits for it (cpu_scheduler.hpp).
  if (p.cpu.busy_wake_delay_s > 0)
    y << YAML::Key << "busy_wake_delay" << YAML::Value << seconds(p.cpu.busy_wake_delay_s);
  // What a core gets done when it switches among 2, 3 loader processes (cpu.hpp).
  if (!p.cpu.shared_core_efficiency.empty()) {
    y << YAML::Key << "shared_core_efficiency" << YAML::Value;
    number_list(y, p.cpu.shared_core_efficiency);
  }
  // One minor page fault: the price of the stages' fresh_pages (cpu.hpp).
  if (p.cpu.page_fault_s > 0)
    y << YAML::Key << "page_fault" << YAML::Value << seconds(p.cpu.page_fault_s);
  // Co-running slowdown (sim/hardware/cpu.hpp); the per-stage figures stay under calibration.stage_fits.
  y << YAML::Key << "all_cores_efficiency" << YAML::Value << round4(cpu_all_cores_efficiency(p.cpu));
  // Host-placed ops run at core_flops on one core: the asymptotic single-thread Eigen GEMM rate.
  if (auto g = p.cpu.stage_costs.find("host_gemm_fp32"); g != p.cpu.stage_costs.end() && g->second.per_flop_s > 0)
    y << YAML::Key << "core_flops" << YAML::Value << flops(1.0 / g->second.per_flop_s);
  y << YAML::Key << "stage_costs" << YAML::Value << YAML::BeginMap;
  for (const auto& [name, c] : p.cpu.stage_costs)
    if (!is_host_compute(c))
      stage_cost(y, name, c);
  y << YAML::EndMap << YAML::EndMap;

  y << YAML::Key << "ram" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "size" << YAML::Value << bytes(p.ram.size_bytes);
  y << YAML::Key << "bandwidth" << YAML::Value << rate(p.ram.bandwidth_Bps);
  y << YAML::EndMap;

  y << YAML::Key << "disk" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "sequential_read" << YAML::Value << rate(p.disk.sequential_read_Bps);
  y << YAML::Key << "random_read_iops" << YAML::Value << std::round(p.disk.random_read_iops);
  y << YAML::Key << "latency" << YAML::Value << seconds(p.disk.latency_s);
  y << YAML::EndMap;

}

// A measured delay's trials (host_bench.hpp), when it was measured.
static void delay_trials(YAML::Emitter& y, const char* key, const CpuProfile::DelayStats& d) {
  if (d.trials <= 0)
    return;
  y << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginMap;
  y << YAML::Key << "median" << YAML::Value << seconds(d.median_s);
  y << YAML::Key << "p10" << YAML::Value << seconds(d.p10_s);
  y << YAML::Key << "p90" << YAML::Value << seconds(d.p90_s);
  y << YAML::Key << "spread" << YAML::Value << round4(d.spread);
  y << YAML::Key << "trials" << YAML::Value << d.trials;
  y << YAML::Key << "capped" << YAML::Value << d.capped << YAML::EndMap;
}

// The host's measurement details under `calibration:` (no preset field holds these).
static void host_calibration(YAML::Emitter& y, const Profile& p) {
  y << YAML::Key << "ram" << YAML::Value << YAML::Flow << YAML::BeginMap;
  y << YAML::Key << "bandwidth_all_cores" << YAML::Value << rate(p.ram.bandwidth_all_cores_Bps);
  y << YAML::Key << "spread" << YAML::Value << round4(p.ram.spread) << YAML::EndMap;
  y << YAML::Key << "disk" << YAML::Value << YAML::Flow << YAML::BeginMap;
  y << YAML::Key << "measured_path" << YAML::Value << p.disk.measured_path;
  y << YAML::Key << "spread" << YAML::Value << round4(p.disk.spread) << YAML::EndMap;
  delay_trials(y, "balance_delay", p.cpu.balance_delay);
  delay_trials(y, "busy_wake_delay", p.cpu.busy_wake_delay);
  y << YAML::Key << "stage_fits" << YAML::Value << YAML::BeginMap;
  for (const auto& [name, c] : p.cpu.stage_costs) {
    y << YAML::Key << name << YAML::Value << YAML::Flow << YAML::BeginMap;
    y << YAML::Key << "regressor" << YAML::Value << c.regressor;
    y << YAML::Key << "points" << YAML::Value << c.points;
    y << YAML::Key << "max_rel_residual" << YAML::Value << round4(c.max_rel_residual);
    y << YAML::Key << "all_cores_efficiency" << YAML::Value << round4(c.all_cores_efficiency);
    y << YAML::Key << "context" << YAML::Value << c.context;
    if (c.in_loader_factor > 0)
      y << YAML::Key << "in_loader_factor" << YAML::Value << round4(c.in_loader_factor);
    if (c.per_file_s > 0)
      y << YAML::Key << "per_file" << YAML::Value << seconds(c.per_file_s);
    y << YAML::EndMap;
  }
  y << YAML::EndMap;
  // Host compute (the CPU consumer of validate): cost = per_call + per_flop * FLOP, one core.
  y << YAML::Key << "host_compute" << YAML::Value << YAML::BeginMap;
  for (const auto& [name, c] : p.cpu.stage_costs)
    if (is_host_compute(c)) {
      y << YAML::Key << name << YAML::Value << YAML::Flow << YAML::BeginMap;
      y << YAML::Key << "per_call" << YAML::Value << seconds(c.per_sample_s);
      y << YAML::Key << "per_flop" << YAML::Value << seconds(c.per_flop_s);
      y << YAML::Key << "rate" << YAML::Value << flops(1.0 / c.per_flop_s);
      y << YAML::Key << "r2" << YAML::Value << round4(c.r2);
      y << YAML::Key << "reps" << YAML::Value << c.reps;
      y << YAML::Key << "spread" << YAML::Value << round4(c.spread);
      y << YAML::EndMap;
    }
  y << YAML::EndMap;
}

// The accelerator section of a GPU whose kernel model was fitted: the datasheet peaks (the bound) and the
// fitted `kernels:` (what kernels reach of them), which override the preset's when a scenario uses the profile.
static void accelerator_with_kernels(YAML::Emitter& y, const AcceleratorProfile& a) {
  const KernelFit& k = *a.kernels;
  const AcceleratorSpec ds = accelerator_preset(k.datasheet);
  auto dtype_map = [&](const char* key, const std::map<DType, FlopsPerSec>& peaks) {
    y << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginMap;
    for (const auto& [d, v] : peaks)
      y << YAML::Key << to_string(d) << YAML::Value << flops(v.value());
    y << YAML::EndMap;
  };
  auto fractions = [&](const char* key, const std::map<DType, double>& f) {
    y << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginMap;
    for (const auto& [d, v] : f)
      y << YAML::Key << to_string(d) << YAML::Value << round4(v);
    y << YAML::EndMap;
  };
  auto tiles = [&](const char* key, const std::vector<std::pair<int, int>>& t) {
    y << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (const auto& [m, n] : t)
      y << YAML::Flow << YAML::BeginSeq << m << n << YAML::EndSeq;
    y << YAML::EndSeq;
  };
  y << YAML::Key << "accelerator" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "name" << YAML::Value << a.name;
  y << YAML::Key << "source" << YAML::Value << ("peaks: the " + k.datasheet + " datasheet; kernels: " + k.params.source);
  dtype_map("matrix_peak", ds.matrix_peak);
  dtype_map("vector_peak", ds.vector_peak);
  y << YAML::Key << "fast_path_alignment" << YAML::Value << ds.fast_path_alignment;
  y << YAML::Key << "memory_bandwidth" << YAML::Value << rate(ds.memory_bandwidth.value());
  y << YAML::Key << "memory_size" << YAML::Value << bytes(a.memory_size_bytes);
  y << YAML::Key << "launch_overhead" << YAML::Value << seconds(k.launch_floor_s);
  if (ds.boost_clock.value() > 0) // the datasheet's, as the peaks: instruction-bound kernels scale with it
    y << YAML::Key << "boost_clock" << YAML::Value << fmt::format("{:.0f} MHz", ds.boost_clock.value() / 1e6);
  const KernelParams& p = k.params;
  y << YAML::Key << "kernels" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "source" << YAML::Value << p.source;
  y << YAML::Key << "sm_count" << YAML::Value << p.sm_count;
  tiles("matrix_tiles", p.matrix_tiles);
  tiles("vector_tiles", p.vector_tiles);
  y << YAML::Key << "saturating_reuse" << YAML::Value << round4(p.saturating_reuse);
  y << YAML::Key << "vector_saturating_reuse" << YAML::Value << round4(p.vector_saturating_reuse);
  fractions("matrix_fraction", p.matrix_fraction);
  fractions("vector_fraction", p.vector_fraction);
  y << YAML::Key << "memory_fraction" << YAML::Value << round4(p.memory_fraction);
  y << YAML::Key << "memory_latency" << YAML::Value << seconds(p.memory_latency.value());
  if (!p.norm_fraction.empty()) {
    y << YAML::Key << "norm_fraction" << YAML::Value << YAML::Flow << YAML::BeginMap;
    for (const auto& [layout, v] : p.norm_fraction)
      y << YAML::Key << layout << YAML::Value << round4(v);
    y << YAML::EndMap << YAML::Key << "norm_latency" << YAML::Value << YAML::Flow << YAML::BeginMap;
    for (const auto& [layout, v] : p.norm_latency)
      y << YAML::Key << layout << YAML::Value << seconds(v.value());
    y << YAML::EndMap;
  }
  if (!p.norm_channel_rate.empty()) { // bytes per SM cycle a channel's CTA moves (NCHW)
    y << YAML::Key << "norm_channel_rate" << YAML::Value << YAML::Flow << YAML::BeginMap;
    for (const auto& [pass, v] : p.norm_channel_rate)
      y << YAML::Key << pass << YAML::Value << round4(v);
    y << YAML::EndMap;
  }
  if (!p.conv_efficiency.empty())
    fractions("conv_efficiency", p.conv_efficiency);
  if (p.attention_fraction > 0) // the preset's, carried: calibrate --gpu does not measure attention kernels
    y << YAML::Key << "attention_fraction" << YAML::Value << round4(p.attention_fraction);
  y << YAML::EndMap;
  y << YAML::EndMap;
}

std::string profile_to_yaml(const Profile& p) {
  YAML::Emitter y;
  y.SetDoublePrecision(4);
  y << YAML::Comment("mlsim hardware profile measured by `mlsim calibrate`; same schema as sim/hardware/presets");
  y << YAML::BeginMap;

  if (p.host_measured)
    host_sections(y, p);

  if (p.pcie) { // the preset schema (generation, lanes, efficiency); the measured figures go under calibration
    const PcieSchema s = pcie_schema_for(p.pcie->bandwidth_Bps);
    y << YAML::Key << "pcie" << YAML::Value << YAML::BeginMap;
    y << YAML::Key << "generation" << YAML::Value << s.generation;
    y << YAML::Key << "lanes" << YAML::Value << s.lanes;
    y << YAML::Key << "protocol_efficiency" << YAML::Value << round4(s.protocol_efficiency);
    y << YAML::Key << "latency" << YAML::Value << seconds(p.pcie->latency_s);
    y << YAML::EndMap;
  }
  if (p.accelerator && p.accelerator->kernels) {
    accelerator_with_kernels(y, *p.accelerator);
  } else if (p.accelerator) {
    const auto& a = *p.accelerator;
    y << YAML::Key << "accelerator" << YAML::Value << YAML::BeginMap;
    y << YAML::Key << "name" << YAML::Value << a.name;
    y << YAML::Key << "vector_peak" << YAML::Value << YAML::BeginMap;
    for (const auto& g : a.gemm)
      if (g.dtype == "fp32")
        y << YAML::Key << "fp32" << YAML::Value << flops(g.peak_flops);
    y << YAML::EndMap;
    y << YAML::Key << "matrix_peak" << YAML::Value << YAML::BeginMap;
    for (const auto& g : a.gemm)
      if (g.dtype != "fp32")
        y << YAML::Key << g.dtype << YAML::Value << flops(g.peak_flops);
    y << YAML::EndMap;
    y << YAML::Key << "fast_path_alignment" << YAML::Value << 8;
    y << YAML::Key << "memory_bandwidth" << YAML::Value << rate(a.memory_bandwidth_Bps);
    y << YAML::Key << "memory_size" << YAML::Value << bytes(a.memory_size_bytes);
    y << YAML::Key << "launch_overhead" << YAML::Value << seconds(a.launch_overhead_s);
    y << YAML::EndMap;
  }

  if (p.framework_costs)
    framework_costs(y, *p.framework_costs);
  // Measurement metadata and fit details: no preset field holds these.
  const auto& m = p.meta;
  y << YAML::Key << "calibration" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "host" << YAML::Value << m.host;
  y << YAML::Key << "cpu_model" << YAML::Value << m.cpu_model;
  y << YAML::Key << "gpu" << YAML::Value << m.gpu;
  if (!m.gpu_note.empty())
    y << YAML::Key << "gpu_note" << YAML::Value << m.gpu_note;
  y << YAML::Key << "driver" << YAML::Value << m.driver;
  y << YAML::Key << "date" << YAML::Value << m.date;
  y << YAML::Key << "mode" << YAML::Value << m.mode;
  y << YAML::Key << "repetitions" << YAML::Value << m.repetitions;
  y << YAML::Key << "load_average" << YAML::Value << round4(m.load_average);
  y << YAML::Key << "duration" << YAML::Value << seconds(m.duration_s);
  if (m.reference_spin_s > 0)
    y << YAML::Key << "reference_spin" << YAML::Value << seconds(m.reference_spin_s);
  if (m.reference_gemm_s > 0)
    y << YAML::Key << "reference_gemm" << YAML::Value << seconds(m.reference_gemm_s);
  if (m.reference_decode_s > 0) {
    y << YAML::Key << "reference_decode" << YAML::Value << seconds(m.reference_decode_s);
    y << YAML::Key << "reference_decode_image" << YAML::Value << m.reference_decode_image;
  }
  if (p.host_measured)
    host_calibration(y, p);
  if (p.framework_costs)
    framework_fits(y, *p.framework_costs);
  if (p.pcie) {
    y << YAML::Key << "pcie" << YAML::Value << YAML::Flow << YAML::BeginMap;
    y << YAML::Key << "bandwidth" << YAML::Value << rate(p.pcie->bandwidth_Bps);
    y << YAML::Key << "pageable_factor" << YAML::Value << round4(p.pcie->pageable_factor);
    y << YAML::Key << "d2h_bandwidth" << YAML::Value << rate(p.pcie->d2h_bandwidth_Bps);
    y << YAML::Key << "r2" << YAML::Value << round4(p.pcie->r2) << YAML::EndMap;
  }
  if (p.accelerator) {
    y << YAML::Key << "cast_bandwidth" << YAML::Value << rate(p.accelerator->cast_bandwidth_Bps);
    y << YAML::Key << "gemm_curves" << YAML::Value << YAML::BeginMap;
    for (const auto& g : p.accelerator->gemm) {
      y << YAML::Key << g.dtype << YAML::Value << YAML::Flow << YAML::BeginMap;
      y << YAML::Key << "peak" << YAML::Value << flops(g.peak_flops);
      y << YAML::Key << "s_half" << YAML::Value << round4(g.s_half);
      y << YAML::Key << "r2" << YAML::Value << round4(g.r2);
      y << YAML::Key << "misaligned_factor" << YAML::Value << round4(g.misaligned_factor);
      y << YAML::Key << "points" << YAML::Value << g.points;
      y << YAML::EndMap;
    }
    y << YAML::EndMap;
    if (const auto& k = p.accelerator->kernels) {
      y << YAML::Key << "kernel_fit" << YAML::Value << YAML::BeginMap;
      y << YAML::Key << "datasheet" << YAML::Value << k->datasheet;
      y << YAML::Key << "gemm_points" << YAML::Value << k->gemm_points;
      y << YAML::Key << "gemm_r2" << YAML::Value << round4(k->gemm_r2);
      y << YAML::Key << "gemm_max_rel_residual" << YAML::Value << round4(k->gemm_max_rel_residual);
      y << YAML::Key << "memory_points" << YAML::Value << k->memory_points;
      y << YAML::Key << "memory_r2" << YAML::Value << round4(k->memory_r2);
      y << YAML::Key << "efficiency" << YAML::Value << YAML::BeginSeq;
      for (const auto& r : k->table) {
        y << YAML::Flow << YAML::BeginMap;
        y << YAML::Key << "op" << YAML::Value << r.op_class << YAML::Key << "dtype" << YAML::Value << r.dtype;
        y << YAML::Key << "points" << YAML::Value << r.points;
        y << YAML::Key << "achieved" << YAML::Value << flops(r.achieved_flops);
        y << YAML::Key << "datasheet" << YAML::Value << flops(r.datasheet_flops);
        y << YAML::Key << "model" << YAML::Value << flops(r.predicted_flops);
        y << YAML::EndMap;
      }
      for (const auto& r : k->norm_table) {
        y << YAML::Flow << YAML::BeginMap;
        y << YAML::Key << "op" << YAML::Value << "batch norm " + r.layout << YAML::Key << "dtype" << YAML::Value
          << r.dtype;
        y << YAML::Key << "points" << YAML::Value << r.points;
        y << YAML::Key << "achieved" << YAML::Value << rate(r.achieved_Bps);
        y << YAML::Key << "datasheet" << YAML::Value << rate(r.datasheet_Bps);
        y << YAML::Key << "max_residual" << YAML::Value << round4(r.max_rel_residual);
        if (!r.fitted) // a dtype the layout's fit was not made from: how far that fit is from it
          y << YAML::Key << "fitted" << YAML::Value << false << YAML::Key << "model_over_measured" << YAML::Value
            << round4(r.model_over_measured);
        y << YAML::EndMap;
      }
      y << YAML::EndSeq << YAML::EndMap;
    } else if (!p.accelerator->kernels_note.empty()) {
      y << YAML::Key << "kernel_fit" << YAML::Value << p.accelerator->kernels_note;
    }
  }
  y << YAML::EndMap;

  y << YAML::EndMap;
  return std::string(y.c_str()) + "\n";
}

void write_profile(const Profile& p, const std::string& path) {
  const std::string text = profile_to_yaml(p);
  std::filesystem::path fp(path);
  if (fp.has_parent_path())
    std::filesystem::create_directories(fp.parent_path());
  write_file_atomically(path, text); // never a partial profile
}

} // namespace mlsim::validate
