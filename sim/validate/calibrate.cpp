#include "sim/validate/calibrate.hpp"

#include "sim/core/base/errors.hpp"
#include "sim/validate/calib_dataset.hpp"
#include "sim/validate/file_io.hpp"
#include "sim/validate/gpu/gpu_bench.hpp"
#include "sim/validate/gpu/gpu_results_json.hpp"
#include "sim/validate/gpu_profile.hpp"
#include "sim/validate/host_bench.hpp"
#include "sim/validate/in_loader_bench.hpp"
#include "sim/validate/robust_measure.hpp"
#include "sim/validate/shared_core_bench.hpp"
#include "sim/validate/stage_bench.hpp"
#include "sim/validate/stats.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

namespace mlsim::validate {

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0)
      if (auto colon = line.find(':'); colon != std::string::npos)
        return line.substr(line.find_first_not_of(" \t", colon + 1));
  return "unknown CPU";
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0 || !buf[0])
    return "localhost";
  return buf;
}

namespace {
std::string utc_now() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}
double load_average() {
  double l = 0.0;
  std::ifstream("/proc/loadavg") >> l;
  return l;
}
std::string ns(double s) { return fmt::format("{:8.3g}", s * 1e9); }

// A typical ImageNet-like sample: 500x375 JPEG of ~110 kB in, 224x224 out (the last column's assumption).
constexpr double kTypicalFileBytes = 110e3;

void print_stages(const Profile& p, std::ostream& log) {
  fmt::print(log, "  {:<20} {:>9} {:>9} {:>9} {:>9} {:>7} {:>6} {:>9} {:>7} {:>12}\n", "stage (core-s/sample)",
             "per_smpl", "per_B", "per_px", "per_file", "R^2", "spread", "all-core", "loader", "@500x375");
  fmt::print(log, "  {:<20} {:>9} {:>9} {:>9} {:>9} {:>7} {:>6} {:>9} {:>7} {:>12}\n", "", "ns", "ns", "ns", "ns", "",
             "", "effic.", "/isol.", "us/sample");
  for (const auto& [name, c] : p.cpu.stage_costs) {
    double bytes = kTypicalFileBytes, px = 500.0 * 375.0;
    if (name == "flip" || name == "normalize_fp32" || name == "to_fp16")
      px = 224.0 * 224.0;
    if (name == "collate")
      bytes = 224.0 * 224 * 3 * 4;
    // A 500x375 file's sample: also the source image a per-source work scale is read at.
    double typical = name == "host_gemm_fp32" || name == "idx_gzip_parse" ? 0.0 : c.cost_s(bytes, px, 0.0, 0.0, 500.0 * 375.0);
    fmt::print(log, "  {:<20} {:>9} {:>9} {:>9} {:>9} {:>7.4f} {:>6.3f} {:>9.2f} {:>7} {:>12}\n", name,
               ns(c.per_sample_s), ns(c.per_byte_s), ns(c.per_pixel_s), ns(c.per_file_s), c.r2, c.spread,
               c.all_cores_efficiency, c.in_loader_factor > 0 ? fmt::format("{:.2f}", c.in_loader_factor) : "-",
               typical > 0 ? fmt::format("{:.1f}", typical * 1e6) : "-");
  }
  fmt::print(log, "  @500x375 assumes a {:.0f} kB JPEG of 500x375 px in (flip, normalize_fp32, to_fp16: 224x224 px; "
                  "collate: a 224x224x3 fp32 sample); per-byte costs scale with your files' size\n",
             kTypicalFileBytes / 1e3);
}

// The accelerator and PCIe sections from GPU measurements, and what they say.
void add_gpu(Profile& p, const GpuBenchResult& r, std::ostream& log) {
  p.meta.gpu = r.info.name;
  p.meta.driver = r.info.driver;
  p.accelerator = fit_accelerator(r);
  p.pcie = fit_pcie(r);
  fmt::print(log, "  GPU {} ({}): HBM copy {:.0f} GB/s, cast fp32->fp16 {:.0f} GB/s, launch {:.2f} us\n", r.info.name,
             r.info.driver, r.hbm_Bps / 1e9, r.cast_f32_f16_Bps / 1e9, r.launch_overhead_s * 1e6);
  for (const auto& c : p.accelerator->gemm)
    fmt::print(log, "    GEMM {}: peak {:.1f} TFLOP/s, half-efficiency size {:.0f}, R^2 {:.3f}, misaligned x{:.2f}\n",
               c.dtype, c.peak_flops / 1e12, c.s_half, c.r2, c.misaligned_factor);
  fmt::print(log, "    PCIe H2D pinned {:.1f} GB/s + {:.1f} us, pageable factor {:.2f}, D2H {:.1f} GB/s\n",
             p.pcie->bandwidth_Bps / 1e9, p.pcie->latency_s * 1e6, p.pcie->pageable_factor,
             p.pcie->d2h_bandwidth_Bps / 1e9);
  if (!r.conv_note.empty())
    fmt::print(log, "    convolutions: {}\n", r.conv_note);
  if (!r.norm_note.empty())
    fmt::print(log, "    batch norms: {}\n", r.norm_note);
  if (const auto& k = p.accelerator->kernels) {
    fmt::print(log, "    kernel model vs the {} datasheet: launch floor {:.2f} us, reuse saturation {:.0f} (matrix) / "
                    "{:.0f} (vector), HBM {:.1f} % + {:.2f} us, {} GEMMs R^2 {:.4f} (max residual {:.1f} %)\n",
               k->datasheet, k->launch_floor_s * 1e6, k->params.saturating_reuse, k->params.vector_saturating_reuse,
               100 * k->params.memory_fraction, k->params.memory_latency.value() * 1e6, k->gemm_points, k->gemm_r2,
               100 * k->gemm_max_rel_residual);
    fmt::print(log, "{}", efficiency_table(*k));
  } else {
    fmt::print(log, "    kernel model: not fitted ({})\n", p.accelerator->kernels_note);
  }
}
} // namespace

Profile run_calibration(const CalibrateOptions& opt, std::ostream& log) {
  const double t_start = now_s();
  Profile p;
  p.meta.host = host_name();
  p.meta.cpu_model = cpu_model_name();
  p.meta.date = utc_now();
  p.meta.mode = opt.quick ? "quick" : "full";
  p.meta.load_average = load_average();
  const int reps = opt.reps > 0 ? opt.reps : (opt.quick ? 3 : 7);
  p.meta.repetitions = reps;
  p.cpu.model = p.meta.cpu_model;
  p.cpu.cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));

  GpuInfo gpu;
  if (opt.gpu != GpuMode::off) {
    gpu = probe_gpu();
    if (!gpu.available && opt.gpu == GpuMode::required)
      throw std::runtime_error("--gpu required, but " + gpu.reason);
  }
  fmt::print(log, "mlsim calibrate ({} mode): host {}, {}, {} cores, load average {:.2f}, {} repetitions\n",
             p.meta.mode, p.meta.host, p.meta.cpu_model, p.cpu.cores, p.meta.load_average, reps);
  if (p.meta.load_average > 0.5)
    fmt::print(log, "  note: the machine is busy (load {:.2f}); expect noisy figures, see the spreads\n",
               p.meta.load_average);

  double t0 = now_s();
  CalibSetOptions set_opt{opt.quick, opt.cache_dir};
  std::vector<CalibImage> images = build_calib_set(set_opt);
  const std::string cache = opt.cache_dir.empty() ? default_cache_dir() : opt.cache_dir;
  fmt::print(log, "  calibration set: {} JPEGs from mate-backgrounds in {} ({:.1f} s)\n", images.size(), cache,
             now_s() - t0);

  // The stages' own reference: one calibration JPEG's decode, timed around the stage costs as the spin is.
  const DecodeReference decode(images);
  const double decode_before = decode.time_s();
  const double ref_before = reference_spin_s(); // the cores' speed while the stage costs are measured
  StageBenchOptions sb{reps, p.cpu.cores};
  p.cpu.stage_costs = measure_loader_stages(images, sb, opt.quick);
  InLoaderOptions il;
  il.reps = reps;
  il.cores = p.cpu.cores;
  const InLoaderResult in_loader = measure_in_loader(images, p.cpu.stage_costs, il);
  apply_in_loader(p.cpu.stage_costs, in_loader);
  const double ref_after = reference_spin_s();
  p.meta.reference_spin_s = 0.5 * (ref_before + ref_after);
  if (!decode.image.empty()) {
    const double decode_after = decode.time_s();
    p.meta.reference_decode_s = 0.5 * (decode_before + decode_after);
    p.meta.reference_decode_image = decode.image;
    fmt::print(log, "  reference decode of {} (the stages' speed, validate scales their predictions by it): {:.3f} ms "
                    "before the stage costs, {:.3f} ms after\n",
               p.meta.reference_decode_image, 1e3 * decode_before, 1e3 * decode_after);
  }
  fmt::print(log, "  reference spin (the cores' speed, validate scales its predictions by it): {:.3f} ms before the "
                  "stage costs, {:.3f} ms after\n",
             1e3 * ref_before, 1e3 * ref_after);
  if (in_loader.loop_all_cores_efficiency > 0)
    p.cpu.all_cores_efficiency = in_loader.loop_all_cores_efficiency;
  fmt::print(log, "  in-loader costs ({:.1f} s; the loader loop, batches of {}): in loader / isolated:", in_loader.seconds,
             il.batch);
  for (const auto& [name, f] : in_loader.factor)
    fmt::print(log, " {} {:.2f}", name, f);
  fmt::print(log, "\n");
  const double gemm_before = reference_gemm_s(kReferenceGemmN); // the consumer's speed, as the spin is the stages'
  p.cpu.stage_costs["host_gemm_fp32"] = measure_host_gemm(reps, p.cpu.cores, opt.quick);
  const double gemm_after = reference_gemm_s(kReferenceGemmN);
  p.meta.reference_gemm_s = 0.5 * (gemm_before + gemm_after);
  fmt::print(log, "  reference GEMM {}^3 (the host GEMM consumer's speed, validate scales it by it): {:.3f} ms before "
                  "the host GEMM fit, {:.3f} ms after\n",
             kReferenceGemmN, 1e3 * gemm_before, 1e3 * gemm_after);
  p.cpu.fp16_emulation_factor = measure_fp16_emulation_factor(reps);
  if (!p.cpu.stage_costs.count("idx_gzip_parse"))
    fmt::print(log, "  Fashion-MNIST not installed (package dataset-fashion-mnist): idx_gzip_parse skipped\n");
  p.cpu.all_cores_efficiency = cpu_all_cores_efficiency(p.cpu);
  print_stages(p, log);
  fmt::print(log, "  all-cores efficiency for the preset (co-running slowdown): {:.3f} ({})\n",
             p.cpu.all_cores_efficiency,
             in_loader.loop_all_cores_efficiency > 0 ? fmt::format("the loader loop on {} cores: {:.3f}", p.cpu.cores,
                                                                   in_loader.loop_all_cores_efficiency)
                                                     : std::string("one core"));
  const auto& g = p.cpu.stage_costs["host_gemm_fp32"];
  fmt::print(log, "  host GEMM (Eigen, fp32, 1 thread): {:.2f} GFLOP/s asymptotic; fp16 emulation factor {:.1f}x\n",
             g.per_flop_s > 0 ? 1e-9 / g.per_flop_s : 0.0, p.cpu.fp16_emulation_factor);

  if (const auto b = measure_balance_delay(opt.quick ? 15 : 40, p.cpu.cores); b.trials > 0) {
    p.cpu.balance_delay = b;
    p.cpu.balance_delay_s = b.median_s;
    fmt::print(log, "  balance delay (a queued thread reaches a core that went idle): median {:.2f} ms (p10 {:.2f}, "
                    "p90 {:.2f}, spread {:.2f}) over {} trials, {} capped at 40 ms{}\n",
               b.median_s * 1e3, b.p10_s * 1e3, b.p90_s * 1e3, b.spread, b.trials, b.capped,
               2 * b.capped > b.trials ? " (most: other tenants kept the idle core busy; the median is the cap)" : "");
  }
  if (const auto w = measure_busy_wake_delay(opt.quick ? 40 : 200); w.trials > 0) {
    p.cpu.busy_wake_delay = w;
    p.cpu.busy_wake_delay_s = w.median_s;
    fmt::print(log, "  busy wake delay (a waking thread waits for a core another thread runs): median {:.2f} ms "
                    "(p10 {:.2f}, p90 {:.2f}, spread {:.2f}) over {} trials\n",
               w.median_s * 1e3, w.p10_s * 1e3, w.p90_s * 1e3, w.spread, w.trials);
  }
  const SharedCoreRates shared = measure_shared_core(images, opt.quick ? 0.3 : 2.0);
  p.cpu.shared_core_efficiency = fit_shared_core(shared);
  fmt::print(log, "  shared core (loader threads on one core, samples per CPU-second over one thread's): {}\n",
             describe_shared_core(p.cpu.shared_core_efficiency, "threads"));
  p.ram = measure_ram(reps, p.cpu.cores);
  fmt::print(log, "  ram: {:.1f} GB, memcpy {:.2f} GB/s (1 thread), {:.2f} GB/s ({} threads)\n", p.ram.size_bytes / 1e9,
             p.ram.bandwidth_Bps / 1e9, p.ram.bandwidth_all_cores_Bps / 1e9, p.cpu.cores);
  if (opt.include_disk) {
    p.disk = measure_disk(cache, std::max(2, reps / 2), opt.quick);
    fmt::print(log, "  disk ({}): sequential {:.0f} MB/s, random 4 KiB {:.0f} IOPS ({:.1f} us per read)\n", cache,
               p.disk.sequential_read_Bps / 1e6, p.disk.random_read_iops, p.disk.latency_s * 1e6);
  }

  if (opt.gpu == GpuMode::off) {
    p.meta.gpu_note = "GPU measurements turned off (--gpu off)";
    fmt::print(log, "  GPU: skipped (--gpu off)\n");
  } else if (!gpu.available) {
    p.meta.gpu_note = gpu.reason;
    fmt::print(log, "  GPU: none ({}); CPU profile only\n", gpu.reason);
  } else {
    add_gpu(p, run_gpu_bench(reps, opt.quick), log);
  }
  p.meta.duration_s = now_s() - t_start;
  return p;
}

Profile profile_from_gpu_results(const std::string& path, std::ostream& log) {
  const GpuBenchResult r = read_gpu_results_json(path);
  Profile p;
  p.host_measured = false;
  p.meta.host = "(GPU measured elsewhere: " + path + ")";
  p.meta.date = utc_now();
  p.meta.mode = "gpu-results";
  p.meta.repetitions = r.reps;
  fmt::print(log, "mlsim calibrate: GPU measurements from {} ({} repetitions)\n", path, r.reps);
  add_gpu(p, r, log);
  if (p.accelerator->gemm.empty())
    throw InputError(path, "gemm", "GEMM timings of at least one dtype at aligned sizes", "none");
  return p;
}

} // namespace mlsim::validate
