// A run's figures have one JSON form: metrics_from_json reads back exactly what metrics_to_json wrote
// (every reader of a report goes through it), and a report that lacks a figure is an internal error,
// not a silent zero.
#include "sim/core/base/errors.hpp"
#include "sim/core/run/report_json.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <cmath>

using mlsim::metrics_from_json;
using mlsim::metrics_to_json;

TEST(TypedResults, ReportReadsBackToTheSameBytes) {
  auto report = mlsim::fixtures::run(mlsim::fixtures::base_scenario(2, 2.0));
  mlsim::RunMetrics m = metrics_from_json(report);
  EXPECT_EQ(metrics_to_json(m).dump(2), report.dump(2));
  // The typed figures are the report's, read by name.
  EXPECT_EQ(m.ranks, 2);
  EXPECT_DOUBLE_EQ(m.step_mean, report["step_time_s"]["mean"].get<double>());
  EXPECT_DOUBLE_EQ(m.breakdown.input, report["breakdown"]["input"].get<double>());
  EXPECT_DOUBLE_EQ(m.cost_per_million(), report["cost"]["per_million_samples_usd"].get<double>());
}

TEST(TypedResults, AMissingFigureIsAnInternalError) {
  auto report = mlsim::fixtures::run(mlsim::fixtures::base_scenario());
  report.erase("breakdown");
  EXPECT_THROW(metrics_from_json(report), mlsim::InternalError);
}

TEST(TypedResults, NotANumberSurvivesTheRoundTrip) {
  mlsim::RunMetrics m;
  m.scenario = "nan";
  m.bottleneck_utilization = std::nan("");
  auto j = nlohmann::ordered_json::parse(metrics_to_json(m).dump()); // as a child or a file hands it over
  EXPECT_TRUE(j["bottleneck"]["utilization"].is_null());               // JSON has no NaN
  EXPECT_TRUE(std::isnan(metrics_from_json(j).bottleneck_utilization));
  EXPECT_EQ(metrics_to_json(metrics_from_json(j)).dump(), j.dump());
}
