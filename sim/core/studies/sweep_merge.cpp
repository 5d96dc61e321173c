#include "sim/core/studies/sweep_merge.hpp"

#include "sim/core/base/csv.hpp"
#include "sim/core/base/errors.hpp"
#include "sim/core/studies/sweep_row.hpp"

#include <map>

namespace mlsim {

MergeResult merge_results(const std::vector<std::string>& files) {
  if (files.empty())
    throw InputError("mlsim merge", "", "at least one results file", "none");
  MergeResult result;
  CsvRow header;
  std::string header_file;
  std::map<size_t, std::pair<CsvRow, std::string>> rows; // point -> row, the file it came from
  for (const auto& file : files) {
    CsvFile f = parse_csv(read_text_file(file), file);
    if (f.header.empty()) {
      result.warnings.push_back(file + ": empty, skipped");
      continue;
    }
    if (f.header.size() < 2 || f.header[0] != "point")
      throw InputError(file, "", "a sweep results file (first column 'point')", "'" + f.header[0] + "'");
    if (header.empty()) {
      header = f.header;
      header_file = file;
    } else if (f.header != header) {
      throw InputError(file, "", "the columns of " + header_file + " (" + csv_line(header).substr(0, 200) + ")",
                       csv_line(f.header).substr(0, 200));
    }
    if (f.truncated_tail)
      result.warnings.push_back(file + ": a last row cut short was ignored (rerun that shard with --resume)");
    for (auto& r : f.rows) {
      size_t p = row_point(r, file);
      auto it = rows.find(p);
      if (it != rows.end() && it->second.first != r)
        throw InputError(file, "point " + r[0], "the same row as in " + it->second.second,
                         "a different one (files of different sweeps?)");
      rows.emplace(p, std::make_pair(r, file));
    }
  }
  result.text = header.empty() ? std::string() : csv_line(header);
  size_t expect = 0;
  for (const auto& [p, entry] : rows) {
    for (; expect < p; ++expect)
      result.missing.push_back(expect);
    expect = p + 1;
    result.text += csv_line(entry.first);
  }
  result.rows = rows.size();
  return result;
}

} // namespace mlsim
