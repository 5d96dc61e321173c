#include "sim/core/studies/child_pool.hpp"

#include "sim/core/base/errors.hpp"
#include "sim/core/run/isolated.hpp"

#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace mlsim {
namespace {

struct Child {
  size_t task = 0;
  pid_t pid = -1;
  int fd = -1;
  std::string data;
};

[[noreturn]] void child_main(int fd, size_t task, const std::function<std::string(size_t)>& work) {
  mlsim::child_main(fd, [&] { return work(task); });
}

Child spawn(size_t task, const std::vector<Child>& running, const std::function<std::string(size_t)>& work) {
  int fds[2];
  if (::pipe(fds) != 0)
    throw InternalError(std::string("pipe() failed: ") + std::strerror(errno));
  pid_t pid = fork_tied_to_parent();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw InternalError(std::string("fork() failed: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(fds[0]);
    for (const auto& c : running) // the siblings' pipes are none of this child's business
      ::close(c.fd);
    child_main(fds[1], task, work);
  }
  ::close(fds[1]);
  return Child{task, pid, fds[0], {}};
}

ChildOutcome reap(Child& c) {
  ::close(c.fd);
  int status = 0;
  while (::waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
  }
  ChildOutcome out;
  if (c.data.empty()) {
    out.kind = ChildOutcome::Kind::error;
    out.text = WIFSIGNALED(status) ? "the simulation process died (signal " + std::to_string(WTERMSIG(status)) + ")"
                                   : "the simulation process died (exit status " +
                                         std::to_string(WEXITSTATUS(status)) + ")";
    return out;
  }
  char tag = c.data[0];
  out.text = c.data.substr(1);
  out.kind = tag == 'O' ? ChildOutcome::Kind::ok : tag == 'I' ? ChildOutcome::Kind::input_error
                                                              : ChildOutcome::Kind::error;
  return out;
}

void kill_all(std::vector<Child>& running) {
  for (auto& c : running) {
    ::kill(c.pid, SIGKILL);
    ::close(c.fd);
    while (::waitpid(c.pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  running.clear();
}

} // namespace

void run_in_children(const std::vector<size_t>& tasks, int jobs, const std::function<std::string(size_t)>& work,
                     const std::function<void(size_t, const ChildOutcome&)>& on_done) {
  if (jobs < 1)
    jobs = 1;
  std::vector<Child> running;
  size_t next = 0;
  try {
    while (next < tasks.size() || !running.empty()) {
      while (next < tasks.size() && running.size() < static_cast<size_t>(jobs))
        running.push_back(spawn(tasks[next++], running, work));
      std::vector<pollfd> fds;
      for (const auto& c : running)
        fds.push_back(pollfd{c.fd, POLLIN, 0});
      int n = ::poll(fds.data(), fds.size(), -1);
      if (n < 0) {
        if (errno == EINTR)
          continue;
        throw InternalError(std::string("poll() failed: ") + std::strerror(errno));
      }
      // Walk backwards so that erasing a finished child keeps the other indices valid.
      for (size_t i = fds.size(); i-- > 0;) {
        if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
          continue;
        char buf[65536];
        ssize_t got = ::read(running[i].fd, buf, sizeof buf);
        if (got < 0 && errno == EINTR)
          continue;
        if (got > 0) {
          running[i].data.append(buf, static_cast<size_t>(got));
          continue;
        }
        Child done = running[i];
        running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
        on_done(done.task, reap(done));
      }
    }
  } catch (...) {
    kill_all(running);
    throw;
  }
}

int available_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0)
      return n;
  }
  unsigned hw = std::thread::hardware_concurrency();
  return hw > 0 ? static_cast<int>(hw) : 1;
}

} // namespace mlsim
