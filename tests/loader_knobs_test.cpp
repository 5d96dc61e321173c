// Knobs of the input side a user states directly, each against its closed form:
//  - model.step_time: the device step is exactly that time, whatever the batch;
//  - pipeline.pin_memory: pageable batches are staged by a host memcpy at RAM
//    bandwidth before the DMA (bytes / ram bandwidth more copy per step),
//    pinned ones go straight over PCIe (bytes / PCIe bandwidth).
#include "sim/pipeline/sample_flow.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

using namespace mlsim;

namespace {
double step(const nlohmann::ordered_json& j) { return j["step_time_s"]["mean"].get<double>(); }
double part(const nlohmann::ordered_json& j, const char* name) { return j["breakdown"][name].get<double>() * step(j); }

std::string fixed_step_scenario(const std::string& step_time) {
  std::string yaml = fixtures::base_scenario(1, 0.01, 1.0);
  auto at = yaml.find("model:");
  auto end = yaml.find("run:");
  return yaml.substr(0, at) + "model: {step_time: " + step_time + "}\n" + yaml.substr(end);
}
} // namespace

TEST(StepTime, DeviceStepIsExactlyTheGivenTime) {
  for (const char* st : {"38 ms", "5 ms"})
    for (const char* batch : {"16", "64"}) {
      auto j = fixtures::run(fixed_step_scenario(st), {std::string("pipeline.batch_size=") + batch});
      double expect = std::string(st) == "38 ms" ? 0.038 : 0.005;
      EXPECT_NEAR(part(j, "device_compute"), expect, 1e-9) << st << " batch " << batch;
      // The input (10 us per sample on 4 workers) and the copy are far shorter: the step is the device step.
      EXPECT_NEAR(step(j), expect, 0.01 * expect) << st << " batch " << batch;
    }
}

TEST(StepTime, RejectsMixingForms) {
  std::string yaml = fixed_step_scenario("38 ms");
  EXPECT_THROW(fixtures::load(yaml, {"model.forward_flops_per_sample=1 GFLOP"}), InputError);
  EXPECT_THROW(fixtures::load(yaml, {"model.step_time=-1 ms"}), InputError);
}

TEST(PinMemory, PageableAddsAStagingCopyAtRamBandwidth) {
  // 32 samples of 4 MB: 128 MB a batch. PCIe gen4 x16 at 0.8: 25.2 GB/s; RAM at 100 GB/s.
  const double batch_bytes = 32 * 4e6, pcie = 16.0e9 * 128.0 / 130.0 / 8 * 16 * 0.8, ram = 100e9;
  std::vector<std::string> common{"dataset.sample_size=4 MB", "hardware.nodes.0.ram.bandwidth=100 GB/s",
                                  "pipeline.copy=serialized"};
  auto with = [&](const char* pin) {
    auto o = common;
    o.push_back(std::string("pipeline.pin_memory=") + pin);
    return fixtures::run(fixed_step_scenario("50 ms"), o);
  };
  auto pinned = with("true"), pageable = with("false");
  EXPECT_NEAR(part(pinned, "h2d"), batch_bytes / pcie, 0.03 * batch_bytes / pcie);
  // The staging memcpy shares the RAM with the workers' reads of the next batch (at most as many bytes
  // again), so it takes between bytes/ram and 2 x bytes/ram.
  double extra = part(pageable, "h2d") - part(pinned, "h2d");
  EXPECT_GE(extra, 0.97 * batch_bytes / ram);
  EXPECT_LE(extra, 2.03 * batch_bytes / ram);
}

namespace {
// The base scenario with a calibrated flip of 2 ms + 1 ns/pixel on a 100 x 50 RGB image of 15 kB.
std::string with_calibrated_flip(const std::string& stage) {
  std::string yaml = fixtures::base_scenario(1, 0.01, 1.0);
  auto replace = [&](const std::string& from, const std::string& to) { yaml.replace(yaml.find(from), from.size(), to); };
  replace("cpu: {cores: 16, core_speed: 1.0}",
          "cpu: {cores: 16, core_speed: 1.0, stage_costs: {flip: {per_sample: 2 ms, per_pixel: 1 ns}}}");
  replace("sample_size: 1 kB", "sample_size: 15 kB\n  image: {width: 100, height: 50, channels: 3}");
  replace("    - {name: decode, cost: {per_sample: 0.01 ms}}", "    - " + stage);
  return yaml;
}
double stage_cost(const Scenario& s, size_t i) {
  return s.pipeline.stages[i].cost.for_sample(15e3, 100 * 50).value();
}
// The flip's cost a sample after a crop to 10 x 10 px, with a page fault of 10 us and `more` in the flip's
// calibrated cost (after its 2 ms + 1 ns/pixel), on a stored image of `image` ("width: W, height: H").
double flip_after_crop(const std::string& more, const std::string& image) {
  std::string yaml = with_calibrated_flip("{name: crop, cost: {per_sample: 0.01 ms}, output: {width: 10, height: 10}}\n"
                                          "    - {name: flip, cost: flip}");
  const std::string from = "cpu: {cores: 16, core_speed: 1.0, stage_costs: {flip: {per_sample: 2 ms, per_pixel: 1 ns}}}";
  yaml.replace(yaml.find(from), from.size(),
               "cpu: {cores: 16, core_speed: 1.0, page_fault: 10 us, stage_costs: {flip: {per_sample: 2 ms, "
               "per_pixel: 1 ns, " + more + "}}}");
  yaml.replace(yaml.find("width: 100, height: 50"), 22, image);
  const Scenario s = fixtures::load(yaml);
  return SampleFlow(s.pipeline, s.dataset, s.trainer_node().cpu).trace(15e3).stage_cost.at(2);
}
} // namespace

TEST(StageCosts, CalibratedCostScaledByScaleOrProbability) {
  const double flip = 2e-3 + 1e-9 * 5000; // per_sample + per_pixel x pixels
  EXPECT_NEAR(stage_cost(fixtures::load(with_calibrated_flip("{name: flip, cost: flip}")), 1), flip, 1e-12);
  EXPECT_NEAR(stage_cost(fixtures::load(with_calibrated_flip("{name: flip, cost: {calibrated: flip, scale: 0.5}}")), 1),
              0.5 * flip, 1e-12);
  EXPECT_NEAR(stage_cost(fixtures::load(with_calibrated_flip("{name: flip, cost: flip, probability: 0.5}")), 1),
              0.5 * flip, 1e-12);
  EXPECT_NEAR(stage_cost(fixtures::load(with_calibrated_flip(
                             "{name: flip, cost: {calibrated: flip, scale: 2}, probability: 0.25}")), 1),
              0.5 * flip, 1e-12);
  EXPECT_THROW(fixtures::load(with_calibrated_flip("{name: flip, cost: {calibrated: crop}}")), InputError);
  EXPECT_THROW(fixtures::load(with_calibrated_flip("{name: flip, cost: flip, probability: 1.5}")), InputError);
  EXPECT_THROW(fixtures::load(with_calibrated_flip("{name: flip, cost: {calibrated: flip, per_sample: 1 ms}}")),
               InputError);
}

TEST(StageCosts, FreshPagesArePricedByThePageFaultAndInterpolatedInPixels) {
  // Table: 0 pages at 1,000 px, 100 at 5,000 px, 500 at 10,000 px; a fault costs 10 us.
  // At 100 x 50 = 5,000 px: 2 ms + 5 us + 100 x 10 us = 3.005 ms.
  const std::string cpu =
      "cpu: {cores: 16, core_speed: 1.0, page_fault: 10 us, stage_costs: {flip: {per_sample: 2 ms, per_pixel: 1 ns, "
      "fresh_pages: {pixels: [1000, 5000, 10000], pages: [0, 100, 500]}}}}";
  auto scenario = [&](const std::string& cpu_line, const std::string& stage) {
    std::string yaml = with_calibrated_flip(stage);
    const std::string from = "cpu: {cores: 16, core_speed: 1.0, stage_costs: {flip: {per_sample: 2 ms, per_pixel: 1 ns}}}";
    yaml.replace(yaml.find(from), from.size(), cpu_line);
    return yaml;
  };
  const Scenario s = fixtures::load(scenario(cpu, "{name: flip, cost: flip}"));
  EXPECT_NEAR(stage_cost(s, 1), 2e-3 + 1e-9 * 5000 + 100 * 10e-6, 1e-12);
  const StageCost& c = s.pipeline.stages[1].cost;
  // Between two sizes linear; below the first its count; above the last in proportion to the pixels.
  EXPECT_NEAR(c.fresh_pages.at(7500, 0), 300.0, 1e-9);
  EXPECT_NEAR(c.fresh_pages.at(500, 0), 0.0, 1e-12);
  EXPECT_NEAR(c.fresh_pages.at(20000, 0), 1000.0, 1e-9);
  EXPECT_NEAR(c.for_sample(0, 20000).value(), 2e-3 + 20000e-9 + 1000 * 10e-6, 1e-12);
  // A scaled cost scales the faults with the work.
  EXPECT_NEAR(stage_cost(fixtures::load(scenario(cpu, "{name: flip, cost: {calibrated: flip, scale: 0.5}}")), 1),
              0.5 * (2e-3 + 1e-9 * 5000 + 100 * 10e-6), 1e-12);
  // Without the cpu's page_fault the pages have no price: refused, as are unsorted or unequal lists.
  std::string no_price = cpu;
  no_price.erase(no_price.find("page_fault: 10 us, "), std::string("page_fault: 10 us, ").size());
  EXPECT_THROW(fixtures::load(scenario(no_price, "{name: flip, cost: flip}")), InputError);
  std::string unsorted = cpu;
  unsorted.replace(unsorted.find("[1000, 5000, 10000]"), 19, "[1000, 10000, 5000]");
  EXPECT_THROW(fixtures::load(scenario(unsorted, "{name: flip, cost: flip}")), InputError);
  std::string unequal = cpu;
  unequal.replace(unequal.find("[0, 100, 500]"), 13, "[0, 100]");
  EXPECT_THROW(fixtures::load(scenario(unequal, "{name: flip, cost: flip}")), InputError);
  // Measured per batch size: the scenario's loader (batch 32) takes the row between batch 16 and 64,
  // linear in log2(batch): half way, (100 + 20) / 2 = 60 pages at 5,000 px.
  std::string per_batch = cpu;
  per_batch.replace(per_batch.find("pages: [0, 100, 500]"), 20,
                    "batches: [16, 64], pages: [[0, 100, 500], [0, 20, 40]]");
  const Scenario b = fixtures::load(scenario(per_batch, "{name: flip, cost: flip}"));
  EXPECT_NEAR(stage_cost(b, 1), 2e-3 + 1e-9 * 5000 + 60 * 10e-6, 1e-12);
  EXPECT_NEAR(b.trainer_node().cpu.stage_costs.at("flip").fresh_pages.at(10000, 8), 500.0, 1e-9); // below: the first row
  // Launches (each calibration process's table): cpu.launch: k simulates launch k's counts, reduced to the
  // loader's batch as the mean is; without it the mean. Batch 32, 5,000 px: launch 1 has (300 + 60) / 2.
  std::string launches = per_batch;
  const std::string rows = "pages: [[0, 100, 500], [0, 20, 40]]";
  launches.replace(launches.find(rows), rows.size(),
                   "pages: [[0, 100, 500], [0, 20, 40]], launches: [[[0, 0, 0], [0, 0, 0]], [[0, 300, 900], [0, 60, 80]]]");
  EXPECT_NEAR(stage_cost(fixtures::load(scenario(launches, "{name: flip, cost: flip}")), 1),
              2e-3 + 1e-9 * 5000 + 60 * 10e-6, 1e-12);
  auto at_launch = [&](const std::string& k) {
    std::string y = launches;
    y.replace(y.find("cores: 16,"), 10, "cores: 16, launch: " + k + ",");
    return scenario(y, "{name: flip, cost: flip}");
  };
  EXPECT_NEAR(stage_cost(fixtures::load(at_launch("1")), 1), 2e-3 + 1e-9 * 5000 + 180 * 10e-6, 1e-12);
  EXPECT_NEAR(stage_cost(fixtures::load(at_launch("0")), 1), 2e-3 + 1e-9 * 5000, 1e-12);
  EXPECT_THROW(fixtures::load(at_launch("2")), InputError); // two launches: 0 or 1
  std::string no_launches = per_batch;
  no_launches.replace(no_launches.find("cores: 16,"), 10, "cores: 16, launch: 0,");
  EXPECT_THROW(fixtures::load(scenario(no_launches, "{name: flip, cost: flip}")), InputError);
  std::string launch_short = launches;
  launch_short.replace(launch_short.find("[0, 60, 80]"), 11, "[0, 60]");
  EXPECT_THROW(fixtures::load(scenario(launch_short, "{name: flip, cost: flip}")), InputError);
  std::string rows_short = per_batch;
  rows_short.replace(rows_short.find("[0, 20, 40]"), 11, "[0, 20]");
  EXPECT_THROW(fixtures::load(scenario(rows_short, "{name: flip, cost: flip}")), InputError);
}

TEST(StageCosts, FreshPagesOfTheSourceImageFollowTheStoredImageNotTheStageInput) {
  // A crop to 10 x 10 px, then the flip whose table (0 / 100 / 500 pages at 1,000 / 5,000 / 10,000 px,
  // a fault 10 us) is over the source image: the flip sees 100 px, the stored image is 100 x 50.
  // Source-keyed: 2 ms + 100 x 1 ns + 100 pages x 10 us = 3.0001 ms; input-keyed: below the table's first
  // size, 0 pages, 2.0001 ms; a 200 x 50 image (10,000 px): 500 pages, 7.0001 ms.
  auto flip_cost = [](const std::string& of, const std::string& image) {
    return flip_after_crop("fresh_pages: {" + of + "pixels: [1000, 5000, 10000], pages: [0, 100, 500]}", image);
  };
  EXPECT_NEAR(flip_cost("pixels_of: source, ", "width: 100, height: 50"), 2e-3 + 100e-9 + 100 * 10e-6, 1e-12);
  EXPECT_NEAR(flip_cost("pixels_of: input, ", "width: 100, height: 50"), 2e-3 + 100e-9, 1e-12);
  EXPECT_NEAR(flip_cost("", "width: 100, height: 50"), 2e-3 + 100e-9, 1e-12); // input is the default
  EXPECT_NEAR(flip_cost("pixels_of: source, ", "width: 200, height: 50"), 2e-3 + 100e-9 + 500 * 10e-6, 1e-12);
  EXPECT_THROW(flip_cost("pixels_of: output, ", "width: 100, height: 50"), InputError);
}

TEST(StageCosts, WorkBySourceScalesAStagesWorkByTheStoredImageNotItsFaults) {
  // The flip after a crop to 10 x 10 px: work 2 ms + 100 x 1 ns, scaled x0.5 at 1,000 source px and x2 at
  // 10,000 (linear between, flat outside); 100 fresh pages a sample at 10 us each, not scaled.
  // Stored image 100 x 50 = 5,000 px: x(0.5 + 1.5 x 4000 / 9000) = x1.1666..., 200 x 50: x2, 20 x 10: x0.5.
  auto flip_cost = [](const std::string& table, const std::string& image) {
    return flip_after_crop("fresh_pages: {pixels: [100], pages: [100]}, " + table, image);
  };
  const std::string table = "work_by_source: {pixels: [1000, 10000], scale: [0.5, 2]}";
  const double work = 2e-3 + 100e-9, faults = 100 * 10e-6;
  EXPECT_NEAR(flip_cost(table, "width: 100, height: 50"), work * (0.5 + 1.5 * 4000.0 / 9000.0) + faults, 1e-12);
  EXPECT_NEAR(flip_cost(table, "width: 200, height: 50"), work * 2 + faults, 1e-12);
  EXPECT_NEAR(flip_cost(table, "width: 400, height: 50"), work * 2 + faults, 1e-12); // flat above
  EXPECT_NEAR(flip_cost(table, "width: 20, height: 10"), work * 0.5 + faults, 1e-12);  // and below
  StageCost unknown; // no stored image known (0 px): the table's mean, x1
  unknown.per_sample = Seconds(2e-3);
  unknown.work_by_source = {{1000, 10000}, {0.5, 2}};
  EXPECT_NEAR(unknown.for_sample(0, 100, 0).value(), 2e-3, 1e-15);
  // Refused: unsorted pixels, unequal lists, a scale of 0.
  for (const char* bad : {"work_by_source: {pixels: [10000, 1000], scale: [0.5, 2]}",
                          "work_by_source: {pixels: [1000, 10000], scale: [0.5]}",
                          "work_by_source: {pixels: [1000, 10000], scale: [0, 2]}"})
    EXPECT_THROW(flip_cost(bad, "width: 100, height: 50"), InputError) << bad;
}

TEST(StageCosts, ConvertStageMakesFloat32OfTheSameElements) {
  // ToTensor on a 100 x 50 x 3 uint8 image: 15 000 elements of 4 bytes = 60 kB out; cost per input pixel.
  Scenario s = fixtures::load(with_calibrated_flip("{name: to_tensor, kind: convert, cost: {per_pixel: 2 ns}}"));
  SampleFlow flow(s.pipeline, s.dataset, s.trainer_node().cpu);
  SampleTrace t = flow.trace(15e3);
  EXPECT_NEAR(t.stage_cost[1], 2e-9 * 5000, 1e-15);
  EXPECT_DOUBLE_EQ(t.final_bytes, 100 * 50 * 3 * 4.0);
  // Without a known shape the element count is the bytes of the uint8 input: x4.
  std::string no_shape = with_calibrated_flip("{name: to_tensor, kind: convert, cost: {per_byte: 1 ns}}");
  no_shape.replace(no_shape.find("\n  image: {width: 100, height: 50, channels: 3}"),
                   std::string("\n  image: {width: 100, height: 50, channels: 3}").size(), "");
  Scenario s2 = fixtures::load(no_shape);
  EXPECT_DOUBLE_EQ(SampleFlow(s2.pipeline, s2.dataset, s2.trainer_node().cpu).trace(15e3).final_bytes, 60e3);
}

TEST(Nic, OptionalOnASingleNodeWithLocalDataRequiredWhenTrafficLeavesIt) {
  std::string yaml = fixtures::base_scenario(1, 0.01, 1.0);
  const std::string nic = "      nic: {bandwidth: 100 Gb/s, latency: 5 us}\n";
  yaml.replace(yaml.find(nic), nic.size(), "");
  auto j = fixtures::run(yaml); // data in RAM, one node: it runs
  EXPECT_GT(j["throughput_samples_per_s"].get<double>(), 0.0);
  try {
    fixtures::load(yaml, {"hardware.nodes.0.count=2"});
    FAIL() << "two nodes without a nic loaded";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("nic"), std::string::npos) << e.what();
  }
}
