#include "sim/validate/idx_reader.hpp"

#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>

namespace mlsim::validate {

namespace {
struct GzFile {
  gzFile f;
  explicit GzFile(const std::string& path) : f(gzopen(path.c_str(), "rb")) {
    if (!f)
      throw std::runtime_error("cannot open " + path);
    gzbuffer(f, 1 << 17);
  }
  ~GzFile() { gzclose(f); }
  void read_exact(void* dst, size_t n, const std::string& path) {
    auto* p = static_cast<uint8_t*>(dst);
    while (n > 0) {
      unsigned chunk = static_cast<unsigned>(std::min<size_t>(n, 1u << 30));
      int got = gzread(f, p, chunk);
      if (got <= 0)
        throw std::runtime_error("truncated IDX file " + path);
      p += got;
      n -= static_cast<size_t>(got);
    }
  }
};
uint32_t be32(const uint8_t* b) {
  return (uint32_t(b[0]) << 24) | (uint32_t(b[1]) << 16) | (uint32_t(b[2]) << 8) | uint32_t(b[3]);
}
} // namespace

IdxData read_idx_gz(const std::string& path, uint32_t max_records) {
  GzFile gz(path);
  uint8_t magic[4];
  gz.read_exact(magic, 4, path);
  if (magic[0] != 0 || magic[1] != 0 || magic[2] != 0x08 || magic[3] == 0 || magic[3] > 4)
    throw std::runtime_error("not a uint8 IDX file: " + path);
  IdxData d;
  d.record_bytes = 1;
  for (int i = 0; i < magic[3]; ++i) {
    uint8_t b[4];
    gz.read_exact(b, 4, path);
    d.dims.push_back(be32(b));
    if (i > 0)
      d.record_bytes *= d.dims.back();
  }
  d.records = std::min(d.dims[0], max_records);
  d.data.resize(static_cast<size_t>(d.records) * d.record_bytes);
  gz.read_exact(d.data.data(), d.data.size(), path);
  return d;
}

std::string fashion_mnist_dir() {
  const char* candidates[] = {"/usr/share/datasets/fashion-mnist"};
  for (const char* c : candidates)
    if (std::filesystem::exists(std::filesystem::path(c) / "t10k-images-idx3-ubyte.gz"))
      return c;
  return "";
}

} // namespace mlsim::validate
