// A written profile's hardware sections parse with the simulator's own parsers:
// PCIe in the preset schema (generation x lanes x efficiency), the host GEMM
// rate as cpu.core_flops; the measured PCIe figures read back.
#include "sim/core/run/load/hardware_load.hpp"
#include "sim/core/base/config_node.hpp"
#include "sim/hardware/cpu.hpp"
#include "sim/hardware/pcie.hpp"
#include "sim/validate/profile.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

using namespace mlsim::validate;

TEST(CalibrateProfileSchema, PcieSchemaReproducesTheMeasuredBandwidth) {
  for (double bw : {3e9, 11.5e9, 24e9, 52e9}) {
    PcieSchema s = pcie_schema_for(bw);
    EXPECT_EQ(s.lanes, 16);
    EXPECT_NEAR(mlsim::pcie_lane_rate(s.generation).value() * s.lanes * s.protocol_efficiency, bw, bw * 1e-9) << bw;
  }
  EXPECT_EQ(pcie_schema_for(24e9).generation, 4);
  EXPECT_DOUBLE_EQ(pcie_schema_for(1e12).protocol_efficiency, 1.0); // beyond gen5 x16: clamped
}

TEST(CalibrateProfileSchema, SectionsParseWithTheHardwareParsers) {
  Profile p;
  p.cpu.cores = 2;
  StageCost gemm;
  gemm.per_flop_s = 1.0 / 50e9;
  p.cpu.stage_costs["host_gemm_fp32"] = gemm;
  p.ram.size_bytes = 8e9;
  p.ram.bandwidth_Bps = 10e9;
  PcieProfile pc;
  pc.bandwidth_Bps = 24e9;
  pc.latency_s = 8e-6;
  pc.pageable_factor = 0.4;
  pc.d2h_bandwidth_Bps = 25e9;
  p.pcie = pc;
  const std::string path =
      (std::filesystem::temp_directory_path() / ("mlsim-profile-schema-" + std::to_string(::getpid()) + ".yaml")).string();
  write_profile(p, path);
  mlsim::ConfigNode root = mlsim::ConfigNode::load_file(path);
  mlsim::PcieSpec spec = mlsim::parse_pcie(root.child("pcie"));
  EXPECT_NEAR(spec.bandwidth().value(), 24e9, 24e9 * 1e-3);
  EXPECT_NEAR(spec.latency.value(), 8e-6, 1e-9);
  mlsim::CpuSpec cpu = mlsim::parse_cpu(root.child("cpu"));
  EXPECT_NEAR(cpu.core_flops.value(), 50e9, 50e9 * 1e-3);

  Profile back = read_profile(path);
  EXPECT_DOUBLE_EQ(back.meta.reference_spin_s, 0.0); // not measured: not written, read as 0
  EXPECT_DOUBLE_EQ(back.meta.reference_gemm_s, 0.0);
  EXPECT_DOUBLE_EQ(back.meta.reference_decode_s, 0.0);
  EXPECT_TRUE(back.meta.reference_decode_image.empty());
  ASSERT_TRUE(back.pcie.has_value());
  EXPECT_NEAR(back.pcie->bandwidth_Bps, 24e9, 24e9 * 1e-3);
  EXPECT_NEAR(back.pcie->pageable_factor, 0.4, 1e-6);
  EXPECT_NEAR(back.pcie->d2h_bandwidth_Bps, 25e9, 25e9 * 1e-3);
  std::filesystem::remove(path);
}

// cpu.all_cores_efficiency: jpeg_decode's measured all-cores efficiency when there is one, else the median
// over the measured stages, else 1; clamped to (0, 1]; written under cpu, parsed by parse_cpu, read back.
TEST(CalibrateProfileSchema, AllCoresEfficiencyComesFromTheDecodeStage) {
  CpuProfile cpu;
  EXPECT_DOUBLE_EQ(cpu_all_cores_efficiency(cpu), 1.0); // nothing measured (one core)
  StageCost a, b, c;
  a.all_cores_efficiency = 0.6;
  b.all_cores_efficiency = 0.9;
  c.all_cores_efficiency = 0.7;
  cpu.stage_costs = {{"flip", a}, {"normalize_fp32", b}, {"collate", c}};
  EXPECT_DOUBLE_EQ(cpu_all_cores_efficiency(cpu), 0.7); // median of 0.6, 0.7, 0.9
  StageCost decode;
  decode.all_cores_efficiency = 0.83;
  cpu.stage_costs["jpeg_decode"] = decode;
  EXPECT_DOUBLE_EQ(cpu_all_cores_efficiency(cpu), 0.83);
  cpu.stage_costs["jpeg_decode"].all_cores_efficiency = 1.04; // noise above 1
  EXPECT_DOUBLE_EQ(cpu_all_cores_efficiency(cpu), 1.0);

  Profile p;
  p.cpu.cores = 4;
  p.cpu.stage_costs["jpeg_decode"] = decode;
  const std::string path =
      (std::filesystem::temp_directory_path() / ("mlsim-profile-eff-" + std::to_string(::getpid()) + ".yaml")).string();
  write_profile(p, path);
  mlsim::ConfigNode root = mlsim::ConfigNode::load_file(path);
  EXPECT_NEAR(mlsim::parse_cpu(root.child("cpu")).all_cores_efficiency, 0.83, 1e-9);
  EXPECT_NEAR(root.child("calibration").child("stage_fits").child("jpeg_decode").get_number("all_cores_efficiency"),
              0.83, 1e-9); // the raw figure stays under calibration
  Profile back = read_profile(path);
  EXPECT_NEAR(back.cpu.all_cores_efficiency, 0.83, 1e-9);
  EXPECT_NEAR(cpu_all_cores_efficiency(back.cpu), 0.83, 1e-9);
  std::filesystem::remove(path);
}
