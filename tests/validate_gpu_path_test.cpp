// The GPU side of calibrate and validate without a GPU: measurements shaped
// like an H200's (synthetic, from the published datasheet figures scaled to
// what a GEMM typically reaches) go through the same fits, profile writer and
// reader, accelerator parser and generated GPU scenario as real ones would,
// and the simulated GPU job matches its closed form. What needs the device
// itself (the CUDA kernels) is CalibrateGpu.MeasuresOrSkipsCleanly.
#include "tests/test_support.hpp"
#include "sim/core/run/load/hardware_load.hpp"
#include "sim/core/base/config_node.hpp"
#include "sim/core/base/errors.hpp"
#include "sim/hardware/accelerator.hpp"
#include "sim/validate/gpu/gpu_results_json.hpp"
#include "sim/validate/gpu_profile.hpp"
#include "sim/validate/scenario_yaml.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <sys/wait.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>

using namespace mlsim::validate;

namespace {
// Achieved GEMM rate at size s (cube root of m n k): peak * s / (s + s_half), the fitted form.
struct Curve {
  const char* dtype;
  double peak, s_half;
};
// H200 SXM datasheet, dense: fp16/bf16 989 TFLOP/s, tf32 494, fp32 67; achieved peaks ~75 % of those.
const Curve kCurves[] = {{"fp16", 742e12, 900.0}, {"bf16", 735e12, 950.0}, {"tf32", 370e12, 700.0}, {"fp32", 50e12, 300.0}};
constexpr double kPinned = 50e9, kPageable = 25e9, kCopyLatency = 10e-6, kLaunch = 5e-6;

// Whether Debian's python3 imports these modules ("torch, torchvision").
bool python_imports(const std::string& modules) {
  return std::system(("/usr/bin/python3 -c 'import " + modules + "' > /dev/null 2>&1").c_str()) == 0;
}

// Runs sim/validate/gpu/<script> under Debian's python3 with `args` (redirections included); its exit status,
// -1 when it did not exit.
int run_gpu_script(const std::string& script, const std::string& args) {
  int rc = std::system(
      ("/usr/bin/python3 " + mlsim::fixtures::source_path("sim/validate/gpu/" + script) + " " + args).c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

// The first line a Python snippet prints when run beside the GPU scripts (they import as modules there); "" when
// it fails.
std::string python_line(const std::string& code, const std::string& name) {
  const std::string file = mlsim::fixtures::scratch_dir() + name;
  int rc = std::system(("cd " + mlsim::fixtures::source_path("sim/validate/gpu") + " && /usr/bin/python3 -c \"" + code +
                        "\" > " + file)
                           .c_str());
  std::string line;
  if (WIFEXITED(rc) && WEXITSTATUS(rc) == 0) {
    std::ifstream in(file);
    std::getline(in, line);
  }
  return line;
}

GpuBenchResult synthetic_h200() {
  GpuBenchResult r;
  // A name no preset's family matches: the profile keeps the measured peaks (no kernel-model fit, which
  // kernel_fit_test.cpp covers with measurements shaped by the kernel model itself).
  r.info = {true, "", "Synthetic GPU", "test", 141e9};
  r.hbm_Bps = 4.0e12;
  r.cast_f32_f16_Bps = r.cast_f16_f32_Bps = 2.5e12;
  r.launch_overhead_s = kLaunch;
  for (const Curve& c : kCurves)
    for (int s : {256, 512, 1024, 2048, 4096, 8192}) {
      auto point = [&](int d, double slowdown) {
        GemmPoint p{c.dtype, d, d, d, 0.0, 0.0};
        const double achieved = c.peak * s / (s + c.s_half) * slowdown;
        p.seconds = 2.0 * d * d * double(d) / achieved;
        return p;
      };
      r.gemm.push_back(point(s, 1.0));
      r.gemm.push_back(point(s + 1, 0.6)); // misaligned (s + 1): 0.6x the rate of the aligned s
    }
  for (double bytes = 4096; bytes <= 256e6; bytes *= 4) {
    r.h2d_pinned.push_back({bytes, kCopyLatency + bytes / kPinned});
    r.h2d_pageable.push_back({bytes, kCopyLatency + bytes / kPageable});
    r.d2h_pinned.push_back({bytes, kCopyLatency + bytes / kPinned});
  }
  return r;
}

Profile gpu_profile() {
  Profile p;
  p.cpu.cores = 16;
  StageCost decode; // a fast loader: the GPU consumer is the bound
  decode.per_sample_s = 0.1e-3;
  p.cpu.stage_costs["jpeg_decode"] = decode;
  StageCost gemm;
  gemm.per_flop_s = 1e-11;
  p.cpu.stage_costs["host_gemm_fp32"] = gemm;
  p.ram.size_bytes = 512e9;
  p.ram.bandwidth_Bps = 10e9;
  const GpuBenchResult r = synthetic_h200();
  p.accelerator = fit_accelerator(r);
  p.pcie = fit_pcie(r);
  p.meta.gpu = r.info.name;
  return p;
}

std::string temp_path(const char* name) {
  return (std::filesystem::temp_directory_path() / (std::string(name) + std::to_string(::getpid()) + ".yaml")).string();
}
} // namespace

TEST(ValidateGpuPath, FitsRecoverTheCurvesTheMeasurementsFollow) {
  const GpuBenchResult r = synthetic_h200();
  AcceleratorProfile a = fit_accelerator(r);
  ASSERT_EQ(a.gemm.size(), 4u);
  for (const Curve& c : kCurves) {
    auto g = std::find_if(a.gemm.begin(), a.gemm.end(), [&](const GemmCurve& x) { return x.dtype == c.dtype; });
    ASSERT_NE(g, a.gemm.end()) << c.dtype;
    EXPECT_NEAR(g->peak_flops, c.peak, 1e-3 * c.peak) << c.dtype;
    EXPECT_NEAR(g->s_half, c.s_half, 1e-3 * c.s_half) << c.dtype;
    EXPECT_NEAR(g->misaligned_factor, 0.6, 1e-6) << c.dtype;
    EXPECT_GT(g->r2, 0.999) << c.dtype;
  }
  EXPECT_DOUBLE_EQ(a.memory_bandwidth_Bps, 4.0e12);
  PcieProfile p = fit_pcie(r);
  EXPECT_NEAR(p.bandwidth_Bps, kPinned, 1e-6 * kPinned);
  EXPECT_NEAR(p.latency_s, kCopyLatency, 1e-9);
  EXPECT_NEAR(p.pageable_factor, kPageable / kPinned, 1e-6);
  EXPECT_NEAR(p.d2h_bandwidth_Bps, kPinned, 1e-6 * kPinned);
}

TEST(ValidateGpuPath, TheProfileIsAnAcceleratorPresetAndAGpuJobSimulatesToItsClosedForm) {
  const Profile p = gpu_profile();
  const std::string path = temp_path("mlsim-gpu-profile-");
  write_profile(p, path);
  const Profile back = read_profile(path);
  ASSERT_TRUE(back.accelerator.has_value());
  ASSERT_TRUE(back.pcie.has_value());

  // The accelerator section parses as a preset of the simulator's accelerator model.
  mlsim::AcceleratorSpec acc = mlsim::parse_accelerator(mlsim::ConfigNode::load_file(path).child("accelerator"));
  ASSERT_TRUE(acc.matrix_peak.count(mlsim::DType::fp16));
  const double peak16 = acc.matrix_peak.at(mlsim::DType::fp16).value();
  EXPECT_NEAR(peak16, 742e12, 742e12 * 1e-3);

  // The validate GPU job: per step a pageable copy of the batch, then `layers` fp16 GEMMs of n^3.
  JobConfig cfg;
  cfg.gpu = true;
  cfg.loader_threads = 2;
  cfg.prefetch_depth = 2;
  cfg.consumer = "heavy";
  cfg.consumer_layers = 96;
  cfg.gemm_n = 4096;
  JobInputs in;
  in.files = {"a.jpg", "b.jpg"};
  in.mean_bytes = 1e5;
  in.mean_pixels = 1.875e5;
  Prediction pred = mlsim_simulator_predictor(back, path, RunLength{5, 40})(cfg, in);
  std::filesystem::remove(path);

  const double batch_bytes = 16.0 * 3 * 224 * 224 * 4;
  // Pageable: staged through the RAM bus (10 GB/s), then over PCIe (50 GB/s after its latency).
  const double copy = batch_bytes / 10e9 + kCopyLatency + batch_bytes / kPinned;
  const double device = 96 * (2.0 * 4096.0 * 4096.0 * 4096.0 / peak16 + kLaunch);
  EXPECT_NEAR(pred.step_time_s, copy + device, 0.02 * (copy + device));
  EXPECT_NEAR(pred.throughput, 16 / (copy + device), 0.02 * 16 / (copy + device));
  EXPECT_LT(pred.stall, 0.02); // the loader (1.6 ms of CPU per batch) keeps ahead
}

TEST(ValidateGpuPath, MeasurementsMadeElsewhereRoundTripThroughTheirJson) {
  const GpuBenchResult r = synthetic_h200();
  const std::string path = temp_path("mlsim-gpu-results-");
  {
    std::ofstream out(path);
    write_gpu_results_json(r, out);
  }
  const GpuBenchResult back = read_gpu_results_json(path);
  std::filesystem::remove(path);
  EXPECT_EQ(back.info.name, r.info.name);
  EXPECT_DOUBLE_EQ(back.info.memory_bytes, r.info.memory_bytes);
  EXPECT_DOUBLE_EQ(back.hbm_Bps, r.hbm_Bps);
  EXPECT_DOUBLE_EQ(back.launch_overhead_s, r.launch_overhead_s);
  ASSERT_EQ(back.gemm.size(), r.gemm.size());
  for (size_t i = 0; i < r.gemm.size(); ++i) {
    EXPECT_EQ(back.gemm[i].dtype, r.gemm[i].dtype);
    EXPECT_EQ(back.gemm[i].m, r.gemm[i].m);
    EXPECT_NEAR(back.gemm[i].seconds, r.gemm[i].seconds, 1e-8 * r.gemm[i].seconds); // 9 significant digits
  }
  ASSERT_EQ(back.h2d_pageable.size(), r.h2d_pageable.size());
  EXPECT_NEAR(back.h2d_pageable.back().seconds, r.h2d_pageable.back().seconds, 1e-8 * r.h2d_pageable.back().seconds);
}

TEST(ValidateGpuPath, CalibrateFitsMeasurementsMadeElsewhere) {
  const std::string results = temp_path("mlsim-gpu-results-cli-"), profile = temp_path("mlsim-gpu-only-profile-");
  {
    std::ofstream out(results);
    write_gpu_results_json(synthetic_h200(), out);
  }
  auto calibrate = [&](const std::string& file) {
    std::filesystem::remove(profile);
    int rc = std::system((mlsim::fixtures::mlsim_binary() + " calibrate --gpu-results " + file + " --out " + profile +
                          " > /dev/null 2>&1").c_str());
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  };
  ASSERT_EQ(calibrate(results), 0);
  mlsim::ConfigNode root = mlsim::ConfigNode::load_file(profile);
  EXPECT_FALSE(root.child("cpu").defined()); // nothing of this host
  mlsim::AcceleratorSpec acc = mlsim::parse_accelerator(root.child("accelerator"));
  EXPECT_NEAR(acc.matrix_peak.at(mlsim::DType::bf16).value(), 735e12, 735e12 * 1e-3);
  EXPECT_NEAR(acc.vector_peak.at(mlsim::DType::fp32).value(), 50e12, 50e12 * 1e-3);
  EXPECT_EQ(root.child("calibration").get_string("mode"), "gpu-results");

  // A file that is not mlsim-gpu-measure's output: exit 2, and no profile.
  {
    std::ofstream out(results);
    out << "{\"format\": \"something else\"}";
  }
  EXPECT_EQ(calibrate(results), 2);
  EXPECT_FALSE(std::filesystem::exists(profile));
  EXPECT_EQ(calibrate(results + ".missing"), 2);
  std::filesystem::remove(results);
}

// Convolutions keep their layout and algorithm choice, batch norms their shape, through the JSON; a field of the
// wrong kind is an input error that names its place in the file (never a JSON library exception).
TEST(ValidateGpuPath, ConvolutionsAndBatchNormsRoundTripAndBadFieldsAreNamed) {
  GpuBenchResult r = synthetic_h200();
  r.conv = {{"bwd_filter", "fp32", 256, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1.7e-3, 0.01, "nchw", true},
            {"fwd", "fp16", 256, 128, 56, 56, 128, 3, 3, 1, 1, 32, 4.1e-4, 0.01, "nhwc", true}};
  r.norm = {{"bwd", "fp16", "nhwc", 256, 64, 112, 112, 5.05e-4, 0.001}};
  const std::string path = temp_path("mlsim-gpu-results-conv-");
  auto write = [&](const std::string& text) { std::ofstream(path) << text; };
  std::ostringstream json;
  write_gpu_results_json(r, json);
  write(json.str());
  const GpuBenchResult back = read_gpu_results_json(path);
  ASSERT_EQ(back.conv.size(), 2u);
  EXPECT_EQ(back.conv[0].groups, 1);
  EXPECT_EQ(back.conv[1].groups, 32);
  EXPECT_DOUBLE_EQ(back.conv[1].flops(), 2.0 * 256 * 128 * 56 * 56 * 4 * 9); // 4 input channels a group
  EXPECT_EQ(back.conv[0].layout, "nchw");
  EXPECT_TRUE(back.conv[0].autotuned);
  EXPECT_EQ(back.conv[0].op, "bwd_filter");
  ASSERT_EQ(back.norm.size(), 1u);
  EXPECT_EQ(back.norm[0].layout, "nhwc");
  EXPECT_EQ(back.norm[0].h, 112);
  EXPECT_DOUBLE_EQ(back.norm[0].elements(), 256.0 * 64 * 112 * 112);
  for (auto [from, to, where] : {std::tuple{"\"op\": \"bwd\"", "\"op\": 5", "norm.0.op"},
                                 std::tuple{"\"layout\": \"nchw\"", "\"layout\": \"nchwx\"", "conv.0.layout"},
                                 std::tuple{"\"c\": 64, \"h\": 112", "\"c\": \"64\", \"h\": 112", "norm.0.c"},
                                 std::tuple{"\"groups\": 32", "\"groups\": 3", "conv.1"}}) {
    std::string text = json.str();
    ASSERT_NE(text.find(from), std::string::npos) << from;
    write(text.replace(text.find(from), std::string(from).size(), to));
    try {
      read_gpu_results_json(path);
      ADD_FAILURE() << "accepted " << to;
    } catch (const mlsim::InputError& e) {
      EXPECT_NE(std::string(e.what()).find(where), std::string::npos) << e.what();
    }
  }
  std::filesystem::remove(path);
}

// The device check's transformer-kernel script (fused attention, the LM head aligned and not) says plainly that
// it needs a GPU and exits 0 where there is none; where there is one it measures, and must still exit 0.
TEST(ValidateGpuPath, TransformerKernelScriptExitsCleanlyWithoutAGpu) {
  if (!python_imports("torch"))
    GTEST_SKIP() << "no python3 with torch";
  const std::string out = mlsim::fixtures::scratch_dir() + "transformer.json";
  const std::string log = mlsim::fixtures::scratch_dir() + "transformer.log";
  EXPECT_EQ(run_gpu_script("transformer_kernels.py", "--out " + out + " --peak-tflops 312 > " + log + " 2>&1"), 0);
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  if (!std::filesystem::exists(out))
    EXPECT_NE(text.str().find("needs a CUDA GPU"), std::string::npos) << text.str();
}

// The ResNet-50 steps script records the host beside its steps: its CPU and its time to call a tiny op and a tiny
// layer's forward and backward (on the CPU here with --smoke: the dispatch without a CUDA launch). A call takes
// more than nothing and less than a millisecond on any host that runs PyTorch.
TEST(ValidateGpuPath, StepsScriptRecordsTheHostsCallTimes) {
  if (!python_imports("torch, torchvision"))
    GTEST_SKIP() << "no python3 with torch and torchvision";
  const std::string out = mlsim::fixtures::scratch_dir() + "host.json";
  ASSERT_EQ(run_gpu_script("rn50_torch_steps.py", "--smoke --host-only --out " + out + " > /dev/null 2>&1"), 0);
  std::ifstream in(out);
  auto j = nlohmann::json::parse(in);
  EXPECT_TRUE(j["host_cpu"].is_string());
  for (const char* call : {"add_us", "linear_forward_backward_us"}) {
    EXPECT_GT(j["host_call"][call].get<double>(), 0.0) << call;
    EXPECT_LT(j["host_call"][call].get<double>(), 1000.0) << call;
  }
  EXPECT_GT(j["host_call"]["linear_forward_backward_us"].get<double>(), j["host_call"]["add_us"].get<double>());
  EXPECT_TRUE(j["configs"].empty());
}

// The steps script's other CNNs (--model): EfficientNet-B0 on the CPU with --smoke through its three profiled
// configurations, and the models it builds are torchvision's (the parameter counts of torchvision's documentation
// and of its ResNet with 32 groups of 4 channels, as the mlsim presets of the same names are tested to have).
TEST(ValidateGpuPath, StepsScriptTrainsTheOtherCnnsOnTheCpu) {
  if (!python_imports("torch, torchvision"))
    GTEST_SKIP() << "no python3 with torch and torchvision";
  const std::string out = mlsim::fixtures::scratch_dir() + "effnet.json";
  ASSERT_EQ(run_gpu_script("rn50_torch_steps.py", "--smoke --model efficientnet_b0 --out " + out + " > /dev/null 2>&1"),
            0);
  std::ifstream in(out);
  auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["model"], "efficientnet_b0");
  ASSERT_EQ(j["configs"].size(), 3u);
  for (const auto& c : j["configs"]) {
    ASSERT_FALSE(c.contains("error")) << c.dump();
    EXPECT_GT(c["step_s_median"].get<double>(), 0.0) << c["name"];
    EXPECT_TRUE(c.contains("kernels")) << c["name"];
  }
  EXPECT_EQ(python_line("import rn50_torch_steps as s; print(' '.join(str(sum(p.numel() for p in "
                        "s.build_model(m).parameters())) for m in ['resnext101_32x4d', 'efficientnet_b0']))",
                        "cnn_params.txt"),
            "44177704 5288548");
}

// The BERT-large micro-batch script (bert_torch_steps.py) on the CPU with --smoke: a 2-layer model through
// every code path of three configurations, each timed and profiled with its kernels summed by class; and its
// kernel classes on kernel names as CUDA profiles show them (cuBLAS/CUTLASS GEMMs, ATen's softmax, dropout,
// layer norm and elementwise kernels).
TEST(ValidateGpuPath, BertStepsScriptRunsItsCodePathsOnTheCpu) {
  if (!python_imports("torch, torchvision"))
    GTEST_SKIP() << "no python3 with torch and torchvision";
  const std::string out = mlsim::fixtures::scratch_dir() + "bert.json";
  ASSERT_EQ(run_gpu_script("bert_torch_steps.py", "--smoke --out " + out + " > /dev/null 2>&1"), 0);
  std::ifstream in(out);
  auto j = nlohmann::json::parse(in);
  ASSERT_EQ(j["configs"].size(), 3u);
  for (const auto& c : j["configs"]) {
    ASSERT_FALSE(c.contains("error")) << c.dump();
    EXPECT_GT(c["micro_batch_s_median"].get<double>(), 0.0) << c["name"];
    EXPECT_FALSE(c["us_per_micro_batch_by_class"].empty()) << c["name"];
  }
  EXPECT_EQ(python_line("import bert_torch_steps as b; print(' '.join(b.kernel_class(n) "
                        "for n in ['ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_nn', 'cunn_SoftMaxForward<8, c10::Half>', "
                        "'fused_dropout_kernel_vec<c10::Half, float, unsigned int, 1, 4>', "
                        "'vectorized_layer_norm_kernel<c10::Half, float>', "
                        "'vectorized_elementwise_kernel<4, GeluCUDAKernelImpl>', "
                        "'nll_loss_forward_reduce_cuda_kernel_2d']))",
                        "classes.txt"),
            "matmul softmax dropout layer_norm elementwise loss");
}
