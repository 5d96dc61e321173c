// The CSV row of one sweep point: its number, the varied values, then the key
// figures of its JSON report (see report_json.hpp), in a fixed column order:
//
//   point, <one column per --vary key>, status,
//   step_time_s, step_time_p99_s, throughput_samples_per_s, stall_share,
//   accelerator_utilization, bottleneck_kind, bottleneck_name,
//   bottleneck_utilization, cost_per_hour_usd, cost_per_step_usd,
//   cost_per_epoch_usd, cost_per_million_samples_usd, error
//
// status is "ok" or "error"; a failed point has empty figures and the message
// in `error`. stall_share is the input (waiting for data) share of the step.
// Numbers are written in their shortest round-trip form, so the same
// simulation gives the same bytes.
#pragma once

#include "sim/core/base/csv.hpp"
#include "sim/core/run/metrics.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace mlsim {

CsvRow sweep_header(const std::vector<std::string>& axis_keys);

// A row for point p; `report` is its JSON report, or nullopt with `error` set.
CsvRow sweep_row(size_t point, const std::vector<std::string>& values, const RunMetrics* report,
                 const std::string& error);

// Reads the point number of a row (column 0); InputError naming `file` if not a number.
size_t row_point(const CsvRow& row, const std::string& file);

// The named figure of a JSON report, as a double. Names: step_time, step_time_p99,
// throughput, stall, utilization, cost_per_step, cost_per_epoch, cost_per_million.
// Returns nullopt for an unknown name.
std::optional<double> report_figure(const RunMetrics& report, const std::string& name);
std::vector<std::string> figure_names();

} // namespace mlsim
