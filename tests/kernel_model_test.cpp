// What kernels achieve below the datasheet peak: tiles and waves over the SMs,
// partial tiles, memory-bound kernels below HBM peak. Expected values come
// from closed forms (wave and tile quantisation as NVIDIA's "Matrix
// Multiplication Background" guide states them) and from measurements on an
// H200 (8192^3 bf16 GEMM at 769-798 TFLOP/s, a device-to-device copy at
// 4.3 TB/s), never from the model's own output.
#include "sim/core/run/load/hardware_load.hpp"
#include "sim/hardware/accelerator.hpp"
#include "sim/hardware/kernel_model.hpp"
#include "sim/pipeline/step_graph/op_cost.hpp"

#include "test_support.hpp"

#include <gtest/gtest.h>

using namespace mlsim;

namespace {
using fixtures::gemm_op;
double rate(const Op& op, const AcceleratorSpec& a) { return op.flops.value() / cost_device_op(op, a).duration.value(); }
} // namespace

TEST(KernelModel, LargeBf16GemmOnH200MatchesTheMeasuredRate) {
  AcceleratorSpec h200 = accelerator_preset("h200-sxm");
  Op op = gemm_op(8192, 8192, 8192, DType::bf16);
  // Measured on an H200 through cuBLAS: 769 to 798 TFLOP/s on random data (two machines, two dates).
  double r = rate(op, h200);
  EXPECT_GT(r, 769e12 * 0.98);
  EXPECT_LT(r, 798e12 * 1.02);
  EXPECT_LT(r, 989.4e12); // the datasheet peak bounds it, never predicts it
  EXPECT_NE(cost_device_op(op, h200).why.find("wave"), std::string::npos);
}

TEST(KernelModel, OneTileColumnOverAFullWaveCostsASecondWave) {
  AcceleratorSpec h100 = accelerator_preset("h100-sxm");
  // 256x128 tiles: m = 2048 is 8 tile rows; n = 33 x 128 makes 264 = 2 x 132 tiles (two full waves on the 132
  // SMs) and n = 17 x 128 makes 136 tiles, 4 more than one wave. Wave quantisation: both take two waves.
  const long k = 8192;
  double full = cost_device_op(gemm_op(2048, 33 * 128, k, DType::fp16), h100).duration.value();
  double over = cost_device_op(gemm_op(2048, 17 * 128, k, DType::fp16), h100).duration.value();
  double one = cost_device_op(gemm_op(2048, 16 * 128, k, DType::fp16), h100).duration.value(); // 128 tiles: one wave
  EXPECT_NEAR(over, full, 1e-3 * full);
  const double launch = h100.launch_overhead.value(); // paid once per kernel, whatever its waves
  EXPECT_NEAR((over - launch) / (one - launch), 2.0, 1e-3);
}

TEST(KernelModel, PartialTileCostsBetweenOneAndAQuarterAndTwiceTheTime) {
  AcceleratorSpec a100 = accelerator_preset("a100-sxm4-80gb");
  // n = 136 (a multiple of 8, so still on the tensor cores): the tiles (widths 32, 64, 128, 256) cover it with
  // at least 160 columns (x1.25 of n = 128) and the 128-wide tile with exactly 256 (x2); m is large so waves
  // are many and their quantisation small.
  double t128 = cost_device_op(gemm_op(1 << 16, 128, 4096, DType::fp16), a100).duration.value();
  double t136 = cost_device_op(gemm_op(1 << 16, 136, 4096, DType::fp16), a100).duration.value();
  EXPECT_GE(t136 / t128, 1.25 * 0.98);
  EXPECT_LE(t136 / t128, 2.0 * 1.02);
}

TEST(KernelModel, TensorCoreAlignmentRuleStillDecidesThePath) {
  AcceleratorSpec a100 = accelerator_preset("a100-sxm4-80gb");
  EXPECT_EQ(cost_device_op(gemm_op(4096, 4096, 4096, DType::fp16), a100).path, "tensor core");
  EXPECT_EQ(cost_device_op(gemm_op(4096, 4096, 4090, DType::fp16), a100).path, "CUDA core");
}

TEST(KernelModel, UtilisationNeverReachesTheDatasheetPeak) {
  for (const char* name : {"v100-sxm2-16gb", "a100-sxm4-80gb", "h100-sxm", "titan-v"}) {
    AcceleratorSpec a = accelerator_preset(name);
    for (long s : {64L, 512L, 4096L, 16384L}) {
      OpCost c = cost_device_op(gemm_op(s, s, s, DType::fp16), a);
      EXPECT_LT(c.utilization, 0.9) << name << " " << s; // cuBLAS reaches 75-86 % at best (preset sources)
      EXPECT_GT(c.utilization, 0.0) << name << " " << s;
    }
  }
}

TEST(KernelModel, SmallGemmsAreWaveBound) {
  AcceleratorSpec v100 = accelerator_preset("v100-sxm2-16gb");
  // 512^3 on 80 SMs: 8 tiles of 256x128 for 80 SMs (or small tiles that feed the tensor cores worse, or
  // split-k that pays a reduction), and 2.9 us of math at peak next to a 5 us launch: a small GEMM cannot
  // fill the chip, so it runs well under the large-GEMM rate.
  double small = cost_device_op(gemm_op(512, 512, 512, DType::fp16), v100).utilization;
  double large = cost_device_op(gemm_op(8192, 8192, 8192, DType::fp16), v100).utilization;
  EXPECT_LT(small, 0.5 * large);
}

TEST(KernelModel, CopyOnH200ReachesTheMeasuredBandwidth) {
  AcceleratorSpec h200 = accelerator_preset("h200-sxm");
  // Measured: a device-to-device copy moved 8.6 GB (read + written) in 2.0 ms, about 4.3 TB/s.
  Seconds t = memory_time(h200.kernels, Bytes(8.6e9), h200.memory_bandwidth);
  EXPECT_NEAR(8.6e9 / t.value(), 4.3e12, 0.02 * 4.3e12);
  // A 64 kB kernel is latency-bound: t = latency + bytes / rate, far under the asymptotic rate.
  Seconds small = memory_time(h200.kernels, Bytes(64e3), h200.memory_bandwidth);
  EXPECT_LT(64e3 / small.value(), 0.1 * 4.3e12);
}

TEST(KernelModel, MemoryBoundOpSaysSo) {
  AcceleratorSpec a100 = accelerator_preset("a100-sxm4-80gb");
  Op relu;
  relu.kind = OpKind::elementwise;
  relu.in_elements = relu.out_elements = 1e8;
  relu.flops = Flops(1e8);
  OpCost c = cost_device_op(relu, a100);
  EXPECT_NE(c.why.find("memory-bound"), std::string::npos);
  // 800 MB at 90 % of 2039 GB/s plus 0.5 us latency plus 5 us launch (the preset's figures, each sourced there).
  EXPECT_NEAR(c.duration.value(), 5e-6 + 0.5e-6 + 8e8 / (0.9 * 2039e9), 1e-9);
}

// cuDNN's NCHW batch norm reduces one channel per CTA, and a CTA moves a fixed number of bytes per SM cycle:
// a layer moves its bytes at min(fraction x HBM, C x rate x clock).
TEST(KernelModel, NchwBatchNormWithFewChannelsRunsAtItsChannelsRate) {
  KernelParams p;
  p.sm_count = 132;
  p.norm_fraction = {{"nchw", 0.6}, {"nhwc", 0.7}};
  p.norm_latency = {{"nchw", Seconds(3e-6)}};
  p.norm_channel_rate = {{"fwd", 10.0}, {"bwd", 7.0}};
  p.memory_latency = Seconds(1e-6);
  const BytesPerSec hbm(4.8e12);
  const Hertz clock(2e9);
  // 64 channels forward: 64 x 10 B x 2 GHz = 1.28 TB/s, below 0.6 x 4.8 = 2.88 TB/s.
  auto fwd64 = batch_norm_time(p, Bytes(1e9), hbm, clock, true, false, 64);
  ASSERT_TRUE(fwd64.has_value());
  EXPECT_TRUE(fwd64->channel_bound);
  EXPECT_NEAR(fwd64->total.value(), 3e-6 + 1e9 / 1.28e12, 1e-12);
  // Backward: 64 x 7 x 2 GHz = 0.896 TB/s.
  EXPECT_NEAR(batch_norm_time(p, Bytes(1e9), hbm, clock, true, true, 64)->total.value(), 3e-6 + 1e9 / 0.896e12,
              1e-12);
  // 256 channels: 5.12 TB/s of channels, so HBM's 2.88 binds.
  auto fwd256 = batch_norm_time(p, Bytes(1e9), hbm, clock, true, false, 256);
  EXPECT_FALSE(fwd256->channel_bound);
  EXPECT_NEAR(fwd256->total.value(), 3e-6 + 1e9 / 2.88e12, 1e-12);
  EXPECT_NEAR(fwd256->hbm_share, 0.6, 1e-12);
  // A slower clock slows a channel-bound layer in proportion.
  EXPECT_NEAR(batch_norm_time(p, Bytes(1e9), hbm, Hertz(1e9), true, false, 64)->total.value(), 3e-6 + 1e9 / 0.64e12,
              1e-12);
  // NHWC kernels tile batch x positions: no channel term; no fitted latency: the memory latency.
  EXPECT_NEAR(batch_norm_time(p, Bytes(1e9), hbm, clock, false, false, 16)->total.value(),
              1e-6 + 1e9 / (4.8e12 * 0.7), 1e-12);
  // A channel rate without a fitted NCHW fraction: capped at the plain memory fraction.
  p.norm_fraction.erase("nchw");
  p.memory_fraction = 0.9;
  EXPECT_NEAR(batch_norm_time(p, Bytes(1e9), hbm, clock, true, false, 512)->total.value(),
              3e-6 + 1e9 / (0.9 * 4.8e12), 1e-12);
  EXPECT_NEAR(batch_norm_time(p, Bytes(1e9), hbm, clock, true, false, 64)->total.value(), 3e-6 + 1e9 / 1.28e12,
              1e-12);
  // Neither a fraction nor a rate (or no clock to turn cycles into time): a plain memory kernel.
  EXPECT_FALSE(batch_norm_time(p, Bytes(1e9), hbm, Hertz(0.0), true, false, 64).has_value());
  p.norm_channel_rate.clear();
  EXPECT_FALSE(batch_norm_time(p, Bytes(1e9), hbm, clock, true, false, 64).has_value());
}

namespace {
// A training batch norm's forward over batch 256 x `channels` x side^2: it reads its input twice (statistics,
// then normalising) and writes its output once.
Op batch_norm_op(double channels, double side) {
  Op bn;
  bn.kind = OpKind::reduction;
  bn.channel_statistics = bn.statistics_pass = true;
  bn.dims["channels"] = channels;
  bn.in_elements = 2 * 256.0 * channels * side * side;
  bn.out_elements = 256.0 * channels * side * side;
  bn.flops = Flops(5 * bn.out_elements);
  return bn;
}
} // namespace

// Through the step graph: a batch norm over 64 channels in NCHW on the H200 preset (its measured figures: 64
// channels x 10.41 bytes per SM cycle x 1980 MHz forward, below 0.662 of 4.8 TB/s).
TEST(KernelModel, BatchNormOpTakesTheMeasuredLayoutsRate) {
  AcceleratorSpec h200 = accelerator_preset("h200-sxm");
  Op bn = batch_norm_op(64, 112);
  bn.nchw_activations = true;
  OpCost nchw = cost_device_op(bn, h200);
  const double bytes = 3 * 256.0 * 64 * 112 * 112 * 4;
  EXPECT_NEAR(nchw.duration.value(), 5e-6 + 7.53e-6 + bytes / (64 * 10.41 * 1.98e9), 1e-9);
  EXPECT_NE(nchw.why.find("bound by its 64 channels"), std::string::npos) << nchw.why;
  // Its gradient runs at the backward rate, 6.87 bytes per cycle a channel.
  bn.phase = Phase::backward;
  EXPECT_NEAR(cost_device_op(bn, h200).duration.value(), 5e-6 + 7.53e-6 + bytes / (64 * 6.87 * 1.98e9), 1e-9);
  bn.phase = Phase::forward;
  bn.nchw_activations = false;
  OpCost nhwc = cost_device_op(bn, h200);
  EXPECT_NEAR(nhwc.duration.value(), 5e-6 + 4.72e-6 + bytes / (4.8e12 * 0.718), 1e-9);
  bn.fusion = "loop fusion"; // fused into another kernel: no longer cuDNN's batch norm
  EXPECT_NEAR(cost_device_op(bn, h200).duration.value(), 5e-6 + 0.5e-6 + bytes / (4.8e12 * 0.896), 1e-9);
}

// XLA and Inductor expand a batch norm into reduction kernels of their own: alone (not fused), such an op is
// a compiled kernel at the plain memory-bound rate (memory_fraction 0.896, latency 0.5 us), not cuDNN's.
TEST(KernelModel, ACompiledBatchNormIsNotCudnns) {
  AcceleratorSpec h200 = accelerator_preset("h200-sxm");
  Op bn = batch_norm_op(256, 56);
  bn.in_dtype = bn.out_dtype = bn.compute_dtype = DType::fp16;
  const double bytes = 3 * 256.0 * 256 * 56 * 56 * 2;
  EXPECT_NEAR(cost_device_op(bn, h200).duration.value(), 5e-6 + 4.72e-6 + bytes / (4.8e12 * 0.718), 1e-9);
  bn.compiled = true;
  OpCost c = cost_device_op(bn, h200);
  EXPECT_NEAR(c.duration.value(), 5e-6 + 0.5e-6 + bytes / (4.8e12 * 0.896), 1e-9);
  EXPECT_EQ(c.why.find("cuDNN"), std::string::npos) << c.why;
}

TEST(KernelModel, BadKernelsSectionIsAnInputError) {
  auto doc = ConfigNode::load_string("acc: {vector_peak: {fp32: 1 TFLOP/s}, memory_bandwidth: 1 GB/s, "
                                     "memory_size: 1 GB, kernels: {sm_count: 80, matrix_tiles: [[128]]}}\n",
                                     "t.yaml");
  EXPECT_THROW(parse_accelerator(doc.child("acc")), InputError);
  auto frac = ConfigNode::load_string("acc: {vector_peak: {fp32: 1 TFLOP/s}, memory_bandwidth: 1 GB/s, "
                                      "memory_size: 1 GB, kernels: {memory_fraction: 1.5}}\n",
                                      "t.yaml");
  EXPECT_THROW(parse_accelerator(frac.child("acc")), InputError);
  auto bare = ConfigNode::load_string("acc: {vector_peak: {fp32: 1 TFLOP/s}, memory_bandwidth: 1 GB/s, "
                                      "memory_size: 1 GB, kernels: {sm_count: 80}}\n",
                                      "t.yaml");
  EXPECT_THROW(parse_accelerator(bare.child("acc")), InputError);
  auto norm = ConfigNode::load_string("acc: {vector_peak: {fp32: 1 TFLOP/s}, memory_bandwidth: 1 GB/s, "
                                      "memory_size: 1 GB, kernels: {norm_fraction: {nhcw: 0.5}}}\n",
                                      "t.yaml");
  EXPECT_THROW(parse_accelerator(norm.child("acc")), InputError);
}
