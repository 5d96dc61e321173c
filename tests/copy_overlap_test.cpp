// The host-to-device copy on its own stream, one batch ahead: a two-stage
// pipeline (copy, compute) whose step is max(copy, compute) once it runs,
// against the serialised copy whose step is copy + compute. The two parts
// are read from the serialised run; the overlapped step is their closed form.
#include "test_support.hpp"

#include <gtest/gtest.h>

using namespace mlsim;

namespace {
double step(const nlohmann::ordered_json& j) { return j["step_time_s"]["mean"].get<double>(); }
double part(const nlohmann::ordered_json& j, const char* name) { return j["breakdown"][name].get<double>() * step(j); }

// A fast input pipeline (data in RAM, 10 us per sample) so only the copy and the compute matter.
std::vector<std::string> with(const std::string& sample_size, const std::string& copy) {
  return {"dataset.sample_size=" + sample_size, "pipeline.copy=" + copy};
}
} // namespace

TEST(CopyOverlap, SerialisedCopyAddsOverlappedCopyHides) {
  const std::string yaml = fixtures::base_scenario(1, 0.01, 1.0);
  for (const char* size : {"1 MB", "8 MB"}) { // copy shorter, then longer, than the compute
    auto serial = fixtures::run(yaml, with(size, "serialized"));
    auto overlapped = fixtures::run(yaml, with(size, "overlapped"));
    double copy = part(serial, "h2d"), compute = part(serial, "device_compute");
    ASSERT_GT(copy, 0.0) << size;
    EXPECT_NEAR(step(serial), copy + compute + part(serial, "input"), 0.01 * step(serial)) << size;
    EXPECT_NEAR(step(overlapped), std::max(copy, compute), 0.02 * std::max(copy, compute)) << size;
    // What stays of the copy in the step is what the compute did not cover.
    EXPECT_NEAR(part(overlapped, "h2d"), std::max(0.0, copy - compute), 0.02 * copy + 1e-6) << size;
  }
}

TEST(CopyOverlap, PageableMemoryCannotOverlap) {
  const std::string yaml = fixtures::base_scenario(1, 0.01, 1.0);
  EXPECT_THROW(fixtures::load(yaml, {"pipeline.pin_memory=false", "pipeline.copy=overlapped"}), InputError);
  // The default follows: pinned and prefetching -> overlapped; pageable -> serialised.
  EXPECT_EQ(fixtures::load(yaml).pipeline.copy, CopyMode::overlapped);
  EXPECT_EQ(fixtures::load(yaml, {"pipeline.pin_memory=false"}).pipeline.copy, CopyMode::serialized);
  EXPECT_EQ(fixtures::load(yaml, {"pipeline.prefetch=0"}).pipeline.copy, CopyMode::serialized);
}
