// The references a validation scales its predictions by (robust_measure.hpp, validate.cpp): the loader stages
// follow a reference decode of one calibration JPEG, the host GEMM consumer a reference GEMM, each against the
// profile's figure for it, the loader's fresh pages a reference page fault; the spin stays the drift check, and
// the stages' fallback where the image is missing.
#include "sim/core/base/errors.hpp"
#include "sim/validate/calib_dataset.hpp"
#include "sim/validate/image_ops.hpp"
#include "sim/validate/robust_measure.hpp"
#include "sim/validate/validate.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

using namespace mlsim::validate;

namespace {
Measured steady_run() {
  Measured m;
  m.throughput = 100.0;
  m.step_time_s = 0.16;
  return m;
}

struct Seen {
  std::vector<JobInputs> inputs;
};

ValidationReport validate_one(const std::string& image, std::ostream& log, Seen& seen) {
  ValidateOptions vo;
  vo.quick = true;
  JobConfig c; // the C++ loader with its host GEMM consumer
  c.image_set = "imagenet";
  vo.grid = {c};
  vo.robust.repeats = 1;
  vo.run = [](const JobConfig&, const JobInputs&, const RunLength&) { return steady_run(); };
  vo.calibration_reference_s = 1e-3;
  vo.calibration_gemm_reference_s = 2e-3;
  vo.calibration_decode_reference_s = 3e-3;
  vo.reference_decode_image = image;
  vo.calibration_fault_reference_s = 4e-6;
  auto predict = [&seen](const JobConfig&, const JobInputs& in) {
    seen.inputs.push_back(in);
    Prediction p;
    p.throughput = 100.0;
    p.step_time_s = 0.16;
    return p;
  };
  return run_validation(vo, predict, "test", log);
}
} // namespace

TEST(ValidateReferences, StagesFollowTheDecodeTheConsumerTheGemmTheSpinIsTheFallback) {
  if (mate_photo_sources().empty())
    GTEST_SKIP() << "mate-backgrounds (the calibration photos) is not installed";
  const auto images = build_calib_set({true, ""});
  const CalibImage* ref = reference_decode_image(images);
  ASSERT_NE(ref, nullptr);
  EXPECT_EQ(ref->set, "imagenet");
  std::ostringstream log;
  Seen seen;
  ValidationReport r = validate_one(std::filesystem::path(ref->path).filename().string(), log, seen);
  ASSERT_EQ(r.rows.size(), 1u);
  const ConfigResult& row = r.rows[0];
  ASSERT_GT(row.robust.stage_reference_s, 0.0);
  ASSERT_GT(row.robust.consumer_reference_s, 0.0);
  EXPECT_DOUBLE_EQ(row.inputs.host_speed, 3e-3 / row.robust.stage_reference_s);
  EXPECT_DOUBLE_EQ(row.inputs.consumer_speed, 2e-3 / row.robust.consumer_reference_s);
  EXPECT_DOUBLE_EQ(row.spin_speed, 1e-3 / row.robust.reference_s);
  EXPECT_DOUBLE_EQ(seen.inputs.back().host_speed, row.inputs.host_speed); // what the prediction was made with
  EXPECT_NE(log.str().find("stage reference"), std::string::npos) << log.str();
  // The fresh pages follow the reference page fault, apart from the cores' speed.
  ASSERT_GT(row.robust.fault_reference_s, 0.0);
  EXPECT_DOUBLE_EQ(row.inputs.fault_speed, 4e-6 / row.robust.fault_reference_s);
  EXPECT_DOUBLE_EQ(seen.inputs.back().fault_speed, 1.0); // measured and shown; applied only when asked
  Seen asked;
  ConfigResult again = row;
  predict_measured(again, [&asked](const JobConfig&, const JobInputs& in) {
    asked.inputs.push_back(in);
    return Prediction{};
  }, false, true);
  EXPECT_DOUBLE_EQ(asked.inputs.back().fault_speed, row.inputs.fault_speed);
  EXPECT_NE(log.str().find("page fault"), std::string::npos) << log.str();

  // The image not in the cache: the stages follow the spin, and the log says so.
  std::ostringstream log2;
  Seen seen2;
  ValidationReport r2 = validate_one("no-such-image.jpg", log2, seen2);
  EXPECT_EQ(r2.rows[0].robust.stage_reference_s, 0.0);
  EXPECT_DOUBLE_EQ(r2.rows[0].inputs.host_speed, 1e-3 / r2.rows[0].robust.reference_s);
  EXPECT_NE(log2.str().find("not in the cache"), std::string::npos) << log2.str();
}

TEST(ValidateReferences, TheDecodeReferenceTimesTheDecode) {
  Image img;
  img.width = 64;
  img.height = 48;
  img.rgb.assign(static_cast<size_t>(64 * 48 * 3), 128);
  const std::vector<unsigned char> jpeg = encode_jpeg(img, 90);
  EXPECT_GT(reference_decode_s(jpeg), 0.0);
  EXPECT_GT(reference_gemm_s(32), 0.0);
  // A minor fault is a kernel entry, a zeroed page and a page-table update: more than a cached write, and
  // far under a millisecond anywhere.
  EXPECT_GT(reference_page_fault_s(), 1e-8);
  EXPECT_LT(reference_page_fault_s(), 1e-3);
}

// A predictor that cannot simulate (a bad profile or preset) stops the validation before its first real run.
TEST(ValidateReferences, APredictorThatFailsStopsBeforeAnyMeasurement) {
  if (mate_photo_sources().empty())
    GTEST_SKIP() << "mate-backgrounds (the calibration photos) is not installed";
  build_calib_set({true, ""});
  ValidateOptions vo;
  vo.quick = true;
  JobConfig c;
  c.image_set = "imagenet";
  vo.grid = {c};
  vo.robust.repeats = 1;
  int runs = 0;
  vo.run = [&runs](const JobConfig&, const JobInputs&, const RunLength&) {
    ++runs;
    return steady_run();
  };
  std::ostringstream log;
  auto failing = [](const JobConfig&, const JobInputs&) -> Prediction {
    throw mlsim::InputError("preset.yaml:1:1: bad");
  };
  EXPECT_THROW(run_validation(vo, failing, "test", log), mlsim::InputError);
  EXPECT_EQ(runs, 0);
}
