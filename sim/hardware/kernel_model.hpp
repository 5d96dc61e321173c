// What GPU kernels achieve of the datasheet peak, from their causes.
//
// GEMM and implicit-GEMM convolution (m x n output, k deep), as cuBLAS/cuDNN
// run them: the output is cut into CTA tiles tm x tn; `slots` tiles run at
// once per SM (a tile of area A leaves room for largest_area / A of them);
// tiles run in waves over the SMs; each wave costs as much as a full one.
//   tiles   = ceil(m / tm) * ceil(n / tn) * split_k
//   waves   = ceil(tiles / (sm_count * slots))
//   t       = waves * slots * 2 * tm * tn * ceil(k / split_k)
//             / (peak / sm_count * fraction(path, dtype) * reuse(tile))
//             + split_k > 1 ? split_k * m * n * 4 bytes / memory rate : 0
//   reuse   = min(1, (tm*tn/(tm+tn)) / saturating_reuse(path)): a small tile
//             reads more operand bytes per FLOP and starves the math units.
//             The saturating reuse is the SM's multiply-add rate over the
//             operand elements L2 delivers per SM: on a V100 (L2 ~2.1 TB/s,
//             Jia et al. 2018) ~58 for fp16 tensor cores and ~15 for fp32 FMA,
//             hence the defaults 64 (a 128x128 tile) and 16 (a 32x32 tile).
// The kernel library picks the tile and split-k that minimise t (cuBLAS
// heuristics do the same from the same tile list). Partial tiles (the
// ceil) and partial waves are the quantisation losses; `fraction` is what a
// large, square, full-wave GEMM reaches (published kernel benchmarks).
// Memory-bound kernels: t = memory_latency + bytes / (fraction_mem * HBM peak),
// so a small kernel sees less than the asymptotic bandwidth.
// cuDNN batch normalisation (training), where a profile fitted it per layout:
//   t = norm_latency[layout] + bytes / rate
//   NHWC (persistent kernels tile batch x positions): rate = norm_fraction x HBM;
//   NCHW (one CTA reduces one channel: cuDNN's bn_*_1C11_* kernels):
//     rate = min(norm_fraction x HBM, C x channel_rate[pass] x SM clock),
//   channel_rate being the bytes one channel's CTA moves per SM cycle,
//   forward or backward. A CTA streams its channel with the loads it keeps in
//   flight, so its rate is bytes in flight over the DRAM latency (Little's
//   law): a property of the kernel, in cycles, not a share of the chip's HBM.
//   A layer with fewer channels than the chip needs to fill its HBM (C x rate
//   < the cap: 64 channels on an H200) runs at the channels' rate. On an
//   H200, 64-channel layers ran at ~1.3 TB/s forward and ~0.9 backward against
//   ~3 TB/s for 256 and more. `bytes` are the step graph's (3 passes forward,
//   5 backward), so the fitted figures also absorb what the kernels keep on chip.
//   Ignores: the dtype (measured in fp32; an fp16 NCHW kernel loading half the
//   bytes a thread may move fewer bytes a cycle, so it is the optimistic end).
// cuDNN convolutions run at conv_efficiency[dtype] of this model's time for
// the same implicit GEMM (or Winograd): fitted to the algorithms cudnnFind*
// picks (cudnn.benchmark), 1 where not measured.
// Winograd convolution F(m x m, 3x3) (Lavin & Gray, "Fast Algorithms for
// Convolutional Neural Networks", CVPR 2016), which cuDNN offers for 3x3
// stride-1 convolutions (CUDNN_CONVOLUTION_{FWD,BWD_DATA}_ALGO_WINOGRAD and
// _WINOGRAD_NONFUSED, BWD_FILTER_ALGO_WINOGRAD_NONFUSED; cuDNN API reference):
// the output is cut into T = batch x ceil(H/m) x ceil(W/m) tiles; each tile's
// a = (m+2)^2 transformed points are a batch of a GEMMs T x C_out x C_in, so
// the multiplies drop by 9 m^2 / a (2.25 for m = 2, 4 for m = 4).
//   fused (m = 2; forward and data gradient): transforms in shared memory,
//     t = max(gemm(a T, C_out, C_in), memory of the direct kernel)
//   non-fused (m = 2 or 4; also the weight gradient): three kernels through HBM,
//     t = mem(x + U) + max(gemm, mem(U + M)) + mem(M + y),
//     U = a T C_in, M = a T C_out transformed elements (fp32)
// The GEMMs run as the vector path's tiles at its fraction (they are batched
// SGEMMs). Ignores the transforms' arithmetic and the filter transform.
// References: NVIDIA, "Matrix Multiplication Background User's Guide"
// (tile and wave quantisation, typical cuBLAS tiles); Williams et al.,
// "Roofline", CACM 52(4), 2009. Ignores: L2 reuse across tiles, clocks under
// power limits, stream-K scheduling, epilogue cost, per-layout differences.
#pragma once

#include "sim/core/base/units.hpp"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mlsim {

enum class DType;

struct KernelParams {
  int sm_count = 0;                                 // 0: no tile model (the plain roofline)
  std::vector<std::pair<int, int>> matrix_tiles;    // tm x tn the library has for the matrix path
  std::vector<std::pair<int, int>> vector_tiles;    // ... and for GEMMs on the vector path
  double saturating_reuse = 64.0;                   // tm*tn/(tm+tn) from which a tile feeds the matrix path
  double vector_saturating_reuse = 16.0;            // ... and the vector path (CUDA-core FMA)
  std::map<DType, double> matrix_fraction;          // of the matrix peak, large full-wave GEMM
  std::map<DType, double> vector_fraction;          // of the vector peak (SGEMM, CUDA-core kernels)
  double memory_fraction = 1.0;                     // of HBM bandwidth, large streaming kernel
  Seconds memory_latency{0.0};                      // first-byte latency of a memory-bound kernel
  std::map<std::string, double> norm_fraction;      // "nhwc" / "nchw": cuDNN batch norm's fraction of HBM
  std::map<std::string, Seconds> norm_latency;      // ... and its latency; absent: a plain memory-bound kernel
  std::map<std::string, double> norm_channel_rate;  // "fwd" / "bwd": NCHW batch norm, bytes per SM cycle a channel
  std::map<DType, double> conv_efficiency;          // cuDNN's autotuned convolutions / this model's time
  double attention_fraction = 0.0;                  // of the matrix peak, a fused attention kernel (0: the GEMM model)
  std::string source;                               // where the figures come from

  bool has_tiles() const { return sm_count > 0; }
  double matrix_fraction_for(DType d) const;
  double vector_fraction_for(DType d) const;
};

struct GemmTiming {
  Seconds compute{0.0};      // the math part (waves of tiles)
  Seconds reduction{0.0};    // split-k partial sums through memory
  int tile_m = 0, tile_n = 0, split_k = 1;
  double waves = 0.0;        // ceil'd wave count
  double quantisation = 1.0; // useful tile work / work of the waves run (partial tiles and waves)
  double fraction = 1.0;     // fraction(path, dtype) x reuse(tile)
  Seconds total() const { return compute + reduction; }
};

// The GEMM m x n x k on the matrix or vector path, whose peak is `peak`, at `fraction` of it for a large
// GEMM, with that path's tiles; `memory_rate` carries split-k partial sums.
GemmTiming gemm_time(const KernelParams& p, bool matrix_path, double m, double n, double k, FlopsPerSec peak,
                     double fraction, BytesPerSec memory_rate);

// A 3x3 stride-1 convolution (or its data or weight gradient) on the vector path.
struct WinogradConv {
  double batch = 0, out_height = 0, out_width = 0; // of the activation the 3x3 window slides over
  double in_channels = 0, out_channels = 0;        // C_in (read) and C_out (written) of this pass
  bool weight_gradient = false;                    // the GEMMs reduce over tiles into C_in x C_out
  Bytes direct_bytes{0.0};                         // what the direct kernel moves (the fused kernel's traffic)
  double element_bytes = 4.0;                      // of the activations and transformed tiles
};
struct WinogradTiming {
  Seconds total{0.0};
  int tile = 0;      // m of F(m x m, 3x3)
  bool fused = false;
  GemmTiming gemm;   // the batched GEMM of the transformed points
};
// The fastest Winograd variant cuDNN offers for this pass (as its autotuner picks among them), at `fraction`
// of the vector `peak`; `launch` is paid per kernel beyond the first.
WinogradTiming winograd_conv_time(const KernelParams& p, const WinogradConv& c, FlopsPerSec peak, double fraction,
                                  BytesPerSec memory_rate, Seconds launch);

// A memory-bound kernel moving `bytes` over HBM of peak `bandwidth`.
Seconds memory_time(const KernelParams& p, Bytes bytes, BytesPerSec bandwidth);

// A cuDNN batch normalisation over `channels` channels moving `bytes` (the backward pass where `backward`), on
// a chip of HBM peak `bandwidth` and SM clock `clock`; nullopt where `p` has neither a fitted fraction for the
// layout nor (NCHW) a channel rate: the caller then times it as any memory-bound kernel.
struct BatchNormTiming {
  Seconds total{0.0};
  BytesPerSec rate{0.0};  // the rate it moves its bytes at
  double hbm_share = 1.0; // rate / HBM peak
  bool channel_bound = false; // NCHW: its channels' CTAs, not HBM, set the rate
};
std::optional<BatchNormTiming> batch_norm_time(const KernelParams& p, Bytes bytes, BytesPerSec bandwidth,
                                               Hertz clock, bool nchw, bool backward, double channels);

} // namespace mlsim
