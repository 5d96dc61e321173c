// Parser for the gzip-compressed IDX record format (MNIST, Fashion-MNIST).
//
// Reads the big-endian header (magic 0x0000 08 <ndims>, then one uint32 per
// dimension) and up to `max_records` records of uint8 data through zlib's
// gzread: the cost is dominated by inflate, so it scales with the bytes
// parsed. Ignores: data types other than uint8 (0x08), which Fashion-MNIST
// does not use.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mlsim::validate {

struct IdxData {
  std::vector<uint32_t> dims; // dims[0] = number of records in the file
  uint32_t records = 0;       // records actually read
  size_t record_bytes = 0;    // product of dims[1..]
  std::vector<uint8_t> data;  // records * record_bytes
};

// Throws std::runtime_error on a missing or malformed file.
IdxData read_idx_gz(const std::string& path, uint32_t max_records = UINT32_MAX);

// Where dataset-fashion-mnist installs its files (empty if absent).
std::string fashion_mnist_dir();

} // namespace mlsim::validate
