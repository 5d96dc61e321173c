#include "sim/core/base/csv.hpp"

#include "sim/core/base/errors.hpp"
#include "sim/core/base/input_file.hpp"

#include <sstream>

namespace mlsim {

std::string csv_line(const CsvRow& fields) {
  std::string line;
  for (size_t i = 0; i < fields.size(); ++i) {
    const std::string& f = fields[i];
    if (i > 0)
      line += ',';
    if (f.find_first_of(",\"\r\n") == std::string::npos) {
      line += f;
      continue;
    }
    line += '"';
    for (char c : f) {
      if (c == '"')
        line += '"';
      line += c;
    }
    line += '"';
  }
  line += '\n';
  return line;
}

CsvFile parse_csv(const std::string& text, const std::string& name) {
  CsvFile file;
  CsvRow row;
  std::string field;
  bool quoted = false, field_started = false;
  size_t line_no = 1;
  auto end_row = [&] {
    row.push_back(field);
    field.clear();
    field_started = false;
    if (file.header.empty()) {
      file.header = row;
    } else if (!(row.size() == 1 && row[0].empty())) { // skip blank lines
      if (row.size() != file.header.size())
        throw InputError(name + ":" + std::to_string(line_no), "", std::to_string(file.header.size()) + " fields like the header",
                         std::to_string(row.size()));
      file.rows.push_back(row);
    }
    row.clear();
  };
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
      continue;
    }
    if (c == '"' && !field_started) {
      quoted = true;
      field_started = true;
    } else if (c == ',') {
      row.push_back(field);
      field.clear();
      field_started = false;
    } else if (c == '\n') {
      end_row();
      ++line_no;
    } else if (c != '\r') {
      field += c;
      field_started = true;
    }
  }
  // Anything after the last newline is a row cut short by a kill: report it, don't trust it.
  file.truncated_tail = quoted || !row.empty() || !field.empty();
  return file;
}

std::string read_text_file(const std::string& path) {
  std::string why;
  auto text = read_bounded_file(path, kMaxResultsFileBytes, why);
  if (!text)
    throw InputError(path, "", "a readable file (" + bounded_file_expectation(kMaxResultsFileBytes) + ")", why);
  return *text;
}

} // namespace mlsim
