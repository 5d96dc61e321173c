// Real file access for calibration and the end-to-end loader.
//
// Cold reads drop the file's pages from the page cache first
// (posix_fadvise POSIX_FADV_DONTNEED after an fdatasync, which works for any
// readable file whose pages are clean) so the next read goes to the device.
// Ignores: the device's own cache (a virtual disk may be cached by its host,
// which then shows up as a very fast "cold" read — calibration reports it as
// measured).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace mlsim::validate {

std::vector<uint8_t> read_file(const std::string& path);
void write_file(const std::string& path, const std::vector<uint8_t>& data);
// Asks the kernel to drop the file's cached pages; false if that was refused.
bool evict_page_cache(const std::string& path);
// Size in bytes (0 if it does not exist).
uint64_t file_size(const std::string& path);
// The JSON document in `path`; InputError naming the file and `expected` ("JSON written by ...") when it
// cannot be read or parsed.
nlohmann::json read_json_file(const std::string& path, const std::string& expected);

} // namespace mlsim::validate
