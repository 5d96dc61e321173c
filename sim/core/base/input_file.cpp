#include "sim/core/base/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace mlsim {
namespace {

std::string mib(std::size_t bytes) { return std::to_string((bytes + (1u << 20) - 1) >> 20) + " MiB"; }

std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISSOCK(mode))
    return "a socket";
  return "not a regular file";
}

class Fd {
public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0)
      ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

private:
  int fd_;
};

} // namespace

std::string bounded_file_expectation(std::size_t limit) { return "a regular file of at most " + mib(limit); }

std::optional<std::string> read_bounded_file(const std::string& path, std::size_t limit, std::string& why) {
  // O_NONBLOCK: opening a FIFO with no writer must not wait; fstat on the open
  // descriptor then decides, so the file checked is the file read.
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (fd.get() < 0) {
    why = std::strerror(errno);
    return std::nullopt;
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    why = std::strerror(errno);
    return std::nullopt;
  }
  if (!S_ISREG(st.st_mode)) {
    why = kind_of(st.st_mode);
    return std::nullopt;
  }
  if (static_cast<std::size_t>(st.st_size) > limit) {
    why = "a file of " + mib(static_cast<std::size_t>(st.st_size)) + ", over the limit of " + mib(limit);
    return std::nullopt;
  }
  std::string text;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      why = std::strerror(errno);
      return std::nullopt;
    }
    if (n == 0)
      break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > limit) { // it grew while being read
      why = "a file growing past the limit of " + mib(limit);
      return std::nullopt;
    }
  }
  return text;
}

} // namespace mlsim
