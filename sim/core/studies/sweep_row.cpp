#include "sim/core/studies/sweep_row.hpp"

#include "sim/core/base/errors.hpp"
#include "sim/core/studies/sweep_grid.hpp"

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

std::string num(double v) { return fmt::format("{}", v); }

} // namespace

CsvRow sweep_header(const std::vector<std::string>& axis_keys) {
  CsvRow h{"point"};
  h.insert(h.end(), axis_keys.begin(), axis_keys.end());
  h.push_back("status");
  h.insert(h.end(), figure_columns().begin(), figure_columns().end());
  h.push_back("error");
  return h;
}

CsvRow sweep_row(size_t point, const std::vector<std::string>& values, const RunMetrics* report,
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
  const RunMetrics& m = *report;
  r.push_back("ok");
  r.push_back(num(m.step_mean));
  r.push_back(num(m.step_p99));
  r.push_back(num(m.throughput));
  r.push_back(num(m.breakdown.input));
  r.push_back(num(m.accelerator_utilization));
  r.push_back(m.bottleneck_kind);
  r.push_back(m.bottleneck_name);
  r.push_back(num(m.bottleneck_utilization));
  r.push_back(num(m.cost_per_hour));
  r.push_back(num(m.cost_per_step()));
  r.push_back(num(m.cost_per_epoch()));
  r.push_back(num(m.cost_per_million()));
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

std::optional<double> report_figure(const RunMetrics& m, const std::string& name) {
  if (name == "step_time")
    return m.step_mean;
  if (name == "step_time_p99")
    return m.step_p99;
  if (name == "throughput")
    return m.throughput;
  if (name == "stall")
    return m.breakdown.input;
  if (name == "utilization")
    return m.accelerator_utilization;
  if (name == "cost_per_step")
    return m.cost_per_step();
  if (name == "cost_per_epoch")
    return m.cost_per_epoch();
  if (name == "cost_per_million")
    return m.cost_per_million();
  return std::nullopt;
}

} // namespace mlsim
