// A small real validate grid: the real loader and consumer against the
// simulator's prediction (one scenario per configuration, in a forked child)
// from a real quick calibration. Machines are shared
// and noisy, so the bounds are loose; `mlsim validate` measures the strict ones.
#include "sim/validate/calib_dataset.hpp"
#include "sim/validate/calibrate.hpp"
#include "sim/validate/scenario_yaml.hpp"
#include "sim/validate/validate.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <sstream>

using namespace mlsim::validate;

TEST(ValidateGrid, SmallGridRunsAndPredictsWithinALooseBound) {
  if (mate_photo_sources().empty())
    GTEST_SKIP() << "mate-backgrounds (the calibration photos) is not installed";
  CalibrateOptions co;
  co.quick = true;
  co.reps = 2;
  co.gpu = GpuMode::off;
  co.include_disk = false;
  std::ostringstream log;
  Profile profile = run_calibration(co, log);

  ValidateOptions vo;
  vo.quick = true;
  vo.length = {2, 6};
  for (auto [k, layers] : {std::pair{1, 4}, std::pair{2, 4}, std::pair{1, 40}}) {
    JobConfig c;
    c.loader_threads = k;
    c.prefetch_depth = 2;
    c.consumer = layers > 10 ? "heavy" : "light";
    c.consumer_layers = layers;
    c.gemm_n = 192;
    c.batch_size = 8;
    vo.grid.push_back(c);
  }
  const std::string path =
      (std::filesystem::temp_directory_path() / ("mlsim-validate-grid-" + std::to_string(::getpid()) + ".yaml")).string();
  write_profile(profile, path);
  ValidationReport r = run_validation(vo, mlsim_simulator_predictor(profile, path, vo.length), kSimulatorLabel, log);
  std::filesystem::remove(path);
  ASSERT_EQ(r.rows.size(), 3u);
  for (const auto& row : r.rows) {
    EXPECT_GT(row.measured.throughput, 0.0);
    EXPECT_GE(row.measured.stall, 0.0);
    EXPECT_LE(row.measured.stall, 1.0);
    EXPECT_GT(row.predicted.throughput, 0.0);
    EXPECT_GT(row.predicted.step_time_s, 0.0);
  }
  // The heavy consumer dominates: the job waits little, and slows down.
  EXPECT_LT(r.rows[2].measured.throughput, r.rows[0].measured.throughput);
  EXPECT_LT(r.rows[2].measured.stall, r.rows[0].measured.stall);
  EXPECT_LE(r.throughput.median_abs_error, 0.30) << log.str();
  EXPECT_LE(r.stall.median_abs_error, 0.20) << log.str();

  nlohmann::json j = report_to_json(r);
  ASSERT_EQ(j["configs"].size(), 3u);
  for (const char* key : {"config", "predicted", "measured"})
    EXPECT_TRUE(j["configs"][0].contains(key)) << key;
  EXPECT_TRUE(j["configs"][0]["predicted"].contains("stall"));
  for (const char* s : {"throughput", "stall"})
    for (const char* e : {"median_abs_error", "max_abs_error"})
      EXPECT_TRUE(j["summary"][s][e].is_number()) << s << "." << e;
}
