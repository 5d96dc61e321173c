// `mlsim validate --repredict` (validate.hpp): an earlier report's measured rows read back whole and
// predicted again at the machine state they were measured in; a file that is not such a report is an
// input error (exit 2).
#include "sim/core/base/errors.hpp"
#include "sim/validate/validate.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <fstream>

using namespace mlsim::validate;
using mlsim::fixtures::run_mlsim;
using mlsim::fixtures::scratch_dir;

namespace {

ConfigResult measured_row(int threads, const std::string& set, double throughput, double stall) {
  ConfigResult row;
  row.cfg.loader_threads = threads;
  row.cfg.prefetch_depth = 4;
  row.cfg.consumer = "light";
  row.cfg.consumer_layers = 12;
  row.cfg.gemm_n = 256;
  row.cfg.image_set = set;
  row.cfg.batch_size = 16;
  row.inputs.files.assign(48, "x.jpg");
  row.inputs.mean_bytes = 139824.7;
  row.inputs.mean_pixels = 786432;
  row.inputs.host_speed = 1.13;
  row.inputs.consumer_speed = 0.94;
  row.inputs.background_cores = 0.02;
  row.inputs.group_scheduling = true;
  row.spin_speed = 1.01;
  row.measured.throughput = throughput;
  row.measured.stall = stall;
  row.measured.step_time_s = 16.0 / throughput;
  row.measured.consumer_compute_s = 0.019;
  row.measured.other_cpu_cores = 0.02;
  row.measured.self_cpu_cores = 1.97;
  row.measured.faults_per_sample = 3.5;
  row.measured.steps = 240;
  row.robust.runs = 2;
  row.robust.throughput_spread = 0.054;
  row.robust.drifts = {0.015, -0.004};
  return row;
}

std::string write_report(const ValidationReport& r, const std::string& name) {
  const std::string path = scratch_dir() + name;
  std::ofstream(path) << report_to_json(r).dump(2);
  return path;
}

ValidationReport two_rows() {
  ValidationReport r;
  r.length = {5, 120};
  r.rows = {measured_row(2, "large", 601.1, 0.292), measured_row(3, "imagenet", 1048.8, 0.041)};
  return r;
}

} // namespace

TEST(ValidateRepredict, AReportReadsBackWithItsMeasurementsAndMachineState) {
  const ValidationReport back = read_validation_json(write_report(two_rows(), "report.json"));
  EXPECT_EQ(back.client, "mlsim");
  EXPECT_EQ(back.length.warmup, 5);
  EXPECT_EQ(back.length.measured, 120);
  ASSERT_EQ(back.rows.size(), 2u);
  const ConfigResult& a = back.rows[0];
  EXPECT_EQ(a.cfg.label(), "k2 d4 light large");
  EXPECT_EQ(back.rows[1].cfg.label(), "k3 d4 light imagenet");
  EXPECT_EQ(a.cfg.gemm_n, 256);
  EXPECT_EQ(a.cfg.consumer_layers, 12);
  EXPECT_EQ(a.inputs.files.size(), 48u); // the simulated data set's size follows the file count
  EXPECT_DOUBLE_EQ(a.inputs.mean_pixels, 786432);
  EXPECT_DOUBLE_EQ(a.inputs.host_speed, 1.13);
  EXPECT_DOUBLE_EQ(a.inputs.consumer_speed, 0.94);
  EXPECT_DOUBLE_EQ(a.inputs.background_cores, 0.02);
  EXPECT_TRUE(a.inputs.group_scheduling);
  EXPECT_DOUBLE_EQ(a.measured.throughput, 601.1);
  EXPECT_DOUBLE_EQ(a.measured.stall, 0.292);
  EXPECT_DOUBLE_EQ(a.measured.consumer_compute_s, 0.019);
  EXPECT_DOUBLE_EQ(a.robust.throughput_spread, 0.054);
  EXPECT_DOUBLE_EQ(a.robust.max_abs_drift, 0.015);
  EXPECT_EQ(a.robust.runs, 2);
}

TEST(ValidateRepredict, EachRowIsPredictedAtItsMeasuredStateAndAsCalibrated) {
  ValidationReport r = read_validation_json(write_report(two_rows(), "report.json"));
  // A predictor whose throughput is 500 samples/s at the calibrated speed, proportional to the cores'
  // speed, less 100 per core of other tenants' load; its stall is 0.25.
  Predictor predict = [](const JobConfig&, const JobInputs& in) {
    Prediction p;
    p.throughput = 500.0 * in.host_speed - 100.0 * in.background_cores;
    p.stall = 0.25;
    p.step_time_s = 16.0 / p.throughput;
    return p;
  };
  repredict(r, predict, "test predictor");
  EXPECT_EQ(r.predictor, "test predictor");
  const double pred = 500.0 * 1.13 - 100.0 * 0.02; // 563
  EXPECT_DOUBLE_EQ(r.rows[0].predicted.throughput, pred);
  EXPECT_DOUBLE_EQ(r.rows[0].predicted_quiet.throughput, 500.0);
  EXPECT_NEAR(r.rows[0].throughput_error, (pred - 601.1) / 601.1, 1e-12);
  EXPECT_NEAR(r.rows[1].throughput_error, (pred - 1048.8) / 1048.8, 1e-12);
  EXPECT_NEAR(r.rows[0].stall_error, 0.25 - 0.292, 1e-12);
  EXPECT_NEAR(r.rows[1].stall_error, 0.25 - 0.041, 1e-12);
  // Median and max of |error| over two rows: their mean and the larger.
  const double e0 = std::abs((pred - 601.1) / 601.1), e1 = std::abs((pred - 1048.8) / 1048.8);
  EXPECT_NEAR(r.throughput.median_abs_error, (e0 + e1) / 2, 1e-12);
  EXPECT_NEAR(r.throughput.max_abs_error, std::max(e0, e1), 1e-12);
  EXPECT_NEAR(r.stall.max_abs_error, 0.209, 1e-12);
  // --speed calibrated: the other tenants' load still counts, the cores' measured speed does not.
  repredict(r, predict, "test predictor", true);
  EXPECT_DOUBLE_EQ(r.rows[0].predicted.throughput, 500.0 - 100.0 * 0.02);
  EXPECT_NEAR(r.rows[0].throughput_error, (498.0 - 601.1) / 601.1, 1e-12);
  EXPECT_DOUBLE_EQ(r.rows[0].inputs.host_speed, 1.13); // still reported
  EXPECT_TRUE(report_to_json(r)["at_calibrated_speed"].get<bool>());
}

TEST(ValidateRepredict, AFileThatIsNoReportIsAnInputErrorNamingTheKey) {
  auto message = [](const std::string& text) {
    const std::string path = scratch_dir() + "bad.json";
    std::ofstream(path) << text;
    try {
      read_validation_json(path);
    } catch (const mlsim::InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("{").find("invalid JSON"), std::string::npos);
  EXPECT_NE(message("{\"client\": \"mlsim\"}").find("configs"), std::string::npos);
  EXPECT_NE(message("{\"client\": \"tf\", \"configs\": [{}]}").find("mlsim or pytorch"), std::string::npos);
  nlohmann::json j = report_to_json(two_rows());
  j["configs"][1]["measured"]["throughput"] = "fast";
  const std::string m = message(j.dump());
  EXPECT_NE(m.find("bad.json"), std::string::npos) << m;
  EXPECT_NE(m.find("configs.1.measured.throughput"), std::string::npos) << m;
  j = report_to_json(two_rows());
  j["configs"][0]["config"].erase("loader_threads");
  EXPECT_NE(message(j.dump()).find("configs.0.config.loader_threads"), std::string::npos);
}

TEST(ValidateRepredict, TheCommandExitsTwoOnABadReportOrWithoutAProfile) {
  const std::string report = write_report(two_rows(), "cli.json");
  const auto no_profile = run_mlsim("validate --repredict " + report);
  EXPECT_EQ(no_profile.code, 2) << no_profile.output;
  EXPECT_NE(no_profile.output.find("--profile"), std::string::npos) << no_profile.output;
  const std::string bad = scratch_dir() + "not-a-report.json";
  std::ofstream(bad) << "[1, 2, 3]";
  const std::string profile = mlsim::fixtures::source_path("sim/hardware/profiles/h200-2026-12-04.yaml");
  const auto r = run_mlsim("validate --repredict " + bad + " --profile " + profile);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("not-a-report.json"), std::string::npos) << r.output;
}
