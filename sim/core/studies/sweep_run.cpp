#include "sim/core/studies/sweep_run.hpp"

#include "sim/core/base/atomic_file.hpp"
#include "sim/core/base/csv.hpp"
#include "sim/core/base/errors.hpp"
#include "sim/core/studies/sweep_progress.hpp"
#include "sim/core/studies/sweep_row.hpp"
#include "sim/core/studies/sweep_simulate.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>

namespace mlsim {
namespace {

std::vector<std::string> axis_keys(const SweepGrid& grid) {
  std::vector<std::string> keys;
  for (const auto& a : grid.axes())
    keys.push_back(a.key);
  return keys;
}

// The rows of an existing results file, by point; checks that it belongs to this grid.
std::map<size_t, CsvRow> read_previous(const std::string& path, const CsvRow& header, const SweepGrid& grid,
                                       bool& truncated) {
  CsvFile f = parse_csv(read_text_file(path), path);
  truncated = f.truncated_tail;
  std::map<size_t, CsvRow> rows;
  if (f.header.empty())
    return rows;
  if (f.header != header)
    throw InputError(path, "", "a results file with the columns of this sweep (" + csv_line(header).substr(0, 200) + ")",
                     "the columns " + csv_line(f.header).substr(0, 200));
  for (const auto& r : f.rows) {
    size_t p = row_point(r, path);
    auto values = p < grid.size() ? grid.values(p) : std::vector<std::string>{};
    if (p >= grid.size() || !std::equal(values.begin(), values.end(), r.begin() + 1))
      throw InputError(path, "point " + r[0], "the values of this sweep's point " + r[0],
                       "other values (was the file written by another grid?)");
    rows[p] = r;
  }
  return rows;
}

void append_line(int fd, const std::string& line, const std::string& path) {
  // One write per row on an O_APPEND descriptor: a kill never leaves half a row mid-file.
  ssize_t n;
  do
    n = ::write(fd, line.data(), line.size());
  while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(line.size()))
    throw InputError(path, "", "a writable results file", std::strerror(errno));
}

std::string render(const CsvRow& header, const std::map<size_t, CsvRow>& rows) {
  std::string text = csv_line(header);
  for (const auto& [p, r] : rows)
    text += csv_line(r);
  return text;
}

} // namespace

SweepSummary run_sweep(const SweepOptions& o) {
  SweepGrid grid(o.axes);
  CsvRow header = sweep_header(axis_keys(grid));
  std::vector<std::vector<std::string>> variants(grid.size());
  for (size_t p = 0; p < grid.size(); ++p) {
    variants[p] = o.base_overrides;
    auto ov = grid.overrides(p);
    variants[p].insert(variants[p].end(), ov.begin(), ov.end());
  }
  validate_variants(o.scenario, variants); // a typo anywhere in the grid fails before anything runs

  SweepSummary summary;
  std::vector<size_t> points = grid.shard_points(o.shard);
  summary.points = points.size();
  std::map<size_t, CsvRow> rows;
  bool truncated = false;
  std::error_code existing_ec; // a name the system cannot hold is not an existing file
  bool existing = !o.out.empty() && std::filesystem::exists(o.out, existing_ec);
  if (o.resume && o.out.empty())
    throw InputError("--resume", "", "--out FILE (the results file to resume)", "no --out");
  if (o.resume && existing)
    rows = read_previous(o.out, header, grid, truncated);
  if (o.resume && existing && truncated)
    std::cerr << "mlsim sweep: " << o.out << ": dropping a last row cut short, its point runs again\n";
  std::erase_if(points, [&](size_t p) { return rows.count(p) > 0; });
  summary.skipped = summary.points - points.size();

  int fd = -1;
  if (!o.out.empty()) {
    // A fresh file or a clean resumed one (a cut row removed) starts as header + the rows kept.
    if (!o.resume || !existing || truncated || rows.empty())
      write_file_atomically(o.out, render(header, rows));
    fd = ::open(o.out.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0)
      throw InputError(o.out, "", "a writable results file", std::strerror(errno));
  }

  SweepProgress progress(o.progress, points.size(), summary.skipped);
  size_t appended = 0;
  try {
    simulate_variants(o.scenario, variants, points, o.jobs, [&](size_t p, const VariantResult& r) {
      CsvRow row = sweep_row(p, grid.values(p), r.ok ? &r.metrics : nullptr, r.error);
      rows[p] = row;
      ++summary.ran;
      summary.failed += r.ok ? 0 : 1;
      if (fd >= 0)
        append_line(fd, csv_line(row), o.out);
      progress.update(summary.ran, summary.failed);
      if (o.stop_after > 0 && ++appended >= o.stop_after) {
        std::cerr << "\nmlsim sweep: stopping after " << appended << " points (MLSIM_SWEEP_STOP_AFTER)\n";
        std::_Exit(75); // like a kill: no cleanup, no final rewrite
      }
    });
  } catch (...) {
    if (fd >= 0)
      ::close(fd);
    throw;
  }
  progress.finish();
  if (fd >= 0) {
    ::close(fd);
    write_file_atomically(o.out, render(header, rows)); // complete: grid order
  } else {
    std::cout << render(header, rows);
  }
  return summary;
}

} // namespace mlsim
