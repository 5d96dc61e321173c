#include "sim/core/base/atomic_file.hpp"

#include "sim/core/base/errors.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace mlsim {
namespace {

namespace fs = std::filesystem;

// Temporaries a signal handler must remove: plain C strings in a fixed table,
// read without locks or allocation (async-signal-safe), each with the pid that
// owns it so that a forked child never removes its parent's.
constexpr int kRegistrySize = 64;
std::atomic<const char*> g_temp_paths[kRegistrySize];
std::atomic<pid_t> g_temp_owners[kRegistrySize];

int register_temp(const std::string& path) {
  const char* copy = ::strdup(path.c_str());
  for (int i = 0; i < kRegistrySize; ++i) {
    const char* expected = nullptr;
    if (g_temp_paths[i].compare_exchange_strong(expected, copy)) {
      g_temp_owners[i].store(::getpid());
      return i;
    }
  }
  std::free(const_cast<char*>(copy)); // a full table: the stale-temporary sweep of a later run still cleans up
  return -1;
}

void unregister_temp(int slot) {
  if (slot < 0)
    return;
  const char* p = g_temp_paths[slot].exchange(nullptr);
  std::free(const_cast<char*>(p));
}

void remove_temps_on_signal(int sig) {
  pid_t self = ::getpid();
  for (int i = 0; i < kRegistrySize; ++i) {
    const char* p = g_temp_paths[i].load();
    if (p && g_temp_owners[i].load() == self)
      ::unlink(p);
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

std::string temp_prefix(const fs::path& target) { return "." + target.filename().string() + ".mlsim-tmp."; }

// Removes temporaries of `target` left by processes that no longer exist (a SIGKILL, a power cut).
void remove_stale_temps(const fs::path& target) {
  fs::path dir = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  std::string prefix = temp_prefix(target);
  DIR* d = ::opendir(dir.c_str());
  if (!d)
    return;
  while (const dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name.rfind(prefix, 0) != 0)
      continue;
    char* end = nullptr;
    long pid = std::strtol(name.c_str() + prefix.size(), &end, 10);
    if (*end != '\0' || pid <= 0 || pid == ::getpid())
      continue;
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
      ::unlink((dir / name).c_str());
  }
  ::closedir(d);
}

// The file a write to `path` should replace: the end of its chain of symbolic links.
fs::path write_target(const std::string& path) {
  std::error_code ec;
  if (!fs::is_symlink(path, ec))
    return path;
  fs::path target = fs::weakly_canonical(path, ec);
  return ec ? fs::path(path) : target;
}

} // namespace

bool write_fully(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

std::size_t OutputSet::add(const std::string& option, const std::string& path) {
  Output o;
  o.option = option;
  o.path = path;
  fs::path target = write_target(path);
  o.target = target.string();
  for (const auto& other : outputs_)
    if (other.target == o.target)
      throw InputError(path, option, "a different file from " + other.option + " " + other.path, "the same file");
  std::error_code ec;
  if (fs::is_directory(target, ec))
    throw InputError(path, option, "a file to write", "a directory");
  remove_stale_temps(target);
  o.temp = (target.parent_path() / (temp_prefix(target) + std::to_string(::getpid()))).string();
  ::unlink(o.temp.c_str()); // this process's own leftover (a pid reused after a kill)
  mode_t mode = 0666;
  struct stat st {};
  if (::stat(o.target.c_str(), &st) == 0) // replacing a file keeps its permissions
    mode = st.st_mode & 07777;
  o.fd = ::open(o.temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (o.fd < 0)
    throw InputError(path, option, "a writable output path", std::strerror(errno));
  if (mode != 0666)
    ::fchmod(o.fd, mode);
  o.registry_slot = register_temp(o.temp);
  outputs_.push_back(std::move(o));
  return outputs_.size() - 1;
}

void OutputSet::set(std::size_t slot, std::string content) { outputs_.at(slot).content = std::move(content); }

void OutputSet::commit() {
  for (auto& o : outputs_) { // every temporary complete before any target changes
    if (!write_fully(o.fd, o.content))
      throw InputError(o.path, o.option, "room to write the output", std::strerror(errno));
    if (::close(o.fd) != 0) {
      o.fd = -1;
      throw InputError(o.path, o.option, "room to write the output", std::strerror(errno));
    }
    o.fd = -1;
  }
  for (auto& o : outputs_) {
    if (::rename(o.temp.c_str(), o.target.c_str()) != 0)
      throw InputError(o.path, o.option, "a writable output path", std::strerror(errno));
    unregister_temp(o.registry_slot);
    o.registry_slot = -1;
    o.temp.clear();
  }
  outputs_.clear();
}

void OutputSet::discard() {
  for (auto& o : outputs_) {
    if (o.fd >= 0)
      ::close(o.fd);
    if (!o.temp.empty())
      ::unlink(o.temp.c_str());
    unregister_temp(o.registry_slot);
  }
  outputs_.clear();
}

OutputSet::~OutputSet() { discard(); }

void write_file_atomically(const std::string& path, const std::string& content) {
  OutputSet set;
  set.set(set.add("", path), content);
  set.commit();
}

void check_output_path(const std::string& option, const std::string& path) {
  OutputSet probe;
  probe.add(option, path);
}

void install_output_cleanup_on_signals() {
  struct sigaction sa {};
  sa.sa_handler = remove_temps_on_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP})
    ::sigaction(sig, &sa, nullptr);
}

} // namespace mlsim
