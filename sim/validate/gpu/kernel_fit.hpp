// The kernel-model parameters (sim/hardware/kernel_model.hpp) fitted to GPU
// measurements, against the datasheet peaks of the GPU's preset: what share
// of the datasheet real kernels reach, and why.
//
//   GEMM i (aligned dims) of dtype d, on the matrix path (tf32, fp16, bf16) or
//   the vector path (fp32):
//     t_i = L + c_i(R) / f_d + reduction_i
//   c_i(R) = gemm_time at fraction 1 with the preset's tiles and SM count and
//   tile-reuse saturation R (R_matrix, R_vector). For given R the model is
//   linear in L (the launch floor) and 1/f_d: weighted least squares with
//   Eigen (fit_multi, relative errors, so small GEMMs count as much as large
//   ones). R is searched on a log grid from 4 to 512, then refined by golden
//   section, per path, for the least squared relative error; the tile choice
//   is redone with the fitted f (it depends on f through split-k).
//   The tile efficiency reuse(tile) = min(1, tm tn / (tm + tn) / R) follows.
//   HBM: the copy kernel over sizes, t = latency + bytes / (fraction x the
//   datasheet bandwidth) (fit_linear); one size only: the fraction alone.
//   Convolutions (cuDNN): each measured convolution is built as the step graph
//   builds a conv layer's fwd / dgrad / wgrad op and costed as a scenario costs
//   it (cost_device_op: tiles, waves, Winograd, with the fitted figures);
//   conv_efficiency[dtype] = the median of (that time / the measured time) over
//   the algorithms cudnnFind* picked (cudnn.benchmark's; the heuristics' first
//   where a file has no autotuned points), at most 1.
//   Batch norm (cuDNN, training), per layout: t = latency + bytes / rate by
//   relative least squares, bytes as the step graph counts them (3 passes
//   forward, 5 backward, and the scales); rate = fraction x HBM (NHWC) or
//   min(fraction x HBM, C x channel_rate[pass] x boost clock) (NCHW: one
//   channel per CTA) -> norm_fraction, norm_latency, norm_channel_rate
//   (kernel_model.hpp); F and the rates by coordinate descent over grids.
//   Each layout is fitted to the dtype PyTorch trains it in (NHWC fp16,
//   NCHW fp32); fp16 NCHW points (AMP without channels_last) get a row of
//   their own with the NCHW fit's time over theirs, not a fit.
// The table compares, per op class and dtype, the median achieved rate with
// the datasheet peak. Ignores: clocks under power limits (the fit absorbs
// them into f), shapes outside the sweep.
#pragma once

#include "sim/hardware/accelerator.hpp"
#include "sim/validate/gpu/gpu_bench.hpp"

#include <optional>
#include <string>
#include <vector>

namespace mlsim::validate {

struct EfficiencyRow {
  std::string op_class; // gemm | conv fwd | conv bwd_data | conv bwd_filter
  std::string dtype;
  int points = 0;
  double achieved_flops = 0;  // median over the points of FLOPs / measured time
  double datasheet_flops = 0; // the preset's peak on the path the dtype takes
  double predicted_flops = 0; // median of FLOPs / the fitted model's time
};

struct NormRow {
  std::string layout, dtype;
  int points = 0;
  double achieved_Bps = 0;  // median of the step graph's bytes / measured time
  double datasheet_Bps = 0; // HBM bandwidth of the datasheet
  double max_rel_residual = 0;
  double model_over_measured = 1; // median of the layout's fitted time over the measured one
  bool fitted = true;             // false: a dtype the layout's fit was not made from, compared with it
};

// One measured batch norm: the step graph's bytes, its channels, the time, the pass.
struct NormSample {
  double bytes = 0, channels = 0, seconds = 0;
  bool backward = false;
};
// t = latency + bytes / min(fraction x hbm, C x rate[pass] x clock) by relative least squares (clock 0: no
// channel term, the NHWC form); a pass's rate stays 0 where it binds no point. nullopt: fewer than 2 points.
struct NormFit {
  double fraction = 1, latency = 0, rate_fwd = 0, rate_bwd = 0, max_rel_residual = 0;
};
std::optional<NormFit> fit_norm(const std::vector<NormSample>& samples, double hbm, double clock);

struct KernelFit {
  std::string datasheet;    // the preset the fractions are of
  KernelParams params;      // tiles and SM count as the preset; fractions, reuse, memory fitted
  double launch_floor_s = 0;
  int gemm_points = 0;
  double gemm_r2 = 0;              // of the times
  double gemm_max_rel_residual = 0;
  double memory_r2 = 0;
  int memory_points = 0;
  std::vector<EfficiencyRow> table;
  std::vector<NormRow> norm_table;
};

// The accelerator preset whose name's family ("h200", "a100", ...) the device name contains, the one with
// the memory size closest to the measured one; none: no datasheet to fit fractions against.
std::optional<AcceleratorSpec> datasheet_for(const GpuInfo& gpu);

// One measured convolution as a scenario's step graph would cost it on `acc` (its kernels' conv_efficiency and
// `efficiency` included).
Seconds modelled_conv_time(const ConvPoint& c, const AcceleratorSpec& acc);
// The bytes the step graph charges a batch norm of this shape and direction.
double modelled_norm_bytes(const NormPoint& b);

// Throws std::invalid_argument with fewer than 3 aligned GEMMs.
KernelFit fit_kernel_params(const GpuBenchResult& r, const AcceleratorSpec& datasheet);

// The table as text, one row per op class and dtype.
std::string efficiency_table(const KernelFit& fit);

} // namespace mlsim::validate
