// Minimal RFC 4180 CSV: quoting on write, quoted fields on read.
//
// Sweep results are CSV files that people open in pandas and spreadsheets,
// and that `mlsim merge` / `--resume` read back. A field is quoted when it
// holds a comma, a quote or a line break (error messages can); doubled quotes
// escape a quote. Reading stops at an incomplete last line (a sweep killed
// mid-write leaves one at most), which is reported, not parsed.
#pragma once

#include <string>
#include <vector>

namespace mlsim {

using CsvRow = std::vector<std::string>;

// One line with its trailing "\n".
std::string csv_line(const CsvRow& fields);

struct CsvFile {
  CsvRow header;
  std::vector<CsvRow> rows;
  bool truncated_tail = false; // the file ended inside a row (no final newline)
};

// Parses CSV text; the first row is the header. Throws InputError naming `name`
// for a row whose field count differs from the header's.
CsvFile parse_csv(const std::string& text, const std::string& name);

// Reads a whole file (InputError when it cannot be read).
std::string read_text_file(const std::string& path);

} // namespace mlsim
