// The pytorch client of calibrate and validate:
//  - without torch (MLSIM_PYTHON=/bin/false) both commands say what they need and exit 0, writing nothing;
//  - the fits recover costs from synthetic points made by their closed forms;
//  - a validation configuration of the torch loader simulates to its closed form;
//  - where torch and torchvision import, calibrate and validate --quick run end to end.
#include "tests/test_support.hpp"
#include "sim/validate/client_process.hpp"
#include "sim/validate/pytorch_calibrate.hpp"
#include "sim/validate/pytorch_validate.hpp"
#include "sim/validate/scenario_yaml.hpp"

#include "tests/validate_fixtures.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

using namespace mlsim::validate;
using mlsim::fixtures::run_mlsim;

namespace {
std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / (std::to_string(::getpid()) + "-" + name)).string();
}
} // namespace

TEST(PytorchClient, WithoutTorchBothCommandsSkipCleanly) {
  const char* was = std::getenv("MLSIM_PYTHON"); // put back after: later tests in this process probe too
  const std::string before = was ? was : "";
  struct Restore {
    bool had;
    std::string value;
    ~Restore() { had ? ::setenv("MLSIM_PYTHON", value.c_str(), 1) : ::unsetenv("MLSIM_PYTHON"); }
  } restore{was != nullptr, before};
  ::setenv("MLSIM_PYTHON", "/bin/false", 1);
  const std::string out = temp_path("no-torch.yaml"), json = temp_path("no-torch.json");
  auto c = run_mlsim("calibrate --client pytorch --quick --out " + out);
  EXPECT_EQ(c.code, 0) << c.output;
  EXPECT_NE(c.output.find("needs python3-torch and python3-torchvision"), std::string::npos) << c.output;
  EXPECT_FALSE(std::filesystem::exists(out));
  auto v = run_mlsim("validate --client pytorch --quick --json " + json);
  EXPECT_EQ(v.code, 0) << v.output;
  EXPECT_NE(v.output.find("needs python3-torch and python3-torchvision"), std::string::npos) << v.output;
  EXPECT_FALSE(std::filesystem::exists(json));
}

TEST(PytorchClient, FitsRecoverSyntheticCosts) {
  // receive = 0.3 ms + 0.02 ns/B, worker = 0.4 ms + 0.45 ns/B; first batches at 2 ms + 30 ms x W.
  nlohmann::json raw = {{"loader", nlohmann::json::array()}, {"startup", nlohmann::json::array()}};
  for (double bytes : {4e5, 1.6e6, 4.8e6, 1.9e7})
    raw["loader"].push_back({{"batch_bytes", bytes}, {"receive_s", 0.25e-3 + 0.02e-9 * bytes},
                             {"other_threads_s", 0.05e-3}, {"worker_s", 0.4e-3 + 0.45e-9 * bytes}});
  for (int w : {1, 2, 3})
    raw["startup"].push_back({{"workers", w}, {"first_batch_s", {std::vector<double>(w, 2e-3 + 30e-3 * w)}}});
  raw["pin_skipped"] = "no CUDA";
  const FrameworkCostsProfile f = fit_framework_costs(raw);
  EXPECT_NEAR(f.receive_per_batch_s, 0.3e-3, 1e-9);
  EXPECT_NEAR(f.receive_per_byte_s, 0.02e-9, 1e-15);
  EXPECT_NEAR(f.worker_per_batch_s, 0.4e-3, 1e-9);
  EXPECT_NEAR(f.worker_per_byte_s, 0.45e-9, 1e-15);
  EXPECT_NEAR(f.worker_startup_s, 30e-3, 1e-9);
  EXPECT_NEAR(f.receive_fit.r2, 1.0, 1e-9);
  EXPECT_LT(f.worker_fit.max_rel_residual, 1e-9);
  EXPECT_EQ(f.pin_note, "no CUDA");
  // decode = 50 us + 5 ns/B + 4 ns/px, bytes and pixels varied apart (two qualities per size)
  nlohmann::json decode = {{"name", "torch_decode"}, {"regressor", "bytes+pixels"}, {"points", nlohmann::json::array()}};
  for (double px : {19200.0, 187500.0, 786432.0})
    for (double bpp : {0.1, 0.3})
      decode["points"].push_back({{"bytes", bpp * px}, {"pixels", px}, {"cost_s", 50e-6 + 5e-9 * bpp * px + 4e-9 * px}});
  const StageCost d = fit_transform(decode);
  EXPECT_NEAR(d.per_sample_s, 50e-6, 1e-10);
  EXPECT_NEAR(d.per_byte_s, 5e-9, 1e-13);
  EXPECT_NEAR(d.per_pixel_s, 4e-9, 1e-13);
  EXPECT_EQ(d.points, 6);
  // a transform measured with noise: the residuals say so
  nlohmann::json flip = {{"name", "torch_flip"}, {"regressor", "pixels"}, {"points", nlohmann::json::array()}};
  for (auto [px, noise] : {std::pair{50176.0, 1.1}, {187500.0, 0.9}, {19200.0, 1.0}})
    flip["points"].push_back({{"pixels", px}, {"cost_s", (10e-6 + 0.3e-9 * px) * noise}});
  const StageCost fl = fit_transform(flip);
  EXPECT_GT(fl.max_rel_residual, 0.03);
  EXPECT_LT(fl.r2, 1.0);
}

TEST(PytorchClient, WorkersFaultsArePricedApartFromTheirOtherCpu) {
  // worker = 0.4 ms + 0.45 ns/B of CPU besides its faults, 5 + one a 4 KiB page a batch at 12 us each.
  nlohmann::json points = nlohmann::json::array();
  for (double bytes : {4e5, 1.6e6, 4.8e6, 1.9e7}) {
    const double faults = 5 + bytes / 4096;
    points.push_back({{"batch_bytes", bytes}, {"worker_s", 0.4e-3 + 0.45e-9 * bytes + faults * 12e-6},
                      {"worker_faults", faults}});
  }
  FrameworkCostsProfile f;
  fit_worker_costs(f, points, 12e-6);
  EXPECT_NEAR(f.worker_fresh_pages_per_byte, 1.0 / 4096, 1e-12);
  EXPECT_NEAR(f.worker_per_batch_s, 0.4e-3, 1e-9);
  EXPECT_NEAR(f.worker_per_byte_s, 0.45e-9, 1e-15);
  // No price (no page-fault measurement): the whole CPU is the fit, no pages counted.
  fit_worker_costs(f, points, 0.0);
  EXPECT_EQ(f.worker_fresh_pages_per_byte, 0.0);
  EXPECT_NEAR(f.worker_per_byte_s, 0.45e-9 + 12e-6 / 4096, 1e-15);
}

TEST(PytorchClient, InLoopCostsReplaceOrScaleTheIsolatedFits) {
  // Isolated: decode 50 us + 5 ns/B + 4 ns/px, to_tensor 10 us + 3 ns/px. In the loop, decode costs 1.5x over
  // three sizes (fitted directly: its coefficients come out 1.5x), to_tensor 2x at its one input size (scaled).
  std::map<std::string, mlsim::validate::StageCost> costs;
  costs["torch_decode"] = {50e-6, 5e-9, 4e-9};
  costs["torch_decode"].regressor = "bytes+pixels";
  costs["torch_to_tensor"] = {10e-6, 0.0, 3e-9};
  costs["torch_to_tensor"].regressor = "pixels";
  nlohmann::json in_loop = {{"torch_decode", nlohmann::json::array()}, {"torch_to_tensor", nlohmann::json::array()}};
  for (double px : {19200.0, 187500.0, 786432.0})
    for (double bpp : {0.1, 0.3})
      in_loop["torch_decode"].push_back(
          {{"bytes", bpp * px}, {"pixels", px}, {"cost_s", 1.5 * (50e-6 + 5e-9 * bpp * px + 4e-9 * px)}});
  for (int i = 0; i < 5; ++i)
    in_loop["torch_to_tensor"].push_back({{"bytes", 3 * 50176.0}, {"pixels", 50176.0}, {"cost_s", 2 * (10e-6 + 3e-9 * 50176)}});
  // A flip with p = 0.5: 1 us unflipped, 39 us flipped; its isolated fit is the mean of the draws (20 us).
  // Three flipped samples in five: the loop paid (3 x 39 + 2 x 1) / 5 = 23.8 us a sample, 1.19x.
  costs["torch_random_horizontal_flip"] = {20e-6, 0.0, 0.0};
  in_loop["torch_random_horizontal_flip"] = nlohmann::json::array();
  for (double us : {39.0, 1.0, 39.0, 1.0, 39.0})
    in_loop["torch_random_horizontal_flip"].push_back({{"bytes", 3 * 50176.0}, {"pixels", 50176.0}, {"cost_s", us * 1e-6}});
  const InLoaderResult r = fit_in_loop(in_loop, costs);
  EXPECT_NEAR(r.factor.at("torch_random_horizontal_flip"), 1.19, 1e-9);
  EXPECT_NEAR(r.factor.at("torch_decode"), 1.5, 1e-9);
  EXPECT_NEAR(r.factor.at("torch_to_tensor"), 2.0, 1e-9);
  ASSERT_EQ(r.direct.count("torch_decode"), 1u);
  EXPECT_EQ(r.direct.count("torch_to_tensor"), 0u); // one input size: nothing to fit a slope on
  apply_in_loader(costs, r, "pytorch client, ");
  EXPECT_NEAR(costs["torch_decode"].per_sample_s, 75e-6, 1e-10);
  EXPECT_NEAR(costs["torch_decode"].per_byte_s, 7.5e-9, 1e-13);
  EXPECT_NEAR(costs["torch_decode"].per_pixel_s, 6e-9, 1e-13);
  EXPECT_EQ(costs["torch_decode"].context, "pytorch client, loader");
  EXPECT_NEAR(costs["torch_to_tensor"].per_sample_s, 20e-6, 1e-12);
  EXPECT_NEAR(costs["torch_to_tensor"].per_pixel_s, 6e-9, 1e-15);
  EXPECT_EQ(costs["torch_to_tensor"].context, "pytorch client, isolated x in_loader_factor");
  EXPECT_NEAR(costs["torch_to_tensor"].in_loader_factor, 2.0, 1e-9);
}

TEST(PytorchClient, InLoopPageFaultsBecomeFreshPagesAtTheMeasuredPrice) {
  // In the loop, decode works 50 us + 5 ns/B + 4 ns/px and faults 0, 100 and 800 pages at three sizes
  // (two samples each, 90 and 110 at the middle one), 10 us a fault. The work is fitted without the
  // faults; the faults' mean per size is the table; the profile's cost gives back the mean cost.
  std::map<std::string, mlsim::validate::StageCost> costs;
  costs["torch_decode"] = {50e-6, 5e-9, 4e-9};
  costs["torch_decode"].regressor = "bytes+pixels";
  const double pf = 10e-6;
  nlohmann::json in_loop = {{"torch_decode", nlohmann::json::array()}};
  const std::map<double, std::pair<double, double>> faults = {{19200.0, {0, 0}}, {187500.0, {90, 110}}, {786432.0, {800, 800}}};
  for (const auto& [px, f] : faults)
    for (auto [bpp, n] : {std::pair{0.1, f.first}, {0.3, f.second}})
      in_loop["torch_decode"].push_back({{"bytes", bpp * px}, {"pixels", px}, {"faults", n},
                                         {"cost_s", 50e-6 + 5e-9 * bpp * px + 4e-9 * px + n * pf}});
  const InLoaderResult r = fit_in_loop(in_loop, costs, pf);
  EXPECT_NEAR(r.factor.at("torch_decode"), 1.0, 1e-9); // the work alone is what the isolated fit says
  apply_in_loader(costs, r, "pytorch client, ");
  const StageCost& d = costs.at("torch_decode");
  EXPECT_NEAR(d.per_sample_s, 50e-6, 1e-10);
  EXPECT_NEAR(d.per_byte_s, 5e-9, 1e-13);
  EXPECT_NEAR(d.per_pixel_s, 4e-9, 1e-13);
  ASSERT_EQ(d.fresh_pages.pixels, (std::vector<double>{19200.0, 187500.0, 786432.0}));
  ASSERT_EQ(d.fresh_pages.pages.size(), 1u); // one batch size measured: one row
  EXPECT_EQ(d.fresh_pages.pages.front(), (std::vector<double>{0.0, 100.0, 800.0}));
  EXPECT_NEAR(d.page_fault_s, pf, 1e-12); // the loop's own price: the same here
  EXPECT_NEAR(d.cost_s(0.2 * 786432, 786432), 50e-6 + 5e-9 * 0.2 * 786432 + 4e-9 * 786432 + 800 * pf, 1e-12);
  // Measured at two batch sizes: a row each; the validation's prediction takes its batch's row.
  nlohmann::json two = in_loop;
  for (auto pt : in_loop["torch_decode"]) {
    pt["batch"] = 32;
    pt["cost_s"] = pt["cost_s"].get<double>() - pt["faults"].get<double>() * pf; // no faults at batch 32
    pt["faults"] = 0;
    two["torch_decode"].push_back(pt);
  }
  for (auto& pt : two["torch_decode"])
    if (!pt.contains("batch"))
      pt["batch"] = 8;
  const InLoaderResult r2 = fit_in_loop(two, {{"torch_decode", costs.at("torch_decode")}}, pf);
  const mlsim::FreshPages& t = r2.fresh_pages.at("torch_decode");
  EXPECT_EQ(t.batches, (std::vector<double>{8.0, 32.0}));
  ASSERT_EQ(t.pages.size(), 2u);
  EXPECT_EQ(t.pages[1], (std::vector<double>{0.0, 0.0, 0.0}));
  EXPECT_NEAR(t.at(786432, 16), 400.0, 1e-9); // half way in log2(batch)
  EXPECT_NEAR(r2.direct.at("torch_decode").per_pixel_s, 4e-9, 1e-13);
  // Without a measured price the faults are not split off: the cost is fitted as it came (factor > 1).
  std::map<std::string, mlsim::validate::StageCost> plain = {{"torch_decode", costs.at("torch_decode")}};
  plain["torch_decode"].fresh_pages = {};
  const InLoaderResult unpriced = fit_in_loop(in_loop, plain);
  EXPECT_TRUE(unpriced.fresh_pages.empty());
  EXPECT_GT(unpriced.factor.at("torch_decode"), 1.5);
}

TEST(PytorchClient, InLoopFaultPriceIsTheLoopsOwn) {
  // In the loop, decode works 50 us + 5 ns/B + 4 ns/px and pays 10 us a fault; the faults at one size
  // differ between points (batches, processes). The touched price given is 15 us (as Python measures
  // it): the price fitted in the loop, 10 us, is used, and the work's coefficients come back.
  std::map<std::string, mlsim::validate::StageCost> costs;
  costs["torch_decode"] = {50e-6, 5e-9, 4e-9};
  costs["torch_decode"].regressor = "bytes+pixels";
  const double pf = 10e-6;
  nlohmann::json in_loop = {{"torch_decode", nlohmann::json::array()}};
  const std::map<double, std::vector<double>> faults = {
      {19200.0, {0, 0, 2}}, {187500.0, {0, 90, 300}}, {786432.0, {180, 650, 1400}}};
  for (const auto& [px, counts] : faults)
    for (size_t i = 0; i < counts.size(); ++i) {
      const double bpp = 0.1 + 0.1 * i;
      in_loop["torch_decode"].push_back({{"bytes", bpp * px}, {"pixels", px}, {"faults", counts[i]},
                                         {"cost_s", 50e-6 + 5e-9 * bpp * px + 4e-9 * px + counts[i] * pf}});
    }
  EXPECT_NEAR(in_loop_fault_price(in_loop, costs), pf, 1e-9);
  const InLoaderResult r = fit_in_loop(in_loop, costs, 1.5 * pf);
  EXPECT_NEAR(r.page_fault_s, pf, 1e-9);
  EXPECT_NEAR(r.page_fault_fitted_s, pf, 1e-9);
  const StageCost& d = r.direct.at("torch_decode");
  EXPECT_NEAR(d.per_sample_s, 50e-6, 1e-8);
  EXPECT_NEAR(d.per_pixel_s, 4e-9, 1e-12);
  // No faults anywhere: nothing to fit a price on, the touched one stays.
  std::map<std::string, mlsim::validate::StageCost> one = {{"torch_decode", costs.at("torch_decode")}};
  nlohmann::json flat = in_loop;
  for (auto& pt : flat["torch_decode"]) {
    pt["cost_s"] = pt["cost_s"].get<double>() - pt["faults"].get<double>() * pf;
    pt["faults"] = 0;
  }
  const InLoaderResult unfit = fit_in_loop(flat, one, 1.5 * pf);
  EXPECT_DOUBLE_EQ(unfit.page_fault_s, 1.5 * pf);
  EXPECT_NEAR(unfit.direct.at("torch_decode").per_pixel_s, 4e-9, 1e-12);
  // A fitted price far from the touched one (outside kFaultPriceBand) is not trusted.
  const InLoaderResult far = fit_in_loop(in_loop, costs, 10 * pf);
  EXPECT_DOUBLE_EQ(far.page_fault_s, 10 * pf);
  EXPECT_NEAR(far.page_fault_fitted_s, pf, 1e-9);
}

TEST(PytorchClient, InLoopWorkIsFittedAgainstTheMeasuredCosts) {
  // Decode works 50 us + 4 ns/px. At 786k px half the samples fault 1,400 pages, which cost 10 us each on
  // average but 8-12 us on a given sample (the price varies): taking 10 us a fault out leaves a rest
  // between 0.4 and 6 ms where the work was 3.2 ms. Weighted by the rest, the smallest rest would count
  // ~60x the others; weighted by what was measured, the work comes back within a few percent.
  std::map<std::string, mlsim::validate::StageCost> costs;
  costs["torch_decode"] = {50e-6, 0.0, 4e-9};
  costs["torch_decode"].regressor = "bytes+pixels";
  const double pf = 10e-6;
  nlohmann::json in_loop = {{"torch_decode", nlohmann::json::array()}};
  const double prices[] = {0.80, 0.9, 1.0, 1.1, 1.2, 0.85, 1.15, 0.95};
  for (double px : {19200.0, 187500.0, 480000.0, 786432.0})
    for (int i = 0; i < 8; ++i) {
      const double faults = px > 400000 && i % 2 == 0 ? 1400.0 * px / 786432.0 : 0.0;
      in_loop["torch_decode"].push_back({{"bytes", 0.2 * px}, {"pixels", px}, {"faults", faults},
                                         {"cost_s", 50e-6 + 4e-9 * px + faults * pf * prices[i]}});
    }
  const InLoaderResult r = fit_in_loop(in_loop, costs, pf);
  const StageCost& d = r.direct.at("torch_decode");
  const double at_786k = d.per_sample_s + d.per_byte_s * 0.2 * 786432 + d.per_pixel_s * 786432;
  EXPECT_NEAR(at_786k / (50e-6 + 4e-9 * 786432), 1.0, 0.1);
  EXPECT_GT(d.r2, 0.5);
}

TEST(PytorchClient, SharedCoreEfficiencyIsMeanRateOverOneProcesss) {
  // k = 1: 400 and 440 samples per CPU-second (mean 420); k = 2: 378 (0.9 of it); k = 3: 336 and 378
  // (mean 357: 0.85); a k above 1 would be noise and is capped at 1.
  const nlohmann::json pts = nlohmann::json::parse(R"([
    {"processes": 1, "samples_per_cpu_s": [400, 440]}, {"processes": 2, "samples_per_cpu_s": [378, 378]},
    {"processes": 3, "samples_per_cpu_s": [336, 378]}])");
  const std::vector<double> e = fit_shared_core(pts);
  ASSERT_EQ(e.size(), 2u);
  EXPECT_NEAR(e[0], 0.9, 1e-12);
  EXPECT_NEAR(e[1], 0.85, 1e-12);
  const nlohmann::json noisy = nlohmann::json::parse(R"([
    {"processes": 1, "samples_per_cpu_s": [400]}, {"processes": 2, "samples_per_cpu_s": [410]}])");
  EXPECT_EQ(fit_shared_core(noisy), std::vector<double>{1.0});
  EXPECT_TRUE(fit_shared_core(nlohmann::json::parse(R"([{"processes": 2, "samples_per_cpu_s": [1]}])")).empty());
}

TEST(PytorchClient, TransformsFromAScenariosStages) {
  std::string yaml = mlsim::fixtures::base_scenario(1, 1.0, 1.0);
  yaml.insert(yaml.find("model:"), "    - {name: random_crop, output: {width: 160, height: 160}}\n"
                                   "    - {name: flip, cost: {per_sample: 1 us}, probability: 0.5}\n"
                                   "    - {name: to_tensor, kind: convert, cost: {per_pixel: 2 ns}}\n"
                                   "    - {name: normalize, output: {dtype: fp32}}\n"
                                   "    - {name: augment_colour}\n");
  const mlsim::Scenario s = mlsim::fixtures::load(yaml);
  std::vector<std::string> skipped;
  const auto t = transforms_from_stages(s.pipeline, &skipped);
  EXPECT_EQ(t, (std::vector<std::string>{"RandomResizedCrop(160)", "RandomHorizontalFlip()", "ToTensor()",
                                         "Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])"}));
  EXPECT_EQ(skipped, (std::vector<std::string>{"read", "decode", "augment_colour"}));
}

namespace {
// 2 cores; the torch transforms cost 2.5 ms a sample in all, the worker 4 ms a batch, receive 1 ms a batch.
Profile torch_profile() {
  Profile p;
  p.cpu.cores = 2;
  for (auto [name, cost] : {std::pair<const char*, double>{"torch_decode", 1.5e-3},
                            {"torch_random_resized_crop", 0.5e-3},
                            {"torch_random_horizontal_flip", 0.1e-3},
                            {"torch_to_tensor", 0.25e-3},
                            {"torch_normalize", 0.15e-3}}) {
    StageCost c;
    c.per_sample_s = cost;
    p.cpu.stage_costs[name] = c;
  }
  p.ram.size_bytes = 8e9;
  p.ram.bandwidth_Bps = 10e9;
  FrameworkCostsProfile f;
  f.receive_per_batch_s = 1e-3;
  f.worker_per_batch_s = 4e-3;
  p.framework_costs = f;
  return p;
}

// Decode's fresh pages at 500x375 as two calibration processes met them: 0 and 100 a sample (mean 50),
// 10 us a fault.
void add_decode_launches(Profile& p) {
  p.cpu.page_fault_s = 10e-6;
  StageCost& d = p.cpu.stage_costs["torch_decode"];
  d.page_fault_s = 10e-6;
  d.fresh_pages.pixels = {187500.0};
  d.fresh_pages.pages = {{50.0}};
  d.fresh_pages.launches = {{{0.0}}, {{100.0}}};
}

// A torch configuration of batch 16 with `workers` and an emulated step of `step_s`, and its input: one
// 100 kB, 500x375 image.
JobConfig torch_job(int workers, double step_s) {
  JobConfig c;
  c.client = "pytorch";
  c.loader_threads = workers;
  c.batch_size = 16;
  c.step_s = step_s;
  return c;
}
} // namespace

TEST(PytorchClient, LoaderBoundConfigurationSimulatesToItsClosedForm) {
  const Profile p = torch_profile();
  const std::string path = temp_path("torch-profile.yaml");
  write_profile(p, path);
  const JobConfig c = torch_job(1, 0.010);
  const JobInputs in = mlsim::fixtures::one_500x375_image();
  EXPECT_NEAR(torch_batch_cost_s(p, c, in), 16 * 2.5e-3 + 4e-3, 1e-12);
  // One worker: a batch every 16 x 2.5 + 4 ms (+ its files read over the RAM bus); the emulated
  // accelerator sleeps 10 ms of each; the receive is part of the wait.
  const double read = 16 * 1e5 / 10e9, interval = 0.044 + read;
  const Prediction r = mlsim_simulator_predictor(p, path, {5, 20})(c, in);
  EXPECT_NEAR(r.step_time_s, interval, 1e-4);
  EXPECT_NEAR(r.throughput, 16 / interval, 0.05);
  EXPECT_NEAR(r.stall, 1 - 0.010 / interval, 0.01);
  // Cores at 0.8 of their calibrated speed (the reference spin took 1.25x): the worker's 44 ms of CPU
  // take 55 ms; the files' read over the RAM bus does not change.
  JobInputs slow = in;
  slow.host_speed = 0.8;
  const Prediction s = mlsim_simulator_predictor(p, path, {5, 20})(c, slow);
  std::filesystem::remove(path);
  EXPECT_NEAR(s.step_time_s, 0.044 / 0.8 + read, 1e-4);
}

TEST(PytorchClient, InLoopOneSizeStageGetsItsWorkPerSourceImage) {
  // A flip timed alone at 20 us (224 x 224 in, whatever the file). In the loop, after 187,500 px files it
  // works 40 us and after 786,432 px files 100 us (two samples each; the latter also fault 3 pages at
  // 10 us, priced out). Overall factor (2 x 40 + 2 x 100) / (4 x 20) = 3.5; per source 2 / 3.5 and 5 / 3.5;
  // the profile's cost gives back 40 and 100 us of work at those files, 70 us half way, flat outside.
  std::map<std::string, mlsim::validate::StageCost> costs;
  costs["torch_random_horizontal_flip"] = {20e-6, 0.0, 0.0};
  costs["torch_random_horizontal_flip"].regressor = "pixels";
  const double pf = 10e-6, px = 50176.0;
  nlohmann::json in_loop = {{"torch_random_horizontal_flip", nlohmann::json::array()}};
  for (int i = 0; i < 2; ++i) {
    in_loop["torch_random_horizontal_flip"].push_back(
        {{"bytes", 3 * px}, {"pixels", px}, {"source_pixels", 187500.0}, {"faults", 0}, {"cost_s", 40e-6}});
    in_loop["torch_random_horizontal_flip"].push_back(
        {{"bytes", 3 * px}, {"pixels", px}, {"source_pixels", 786432.0}, {"faults", 3}, {"cost_s", 100e-6 + 3 * pf}});
  }
  const InLoaderResult r = fit_in_loop(in_loop, costs, pf);
  EXPECT_NEAR(r.factor.at("torch_random_horizontal_flip"), 3.5, 1e-9);
  const mlsim::SourceScale& t = r.work_by_source.at("torch_random_horizontal_flip");
  EXPECT_EQ(t.pixels, (std::vector<double>{187500.0, 786432.0}));
  EXPECT_NEAR(t.scale[0], 2 / 3.5, 1e-9);
  EXPECT_NEAR(t.scale[1], 5 / 3.5, 1e-9);
  apply_in_loader(costs, r, "pytorch client, ");
  const StageCost& c = costs.at("torch_random_horizontal_flip");
  auto work = [&](double source) { return c.cost_s(3 * px, px, 0.0, 0.0, source) - c.page_fault_s * c.fresh_pages.at(source, 0); };
  EXPECT_NEAR(work(187500.0), 40e-6, 1e-12);
  EXPECT_NEAR(work(786432.0), 100e-6, 1e-12);
  EXPECT_NEAR(work(0.5 * (187500.0 + 786432.0)), 70e-6, 1e-12);
  EXPECT_NEAR(work(3e6), 100e-6, 1e-12);
  // Written and read back as the profile's cpu.stage_costs.<name>.work_by_source (the scenario schema).
  Profile p = torch_profile();
  p.cpu.page_fault_s = pf;
  p.cpu.stage_costs["torch_random_horizontal_flip"] = c;
  const std::string path = temp_path("torch-profile-by-source.yaml");
  write_profile(p, path);
  const StageCost back = read_profile(path).cpu.stage_costs.at("torch_random_horizontal_flip");
  ASSERT_EQ(back.work_by_source.pixels.size(), 2u); // to the profile's 4 significant digits
  EXPECT_NEAR(back.work_by_source.pixels[1], 786432.0, 50.0);
  EXPECT_NEAR(back.cost_s(3 * px, px, 0.0, 0.0, 786432.0), c.cost_s(3 * px, px, 0.0, 0.0, 786432.0), 1e-3 * 130e-6);
  // A stage fitted over several input sizes (decode, the crop) follows its own input and gets no table.
  nlohmann::json one_source = in_loop;
  for (auto& pt : one_source["torch_random_horizontal_flip"])
    pt["source_pixels"] = 187500.0;
  EXPECT_EQ(fit_in_loop(one_source, costs, pf).work_by_source.count("torch_random_horizontal_flip"), 0u);
}

TEST(PytorchClient, FreshPagesArePricedByTheFaultReferenceNotTheCoresSpeed) {
  // The torch profile with 50 fresh pages a sample in decode and the worker's batch in fresh shared memory
  // (one page a 4 KiB: 16 x 224 x 224 x 3 x 4 B = 2352 pages), 10 us a fault. One worker, loader-bound: a
  // batch every 44 ms of CPU + (16 x 50 + 2352) x 10 us = 31.52 ms of faults.
  Profile p = torch_profile();
  p.cpu.page_fault_s = 10e-6;
  StageCost& d = p.cpu.stage_costs["torch_decode"];
  d.page_fault_s = 10e-6;
  d.fresh_pages.pixels = {187500.0};
  d.fresh_pages.pages = {{50.0}};
  p.framework_costs->worker_fresh_pages_per_byte = 1.0 / 4096;
  const std::string path = temp_path("torch-profile-faults.yaml");
  write_profile(p, path);
  const JobConfig c = torch_job(1, 0.010);
  const JobInputs in = mlsim::fixtures::one_500x375_image();
  const double read = 16 * 1e5 / 10e9, faults = (16 * 50 + 2352) * 10e-6;
  const Prediction r = mlsim_simulator_predictor(p, path, {5, 20})(c, in);
  EXPECT_NEAR(r.step_time_s, 0.044 + faults + read, 1e-4);
  // Cores at 0.8 of their calibrated speed and a fault at half its speed (the reference page fault took 2x):
  // the CPU work takes 44 / 0.8 ms, the faults twice as long.
  JobInputs now = in;
  now.host_speed = 0.8;
  now.fault_speed = 0.5;
  const Prediction s = mlsim_simulator_predictor(p, path, {5, 20})(c, now);
  std::filesystem::remove(path);
  EXPECT_NEAR(s.step_time_s, 0.044 / 0.8 + 2 * faults + read, 1e-4);
}

TEST(PytorchClient, DeviceBoundConfigurationPaysTheReceiveInsideNext) {
  // Three workers build a batch every (16 x 2.5 + 4) / 3 = 14.7 ms, well under a 60 ms step: the batch is
  // always ready. The real DataLoader (pin_memory=False) receives it in next() on the training loop, so each
  // step is the receive's CPU (1 ms) + its latency (2.5 ms) + the emulated step (60 ms), and the stall is
  // the 3.5 ms of next() (a pin-memory thread, one batch ahead, would hide both).
  Profile p = torch_profile();
  p.framework_costs->receive_latency_s = 2.5e-3;
  const std::string path = temp_path("torch-profile-latency.yaml");
  write_profile(p, path);
  const JobConfig c = torch_job(3, 0.060);
  const JobInputs in = mlsim::fixtures::one_500x375_image();
  const Prediction r = mlsim_simulator_predictor(p, path, {5, 20})(c, in);
  std::filesystem::remove(path);
  // The nominal accelerator's serialised copy of the 16 x 224 x 224 x 3 fp32 batch over PCIe 5.0 x16
  // (32 GT/s x 16 lanes x 128/130 / 8 = 63.0 GB/s) comes on top: 0.15 ms the real run does not spend.
  const double copy = 16.0 * 224 * 224 * 3 * 4 / (32e9 * 16 * 128.0 / 130.0 / 8.0);
  EXPECT_NEAR(r.step_time_s, 0.060 + 1e-3 + 2.5e-3 + copy, 2e-5);
  EXPECT_NEAR(r.stall, 3.5e-3 / (0.0635 + copy), 0.002);
}

TEST(PytorchClient, QuickEndToEndWhereTorchImports) {
  if (!probe_pytorch_client().available)
    GTEST_SKIP() << kPytorchInstallHint;
  const std::string profile = temp_path("torch-quick.yaml"), json = temp_path("torch-quick.json");
  // Three in-loop processes where --quick runs two: each is a launch of the fault tables.
  auto c = run_mlsim("calibrate --client pytorch --quick --reps 1 --launches 3 --gpu off --out " + profile);
  ASSERT_EQ(c.code, 0) << c.output;
  const Profile p = read_profile(profile);
  ASSERT_TRUE(p.framework_costs.has_value());
  EXPECT_GT(p.framework_costs->receive_per_batch_s + p.framework_costs->receive_per_byte_s, 0.0);
  EXPECT_GT(p.framework_costs->reference_spin_s, 0.0); // written and read back
  EXPECT_GT(p.framework_costs->reference_page_fault_s, 0.0);
  // The workers' collate writes each batch into fresh shared memory: about one fault a 4 KiB page (1/4096 a
  // byte; the slope over the quick sizes, 64x64 and 224x224 at batch 8 and 32).
  EXPECT_GT(p.framework_costs->worker_fresh_pages_per_byte, 0.5 / 4096);
  EXPECT_LT(p.framework_costs->worker_fresh_pages_per_byte, 2.0 / 4096);
  EXPECT_GT(p.cpu.stage_costs.at("torch_decode").cost_s(1e5, 1.875e5), 0.0);
  // Two and three processes on one core were measured: each a share of one process's rate, timed after each
  // process's warm-up, with the faults a sample it met then.
  ASSERT_EQ(p.cpu.shared_core_efficiency.size(), 2u);
  EXPECT_NE(c.output.find("minor faults a sample, timed after each process's warm-up: 1 "), std::string::npos)
      << c.output;
  for (double e : p.cpu.shared_core_efficiency) {
    EXPECT_GT(e, 0.0);
    EXPECT_LE(e, 1.0);
  }
  // A page fault was timed (it prices the stages' fresh pages), and the profile reads back what was written.
  EXPECT_GT(p.cpu.page_fault_s, 0.0);
  EXPECT_LT(p.cpu.page_fault_s, 1e-3);
  for (const auto& [name, c] : p.cpu.stage_costs)
    if (!c.fresh_pages.empty()) {
      EXPECT_DOUBLE_EQ(c.page_fault_s, p.cpu.page_fault_s) << name;
      EXPECT_EQ(c.fresh_pages.launches.size(), 3u) << name;
    }
  // Every transform was also timed inside the loader loop (sim/validate/pytorch_calibrate.hpp).
  for (const char* name : {"torch_decode", "torch_random_resized_crop", "torch_to_tensor", "torch_normalize"}) {
    EXPECT_GT(p.cpu.stage_costs.at(name).in_loader_factor, 0.0) << name;
    EXPECT_EQ(p.cpu.stage_costs.at(name).context.rfind("pytorch client, ", 0), 0u) << name;
  }
  auto v = run_mlsim("validate --client pytorch --quick --profile " + profile + " --json " + json);
  ASSERT_EQ(v.code, 0) << v.output;
  std::ifstream in(json);
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j["client"], "pytorch");
  ASSERT_EQ(j["configs"].size(), 3u);
  for (const auto& row : j["configs"]) {
    EXPECT_GT(row["measured"]["throughput"].get<double>(), 0.0);
    EXPECT_GT(row["predicted"]["throughput"].get<double>(), 0.0);
    EXPECT_GE(row["measured"].value("faults_per_sample", -1.0), 0.0); // the loader's processes' page faults were counted
    EXPECT_GT(row["measured"].value("page_fault_speed_vs_calibration", 0.0), 0.0); // timed around each run
  }
  std::filesystem::remove(profile);
  std::filesystem::remove(json);
}

TEST(PytorchClient, EachLaunchsPageFaultsAreSimulatedAndTheirMeanPredicted) {
  // Decode's fresh pages measured in two calibration processes: 0 and 100 pages a sample at 500x375
  // (mean 50), 10 us a fault, so decode costs 1.5 ms or 2.5 ms a sample. One worker, batch 16, a 45 ms
  // step: launch 0 makes a batch in 16 x 2.5 + 4 = 44 ms (device-bound: one every 45 ms), launch 1 in
  // 16 x 3.5 + 4 = 60 ms (loader-bound). At the mean pages (52 ms a batch) the job would be loader-bound
  // at 52 ms; the launches' mean interval is (45 + 60) / 2 = 52.5 ms and their mean throughput
  // (16/45 + 16/60) / 2 per ms: above 16/52.5, below the device's 16/45 (min is concave).
  Profile p = torch_profile();
  add_decode_launches(p);
  const std::string path = temp_path("torch-profile-launches.yaml");
  write_profile(p, path);
  ASSERT_EQ(launch_count(read_profile(path)), 2u); // written and read back
  const JobConfig c = torch_job(1, 0.045);
  const JobInputs in = mlsim::fixtures::one_500x375_image();
  const Prediction r = mlsim_simulator_predictor(read_profile(path), path, {5, 40})(c, in);
  ASSERT_EQ(r.launch_throughputs.size(), 2u);
  const double read = 16 * 1e5 / 10e9, receive = 1e-3; // the files over the RAM bus; next()'s receive
  const double copy = 16.0 * 224 * 224 * 3 * 4 / (32e9 * 16 * 128.0 / 130.0 / 8.0); // the nominal PCIe copy
  EXPECT_NEAR(r.launch_throughputs[0], 16 / (0.045 + receive + copy), 0.2);
  EXPECT_NEAR(r.launch_throughputs[1], 16 / (0.060 + read), 0.5);
  EXPECT_NEAR(r.throughput, (r.launch_throughputs[0] + r.launch_throughputs[1]) / 2, 1e-9);
  // Without the launches: the run at the mean pages, loader-bound at 52 ms, slower than the launches' mean.
  Profile mean = read_profile(path);
  mean.cpu.stage_costs["torch_decode"].fresh_pages.launches.clear();
  const Prediction m = mlsim_simulator_predictor(mean, path, {5, 40})(c, in);
  EXPECT_TRUE(m.launch_throughputs.empty());
  EXPECT_NEAR(m.throughput, 16 / (0.052 + read), 0.5);
  std::filesystem::remove(path);
}

TEST(PytorchClient, LaunchDrawsAreTheMultisetsOfTheWorkersLaunches) {
  // Each of W worker processes draws one of K launches alike: a multiset's weight is its orderings over K^W.
  const auto none = launch_draws(0, 3);
  ASSERT_EQ(none.size(), 1u);
  EXPECT_TRUE(none[0].launches.empty());
  EXPECT_DOUBLE_EQ(none[0].weight, 1.0);
  const auto one = launch_draws(3, 1); // one process: each launch, a third each
  ASSERT_EQ(one.size(), 3u);
  for (size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(one[k].launches, std::vector<size_t>{k});
    EXPECT_DOUBLE_EQ(one[k].weight, 1.0 / 3.0);
  }
  const auto two = launch_draws(3, 2); // {0,0} 1/9, {0,1} 2/9, {0,2} 2/9, {1,1} 1/9, {1,2} 2/9, {2,2} 1/9
  ASSERT_EQ(two.size(), 6u);
  const std::vector<std::vector<size_t>> pairs{{0, 0}, {0, 1}, {0, 2}, {1, 1}, {1, 2}, {2, 2}};
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(two[i].launches, pairs[i]);
    EXPECT_NEAR(two[i].weight, pairs[i][0] == pairs[i][1] ? 1.0 / 9.0 : 2.0 / 9.0, 1e-15);
  }
  const auto three = launch_draws(3, 3); // C(5, 3) = 10 multisets; {0, 1, 2} is 3! = 6 of the 27 orderings
  ASSERT_EQ(three.size(), 10u);
  double total = 0;
  for (const auto& d : three) {
    total += d.weight;
    if (d.launches == std::vector<size_t>{0, 1, 2})
      EXPECT_NEAR(d.weight, 6.0 / 27.0, 1e-15);
    if (d.launches == std::vector<size_t>{1, 1, 1})
      EXPECT_NEAR(d.weight, 1.0 / 27.0, 1e-15);
  }
  EXPECT_NEAR(total, 1.0, 1e-12);
}

TEST(PytorchClient, TwoWorkersDrawTheirLaunchesApartAndTheSlowerSetsThePace) {
  // Decode at 2.5 ms a sample (launch 0: no fresh pages) or 3.5 ms (launch 1: 100 pages x 10 us); batch 16,
  // 4 ms of collate: 44 or 60 ms a batch. Two workers on 4 cores (the training process' 1 ms receive a batch
  // on a core of its own), a 1 ms step: loader-bound. Each worker draws its
  // launch: both 0 (1/4): a batch every 22 ms; both 1 (1/4): every 30 ms; one each (1/2): round robin goes
  // at the slow worker's pace, 2 batches per 60 ms, every 30 ms (a shared queue would get 1/44 + 1/60 per ms,
  // every 25.4 ms). The prediction is the draws' mean: (16/22 + 16/30 + 2 x 16/30) / 4 per ms.
  Profile p = torch_profile();
  p.cpu.cores = 4;
  add_decode_launches(p);
  const std::string path = temp_path("torch-profile-two-workers.yaml");
  write_profile(p, path);
  const JobConfig c = torch_job(2, 0.001);
  const JobInputs in = mlsim::fixtures::one_500x375_image();
  const Prediction r = mlsim_simulator_predictor(read_profile(path), path, {10, 200})(c, in);
  std::filesystem::remove(path);
  ASSERT_EQ(r.launch_throughputs.size(), 3u); // {0,0}, {0,1}, {1,1}
  const double read = 16 * 1e5 / 10e9; // each worker's files over the RAM bus, in its batch
  const double fast = 16 / ((0.044 + read) / 2), slow = 16 / ((0.060 + read) / 2);
  EXPECT_NEAR(r.launch_throughputs[0], fast, 0.01 * fast);
  EXPECT_NEAR(r.launch_throughputs[1], slow, 0.01 * slow);
  EXPECT_NEAR(r.launch_throughputs[2], slow, 0.01 * slow);
  EXPECT_NEAR(r.throughput, (fast + 3 * slow) / 4, 0.01 * slow);
}

TEST(PytorchClient, InLoopFaultsOfEachProcessBecomeItsLaunch) {
  // Decode at two sizes, 10 us a fault, measured in two processes: process 0 faults 0 / 200 pages a
  // sample, process 1 100 / 600. The table is the mean (50 / 400), each launch its process's own.
  std::map<std::string, mlsim::validate::StageCost> costs;
  costs["torch_decode"] = {50e-6, 5e-9, 4e-9};
  costs["torch_decode"].regressor = "bytes+pixels";
  const double pf = 10e-6;
  nlohmann::json in_loop = {{"torch_decode", nlohmann::json::array()}};
  for (auto [process, px, n] : {std::tuple{0, 187500.0, 0.0}, {0, 786432.0, 200.0}, {1, 187500.0, 100.0},
                                {1, 786432.0, 600.0}, {0, 19200.0, 0.0}, {1, 19200.0, 0.0}})
    for (double bpp : {0.1, 0.3})
      in_loop["torch_decode"].push_back({{"bytes", bpp * px}, {"pixels", px}, {"faults", n}, {"process", process},
                                         {"cost_s", 50e-6 + 5e-9 * bpp * px + 4e-9 * px + n * pf}});
  const InLoaderResult r = fit_in_loop(in_loop, costs, pf);
  const mlsim::FreshPages& t = r.fresh_pages.at("torch_decode");
  EXPECT_EQ(t.pages.front(), (std::vector<double>{0.0, 50.0, 400.0}));
  ASSERT_EQ(t.launches.size(), 2u);
  EXPECT_EQ(t.launches[0].front(), (std::vector<double>{0.0, 0.0, 200.0}));
  EXPECT_EQ(t.launches[1].front(), (std::vector<double>{0.0, 100.0, 600.0}));
  // One process: no launches (its table is the mean).
  nlohmann::json one = {{"torch_decode", nlohmann::json::array()}};
  for (const auto& pt : in_loop["torch_decode"])
    if (pt["process"] == 0)
      one["torch_decode"].push_back(pt);
  EXPECT_TRUE(fit_in_loop(one, costs, pf).fresh_pages.at("torch_decode").launches.empty());
}

TEST(PytorchClient, InLoopFaultsAfterTheCropAreTabledByTheSourceImage) {
  // ToTensor always sees 224 x 224 px; its points say which file's sample they were: 0 pages a sample
  // after 500 x 375 images, 80 after 1024 x 768 ones. The table is over the source images, marked so,
  // and written with pixels_of: source; a client without source_pixels gives the input-keyed table.
  std::map<std::string, mlsim::validate::StageCost> costs;
  costs["torch_to_tensor"] = {0.0, 0.0, 6e-9};
  costs["torch_to_tensor"].regressor = "pixels";
  const double pf = 10e-6, px = 224.0 * 224.0;
  nlohmann::json in_loop = {{"torch_to_tensor", nlohmann::json::array()}};
  for (auto [source, n] : {std::pair{187500.0, 0.0}, {786432.0, 80.0}})
    for (int i = 0; i < 4; ++i)
      in_loop["torch_to_tensor"].push_back({{"bytes", 3 * px}, {"pixels", px}, {"source_pixels", source},
                                            {"faults", n}, {"cost_s", 6e-9 * px + n * pf}});
  const mlsim::FreshPages t = fit_in_loop(in_loop, costs, pf).fresh_pages.at("torch_to_tensor");
  EXPECT_TRUE(t.by_source);
  EXPECT_EQ(t.pixels, (std::vector<double>{187500.0, 786432.0}));
  EXPECT_EQ(t.pages.front(), (std::vector<double>{0.0, 80.0}));
  mlsim::validate::StageCost c = costs["torch_to_tensor"];
  c.fresh_pages = t;
  c.page_fault_s = pf;
  EXPECT_NEAR(c.cost_s(3 * px, px, 0.0, 0.0, 786432.0), 6e-9 * px + 80 * pf, 1e-12);
  EXPECT_NEAR(c.cost_s(3 * px, px, 0.0, 0.0, 187500.0), 6e-9 * px, 1e-12);
  mlsim::validate::Profile p;
  p.cpu.page_fault_s = pf;
  p.cpu.stage_costs["torch_to_tensor"] = c;
  EXPECT_NE(mlsim::validate::profile_to_yaml(p).find("pixels_of: source"), std::string::npos);
  for (auto& pt : in_loop["torch_to_tensor"])
    pt.erase("source_pixels");
  const mlsim::FreshPages old = fit_in_loop(in_loop, costs, pf).fresh_pages.at("torch_to_tensor");
  EXPECT_FALSE(old.by_source);
  EXPECT_EQ(old.pixels, (std::vector<double>{px}));
  EXPECT_EQ(old.pages.front(), (std::vector<double>{40.0}));
}
