// The accelerator model against closed forms and published spec numbers.
// Expected values are written from the datasheets (not read back from the presets),
// so a wrong preset number fails here. The roofline tests use the datasheet
// limit (`roofline`: the preset without its kernel model); what kernels achieve
// below it is tested in kernel_model_test.cpp.
#include "sim/core/run/load/hardware_load.hpp"
#include "sim/hardware/accelerator.hpp"
#include "sim/core/run/load/preset_library.hpp"
#include "sim/pipeline/step_graph/op_cost.hpp"

#include "test_support.hpp"

#include <gtest/gtest.h>

using namespace mlsim;

namespace {
using fixtures::gemm_op;
// The preset as a pure roofline: datasheet peaks, no tiles, waves or achieved fractions.
AcceleratorSpec roofline(const std::string& preset) {
  AcceleratorSpec a = accelerator_preset(preset);
  a.kernels = KernelParams{};
  return a;
}
} // namespace

TEST(AcceleratorRoofline, LargeFp16GemmOnH100RunsAtTensorCorePeak) {
  AcceleratorSpec h100 = roofline("h100-sxm");
  Op op = gemm_op(8192, 8192, 8192, DType::fp16);
  OpCost c = cost_device_op(op, h100);
  // H100 SXM datasheet: 1979 TFLOPS fp16 with sparsity = 989.4 dense; 5 us launch.
  double compute = 2.0 * 8192.0 * 8192.0 * 8192.0 / 989.4e12;
  double memory = 3.0 * 8192.0 * 8192.0 * 2.0 / 3.35e12;
  ASSERT_GT(compute, memory); // compute-bound: the roofline is the FLOP term
  EXPECT_EQ(c.path, "tensor core");
  EXPECT_NEAR(c.duration.value(), 5e-6 + compute, 1e-12);
}

TEST(AcceleratorRoofline, UnalignedFp16GemmFallsToCudaCores) {
  AcceleratorSpec h100 = roofline("h100-sxm");
  Op op = gemm_op(8190, 8192, 8192, DType::fp16); // m not a multiple of 8
  OpCost c = cost_device_op(op, h100);
  EXPECT_EQ(c.path, "CUDA core");
  // Hopper whitepaper: fp16 non-tensor 133.8 TFLOPS (SXM5).
  EXPECT_NEAR(c.duration.value(), 5e-6 + 2.0 * 8190.0 * 8192.0 * 8192.0 / 133.8e12, 1e-12);
}

TEST(AcceleratorRoofline, Fp32GemmOnV100UsesCudaCoresAtFp32Peak) {
  AcceleratorSpec v100 = roofline("v100-sxm2-16gb");
  Op op = gemm_op(4096, 4096, 4096, DType::fp32);
  OpCost c = cost_device_op(op, v100);
  EXPECT_EQ(c.path, "CUDA core");
  EXPECT_NEAR(c.duration.value(), 5e-6 + 2.0 * 4096.0 * 4096.0 * 4096.0 / 15.7e12, 1e-12); // V100 datasheet
}

TEST(AcceleratorRoofline, ElementwiseOpIsMemoryBound) {
  AcceleratorSpec a100 = roofline("a100-sxm4-80gb");
  Op relu;
  relu.kind = OpKind::elementwise;
  relu.in_elements = relu.out_elements = 1e9;
  relu.flops = Flops(1e9);
  OpCost c = cost_device_op(relu, a100);
  // 8 GB of fp32 traffic at the datasheet's 2039 GB/s.
  double t = 5e-6 + 8e9 / 2039e9;
  EXPECT_NEAR(c.duration.value(), t, 1e-12);
  EXPECT_EQ(c.path, "CUDA core");
  EXPECT_NEAR(c.utilization, 1e9 / t / 19.5e12, 1e-9); // 1 GFLOP over the fp32 peak of 19.5 TFLOPS
}

TEST(AcceleratorRoofline, EfficiencyFactorScalesTheRoofline) {
  AcceleratorSpec h100 = roofline("h100-sxm");
  h100.efficiency["matmul"] = 0.5;
  Op op = gemm_op(8192, 8192, 8192, DType::fp16);
  EXPECT_NEAR(cost_device_op(op, h100).duration.value(), 5e-6 + 2.0 * 8192.0 * 8192.0 * 8192.0 / 989.4e12 / 0.5,
              1e-12);
}

TEST(AcceleratorRoofline, MatrixUnitUtilisationIsUsefulOverPaddedFlops) {
  AcceleratorSpec tpu = accelerator_preset("tpu-v3-core");
  Op small = gemm_op(16, 64, 512, DType::bf16); // batch 16, 64 output features
  small.dims["batch"] = 16;
  OpCost c = cost_device_op(small, tpu);
  EXPECT_EQ(c.path, "matrix unit");
  // Mapped dims (batch, n) padded to 128: (16/128) * (64/128) = 1/16.
  EXPECT_DOUBLE_EQ(c.matrix_unit_utilization, (16.0 / 128.0) * (64.0 / 128.0));
  EXPECT_DOUBLE_EQ(c.executed_flops.value(), small.flops.value() * 16.0);
  Op full = gemm_op(256, 256, 512, DType::bf16);
  EXPECT_DOUBLE_EQ(cost_device_op(full, tpu).matrix_unit_utilization, 1.0);
  Op ragged = gemm_op(130, 128, 512, DType::bf16); // 130 -> 256
  EXPECT_DOUBLE_EQ(cost_device_op(ragged, tpu).matrix_unit_utilization, 130.0 / 256.0);
}

TEST(AcceleratorRoofline, TpuCoreComputePaddedFlopsAtHalfAChipsPeak) {
  AcceleratorSpec tpu = accelerator_preset("tpu-v3-core");
  Op op = gemm_op(16, 128, 4096, DType::bf16);
  op.dims["batch"] = 16;
  // Jouppi et al. 2020: 123 TFLOPS bf16 per v3 chip of two cores.
  double padded = op.flops.value() * 128.0 / 16.0;
  double memory = (16.0 * 4096 + 4096.0 * 128 + 16.0 * 128) * 2.0 / 450e9;
  EXPECT_NEAR(cost_device_op(op, tpu).duration.value(), 1e-6 + std::max(padded / 61.5e12, memory), 1e-12);
}

TEST(AcceleratorPresets, EveryPresetParsesAndCitesASource) {
  for (const auto& name : preset_names("accelerators")) {
    AcceleratorSpec a = accelerator_preset(name);
    EXPECT_GT(a.vector_peak.at(DType::fp32).value(), 1e12) << name;
    EXPECT_GT(a.memory_bandwidth.value(), 1e11) << name;
    EXPECT_GT(a.memory_size.value(), 1e9) << name;
    YAML::Node user(YAML::NodeType::Map);
    user["preset"] = name;
    ConfigNode resolved = resolve_preset(ConfigNode(user, "a", std::make_shared<ConfigSource>()), "accelerators",
                                         "accelerator");
    EXPECT_FALSE(resolved.get_string("source", "").empty()) << name;
  }
}

// Each GPU preset's fp32 peak is its SMs x FP32 lanes per SM x 2 (an FMA) x boost clock (Volta and GA100: 64
// lanes, Hopper: 128; architecture whitepapers): the datasheet figures, SM counts and clocks agree.
TEST(AcceleratorPresets, Fp32PeakIsSmsTimesLanesTimesClock) {
  int checked = 0;
  for (const auto& name : preset_names("accelerators")) {
    AcceleratorSpec a = accelerator_preset(name);
    if (a.boost_clock.value() <= 0 || a.kernels.sm_count <= 0)
      continue;
    const double lanes = name.rfind("h100", 0) == 0 || name.rfind("h200", 0) == 0 ? 128 : 64;
    EXPECT_NEAR(a.vector_peak.at(DType::fp32).value(), a.kernels.sm_count * lanes * 2 * a.boost_clock.value(),
                0.015 * a.vector_peak.at(DType::fp32).value())
        << name;
    ++checked;
  }
  EXPECT_GE(checked, 11);
}

// The PCIe cards: their datasheets' dense figures (sparsity halved away) and HBM.
TEST(AcceleratorPresets, PcieCardsHaveTheirDatasheetsFigures) {
  EXPECT_DOUBLE_EQ(accelerator_preset("v100-pcie-16gb").matrix_peak_for(DType::fp16)->value(), 112e12);
  EXPECT_DOUBLE_EQ(accelerator_preset("a100-pcie-80gb").memory_bandwidth.value(), 1935e9);
  EXPECT_DOUBLE_EQ(accelerator_preset("a100-pcie-40gb").matrix_peak_for(DType::bf16)->value(), 312e12);
  const AcceleratorSpec h100 = accelerator_preset("h100-pcie");
  EXPECT_DOUBLE_EQ(h100.matrix_peak_for(DType::fp16)->value(), 756e12); // 1,513 with sparsity
  EXPECT_DOUBLE_EQ(h100.memory_bandwidth.value(), 2e12);
  EXPECT_EQ(h100.kernels.sm_count, 114);
}

TEST(AcceleratorPresets, PublishedCapacities) {
  EXPECT_DOUBLE_EQ(accelerator_preset("a100-sxm4-80gb").memory_size.value(), 80.0 * 1073741824.0);
  EXPECT_DOUBLE_EQ(accelerator_preset("titan-v").memory_size.value(), 12.0 * 1073741824.0);
  EXPECT_DOUBLE_EQ(accelerator_preset("h200-sxm").memory_bandwidth.value(), 4.8e12);
  EXPECT_FALSE(accelerator_preset("p100-sxm2-16gb").matrix_peak_for(DType::fp16)); // no tensor cores
}

TEST(AcceleratorPresets, UnknownKeyAndConflictingRulesAreInputErrors) {
  auto doc = ConfigNode::load_string("acc: {vector_peak: {fp32: 1 TFLOP/s}, memory_bandwidth: 1 GB/s, "
                                     "memory_size: 1 GB, matrix_unit_sise: 128}\n",
                                     "t.yaml");
  EXPECT_THROW(parse_accelerator(doc.child("acc")), InputError);
  auto both = ConfigNode::load_string("acc: {vector_peak: {fp32: 1 TFLOP/s}, memory_bandwidth: 1 GB/s, "
                                      "memory_size: 1 GB, matrix_unit_size: 128, fast_path_alignment: 8}\n",
                                      "t.yaml");
  EXPECT_THROW(parse_accelerator(both.child("acc")), InputError);
}
