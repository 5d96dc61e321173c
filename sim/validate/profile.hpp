// A measured hardware profile: what `mlsim calibrate` found on this host.
//
// The categories (cpu, ram, disk, pcie, accelerator) use the field schema of
// the hardware presets, so a scenario can say `preset: profiles/host.yaml`.
// Stage costs are in core-seconds per sample:
//   cost = (per_sample + per_byte * bytes + per_pixel * pixels (+ per_flop * flops)) (x work_by_source(source))
//          (+ page_fault * fresh_pages(pixels), where the loader's stages map buffers afresh)
// plus per_file once per file opened (the IDX parse). The measurement details
// (fit quality, spreads, GEMM efficiency curves) that have no preset field go
// into a separate `calibration:` section that preset resolution does not read.
#pragma once

#include "sim/hardware/cpu.hpp"
#include "sim/validate/gpu/kernel_fit.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlsim::validate {

struct StageCost {
  double per_sample_s = 0.0, per_byte_s = 0.0, per_pixel_s = 0.0, per_flop_s = 0.0, per_file_s = 0.0;
  double r2 = 0.0;
  int reps = 0;
  double spread = 0.0;               // median relative IQR half-width of the repetitions
  double all_cores_efficiency = 0.0; // single-core cost / per-core cost with every core busy (0: not measured)
  int points = 0;                    // distinct inputs in the fit
  double max_rel_residual = 0.0;     // max |residual| / observed, over the fit's points
  std::string regressor;             // what the size is: "bytes", "pixels", "bytes+pixels", "records", "flops"
  // Where the cost was measured (in_loader_bench.hpp): "isolated" (the stage alone), "loader" (fitted
  // inside the loader loop), "isolated x in_loader_factor" (isolated shape, scaled to the loader).
  std::string context = "isolated";
  double in_loader_factor = 0.0;     // cost inside the loader loop / isolated fit (0: not measured)
  // Pages mapped fresh per sample against the input's pixels or the sample's source image's
  // (fresh_pages.by_source), each costing page_fault_s (the CPU's; the preset fields
  // cpu.stage_costs.<name>.fresh_pages and cpu.page_fault, sim/hardware/cpu.hpp).
  FreshPages fresh_pages;
  double page_fault_s = 0.0;
  // The work (not the faults) scaled by the sample's source image (cpu.work_by_source, sim/hardware/cpu.hpp).
  SourceScale work_by_source;
  // batch: the loader's batch size, for the fresh pages measured per batch (0: the first measured batch);
  // source_pixels: the sample's stored image (< 0: the stage's input is the source).
  double cost_s(double bytes, double pixels, double flops = 0.0, double batch = 0.0,
                double source_pixels = -1.0) const {
    const double source = source_pixels >= 0.0 ? source_pixels : pixels;
    const double work = per_sample_s + per_byte_s * bytes + per_pixel_s * pixels + per_flop_s * flops;
    return work * (source > 0 ? work_by_source.at(source) : 1.0) +
           (fresh_pages.empty() ? 0.0 : page_fault_s * fresh_pages.at_sample(pixels, source, batch));
  }
};

struct CpuProfile {
  std::string model;
  int cores = 1;
  double core_speed = 1.0;            // 1.0 = this machine
  double fp16_emulation_factor = 1.0; // host fp16 elementwise work cost / fp32
  // Per-core speed with every core busy / one core alone, in (0, 1]: the preset field
  // cpu.all_cores_efficiency (sim/hardware/cpu.hpp). 0: not set, derive it from the stage fits.
  double all_cores_efficiency = 0.0;
  double balance_delay_s = 0.0; // cpu.balance_delay, measured (host_bench.hpp); 0: not measured
  // How the balance delay's trials fell (calibration.balance_delay): quantiles and spread over the
  // trials; `capped` trials saw none of our threads move within the hold (on a shared host: another
  // tenant's thread took the core, which the job then also waits out).
  struct DelayStats {
    double median_s = 0.0, p10_s = 0.0, p90_s = 0.0, spread = 0.0;
    int trials = 0, capped = 0;
  } balance_delay;
  // cpu.busy_wake_delay (cpu_scheduler.hpp), measured (host_bench.hpp); 0: not measured. Its trials
  // (calibration.busy_wake_delay): a sleeping thread's oversleep next to a spinning thread on its core,
  // less the median oversleep with that core idle.
  double busy_wake_delay_s = 0.0;
  DelayStats busy_wake_delay;
  // cpu.shared_core_efficiency (sim/hardware/cpu.hpp): for 2, 3 loader threads on one core, their samples
  // per CPU-second over one thread's (shared_core_bench.hpp); `--client pytorch` replaces it with the
  // client's processes (pytorch_calibrate.hpp). Empty: not measured.
  std::vector<double> shared_core_efficiency;
  // cpu.page_fault (sim/hardware/cpu.hpp): one minor page fault, measured by the pytorch client (the price
  // of its stages' fresh_pages). 0: not measured.
  double page_fault_s = 0.0;
  std::map<std::string, StageCost> stage_costs;
};

// The CPU's all-cores efficiency for the preset: the field if set (calibrate sets it from the whole
// loader loop run on every core, in_loader_bench.hpp), else the measured all-cores efficiency of
// jpeg_decode (the loader's dominant stage), else the median over the stages that measured one, else 1
// (one core, or nothing measured); clamped to [0.01, 1] (a figure above 1 is noise).
double cpu_all_cores_efficiency(const CpuProfile& cpu);

struct RamProfile {
  double size_bytes = 0.0;
  double bandwidth_Bps = 0.0; // memcpy: bytes copied per second, one thread
  double bandwidth_all_cores_Bps = 0.0;
  double spread = 0.0;
};

struct DiskProfile {
  std::string measured_path; // the directory whose device was measured
  double sequential_read_Bps = 0.0;
  double random_read_iops = 0.0;
  double latency_s = 0.0; // one cold 4 KiB random read
  double spread = 0.0;
};

struct PcieProfile {
  double bandwidth_Bps = 0.0;  // pinned host->device, fitted 1/slope
  double latency_s = 0.0;      // fitted intercept
  double pageable_factor = 1.0; // pageable bandwidth / pinned bandwidth
  double d2h_bandwidth_Bps = 0.0;
  double r2 = 0.0;
};

// The preset schema describes PCIe as generation x lanes x protocol efficiency
// (sim/hardware/pcie.hpp); a measured bandwidth is written in that form: x16
// lanes of the lowest generation whose x16 rate reaches it, with the efficiency
// that gives the measured figure (clamped to 1 above gen5 x16).
struct PcieSchema {
  int generation = 5, lanes = 16;
  double protocol_efficiency = 1.0;
};
PcieSchema pcie_schema_for(double bandwidth_Bps);

struct GemmCurve { // achieved(s) = peak * s / (s + s_half), s = cube root of m*n*k
  std::string dtype;
  double peak_flops = 0.0;
  double s_half = 0.0;
  double r2 = 0.0;
  double misaligned_factor = 1.0; // achieved at misaligned dims / achieved at the nearest aligned dims
  int points = 0;
};

struct AcceleratorProfile {
  std::string name;
  double memory_bandwidth_Bps = 0.0;
  double memory_size_bytes = 0.0;
  double launch_overhead_s = 0.0;
  double cast_bandwidth_Bps = 0.0; // fp32 -> fp16 cast kernel, bytes read + written per second
  std::vector<GemmCurve> gemm;
  // The kernel model fitted against the GPU's datasheet preset (gpu/kernel_fit.hpp); with it the profile's
  // accelerator holds the datasheet peaks and the fitted `kernels:` (what real kernels reach of them).
  std::optional<KernelFit> kernels;
  std::string kernels_note; // why there is no kernel fit, if so
};

// A loader framework's own costs, measured by a client (`calibrate --client pytorch`): the preset fields
// of pipeline.framework_costs (sim/pipeline/framework_costs.hpp), and how well each fit holds.
struct FitQuality {
  double r2 = 0.0, max_rel_residual = 0.0;
  int points = 0;
};
struct FrameworkCostsProfile {
  std::string framework = "pytorch";
  double receive_per_batch_s = 0.0, receive_per_byte_s = 0.0;
  double worker_per_batch_s = 0.0, worker_per_byte_s = 0.0;
  double worker_fresh_pages_per_byte = 0.0; // the workers' minor faults a batch byte, priced at cpu.page_fault
  double pin_per_byte_s = 0.0;
  double worker_startup_s = 0.0;
  double receive_latency_s = 0.0;
  FitQuality receive_fit, worker_fit, pin_fit, startup_fit, latency_fit;
  std::string pin_note;     // why pin_per_byte was not measured (no CUDA), if it was not
  std::string versions;     // "torch 1.13.0, torchvision 0.14.1, PIL 9.4.0"
  std::string transforms;   // the transforms measured, "; "-separated
  double reference_spin_s = 0.0; // the reference spin around the client's measurements (0: not measured)
  double reference_decode_s = 0.0; // the reference decode (ProfileMeta::reference_decode_image) around them
  double reference_page_fault_s = 0.0; // the reference page fault (reference_page_fault_s()) around them
};

struct ProfileMeta {
  std::string host, cpu_model, gpu = "none", driver = "none", date, mode;
  std::string gpu_note;     // why there is no accelerator section, if there is none
  int repetitions = 0;
  double load_average = 0.0; // 1-minute load average at the start: other tenants of the machine
  double duration_s = 0.0;
  // The reference spin loop (robust_measure.hpp) timed before and after the C++ loader's stage costs
  // were measured, their mean (0: not measured; calibration.reference_spin).
  double reference_spin_s = 0.0;
  // The reference GEMM (reference_gemm_s(kReferenceGemmN)) timed before and after the host GEMM's fit, their
  // mean (0: not measured; calibration.reference_gemm).
  double reference_gemm_s = 0.0;
  // The reference decode (reference_decode_s) of one calibration JPEG, timed before and after the C++
  // loader's stage costs, their mean, and the file's name in the calibration set (0 / empty: not measured;
  // calibration.reference_decode, calibration.reference_decode_image).
  double reference_decode_s = 0.0;
  std::string reference_decode_image;
};

struct Profile {
  ProfileMeta meta;
  bool host_measured = true; // false: only a GPU measured elsewhere (no cpu, ram, disk sections)
  CpuProfile cpu;
  RamProfile ram;
  DiskProfile disk;
  std::optional<PcieProfile> pcie;
  std::optional<AcceleratorProfile> accelerator;
  std::optional<FrameworkCostsProfile> framework_costs;
};

// The YAML text of a profile (the one writer; quantities as strings with units).
std::string profile_to_yaml(const Profile& p);
// Writes the file (parent folders created); throws std::runtime_error on failure.
void write_profile(const Profile& p, const std::string& path);
// Reads the parts of a profile that `validate` needs (cpu, ram, disk, pcie,
// accelerator peaks) through the scenario unit parser; throws InputError.
Profile read_profile(const std::string& path);

} // namespace mlsim::validate
