#include "sim/core/sweep_row.hpp"

#include "sim/core/errors.hpp"
#include "sim/core/sweep_grid.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cstdlib>

namespace mlsim {
namespace {

const std::vector<std::string>& figure_columns() {
  static const std::vector<std::string> cols = {
      "step_time_s",       "step_time_p99_s",        "throughput_samples_per_s", "stall_share",
      "accelerator_utilization", "bottleneck_kind", "bottleneck_name",          "bottleneck_utilization",
      "cost_per_hour_usd", "cost_per_step_usd",      "cost_per_epoch_usd",       "cost_per_million_samples_usd"};
  return cols;
}

std::string num(const nlohmann::ordered_json& v) { return fmt::format("{}", v.get<double>()); }

} // namespace

CsvRow sweep_header(const std::vector<std::string>& axis_keys) {
  CsvRow h{"point"};
  h.insert(h.end(), axis_keys.begin(), axis_keys.end());
  h.push_back("status");
  h.insert(h.end(), figure_columns().begin(), figure_columns().end());
  h.push_back("error");
  return h;
}

CsvRow sweep_row(size_t point, const std::vector<std::string>& values, const nlohmann::ordered_json* report,
                 const std::string& error) {
  CsvRow r{std::to_string(point)};
  r.insert(r.end(), values.begin(), values.end());
  if (!report) {
    r.push_back("error");
    r.insert(r.end(), figure_columns().size(), "");
    // One line per row keeps the file friendly to grep and wc -l.
    std::string msg = error;
    for (char& c : msg)
      if (c == '\n' || c == '\r')
        c = ' ';
    r.push_back(msg);
    return r;
  }
  const auto& j = *report;
  r.push_back("ok");
  r.push_back(num(j["step_time_s"]["mean"]));
  r.push_back(num(j["step_time_s"]["p99"]));
  r.push_back(num(j["throughput_samples_per_s"]));
  r.push_back(num(j["breakdown"]["input"]));
  r.push_back(num(j["accelerator_utilization"]));
  r.push_back(j["bottleneck"]["kind"].get<std::string>());
  r.push_back(j["bottleneck"]["name"].get<std::string>());
  r.push_back(num(j["bottleneck"]["utilization"]));
  r.push_back(num(j["cost"]["per_hour_usd"]));
  r.push_back(num(j["cost"]["per_step_usd"]));
  r.push_back(num(j["cost"]["per_epoch_usd"]));
  r.push_back(num(j["cost"]["per_million_samples_usd"]));
  r.push_back("");
  return r;
}

size_t row_point(const CsvRow& row, const std::string& file) {
  char* end = nullptr;
  bool digits = !row.empty() && !row[0].empty() && std::isdigit(static_cast<unsigned char>(row[0][0]));
  unsigned long long p = digits ? std::strtoull(row[0].c_str(), &end, 10) : 0;
  if (!digits || *end != '\0')
    throw InputError(file, "point", "a point number in the first column", row.empty() ? "nothing" : "'" + row[0] + "'");
  if (p >= kMaxSweepPoints) // a grid never has more: a larger number would make merge list billions of gaps
    throw InputError(file, "point", "a point number below the grid limit " + std::to_string(kMaxSweepPoints),
                     "'" + row[0] + "'");
  return static_cast<size_t>(p);
}

std::vector<std::string> figure_names() {
  return {"step_time", "step_time_p99", "throughput", "stall", "utilization",
          "cost_per_step", "cost_per_epoch", "cost_per_million"};
}

std::optional<double> report_figure(const nlohmann::ordered_json& j, const std::string& name) {
  if (name == "step_time")
    return j["step_time_s"]["mean"].get<double>();
  if (name == "step_time_p99")
    return j["step_time_s"]["p99"].get<double>();
  if (name == "throughput")
    return j["throughput_samples_per_s"].get<double>();
  if (name == "stall")
    return j["breakdown"]["input"].get<double>();
  if (name == "utilization")
    return j["accelerator_utilization"].get<double>();
  if (name == "cost_per_step")
    return j["cost"]["per_step_usd"].get<double>();
  if (name == "cost_per_epoch")
    return j["cost"]["per_epoch_usd"].get<double>();
  if (name == "cost_per_million")
    return j["cost"]["per_million_samples_usd"].get<double>();
  return std::nullopt;
}

} // namespace mlsim
