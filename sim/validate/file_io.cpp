#include "sim/validate/file_io.hpp"

#include "sim/core/base/errors.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace mlsim::validate {

namespace {
std::runtime_error io_error(const std::string& what, const std::string& path) {
  return std::runtime_error(what + " " + path + ": " + std::strerror(errno));
}
} // namespace

std::vector<uint8_t> read_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw io_error("cannot open", path);
  struct stat st {};
  ::fstat(fd, &st);
  std::vector<uint8_t> data(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::read(fd, data.data() + done, data.size() - done);
    if (n <= 0) {
      ::close(fd);
      throw io_error("cannot read", path);
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  return data;
}

void write_file(const std::string& path, const std::vector<uint8_t>& data) {
  std::string tmp = path + ".part";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    throw io_error("cannot create", tmp);
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n <= 0) {
      ::close(fd);
      throw io_error("cannot write", tmp);
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0)
    throw io_error("cannot rename to", path);
}

bool evict_page_cache(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  ::fdatasync(fd); // dirty pages cannot be dropped; write them back first
  bool ok = ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0;
  ::close(fd);
  return ok;
}

uint64_t file_size(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return 0;
  return static_cast<uint64_t>(st.st_size);
}

nlohmann::json read_json_file(const std::string& path, const std::string& expected) {
  std::ifstream in(path);
  if (!in)
    throw InputError(path, "", "a readable file of " + expected, "no such file");
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(path, "", expected, std::string("invalid JSON: ") + e.what());
  }
}

} // namespace mlsim::validate
