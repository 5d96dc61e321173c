#include "sim/core/run/isolated.hpp"

#include "sim/core/base/atomic_file.hpp"
#include "sim/core/base/errors.hpp"
#include "sim/core/run/metrics.hpp"
#include "sim/core/run/report_json.hpp"
#include "sim/core/run/simulation.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace mlsim {
namespace {

nlohmann::ordered_json simulate_loaded(const std::function<Scenario()>& load) {
  std::string text = run_in_child([&] {
    Scenario s = load();
    SimulationOutput out = simulate(s);
    return metrics_to_json(compute_metrics(s, out)).dump();
  });
  return nlohmann::ordered_json::parse(text);
}

} // namespace

void child_main(int fd, const std::function<std::string()>& work) {
  char tag = 'O';
  std::string body;
  try {
    body = work();
  } catch (const InputError& e) {
    tag = 'I';
    body = e.what();
  } catch (const std::exception& e) {
    tag = 'E';
    body = e.what();
  }
  write_fully(fd, std::string(1, tag) + body); // a parent gone: nobody to tell
  ::close(fd);
  std::_Exit(0);
}

pid_t fork_tied_to_parent() {
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid == 0) {
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent)
      std::_Exit(1); // orphaned already: nobody reads the result
  }
  return pid;
}

std::string run_in_child(const std::function<std::string()>& work) {
  int fds[2];
  if (::pipe(fds) != 0)
    throw InternalError("pipe() failed");
  pid_t pid = fork_tied_to_parent();
  if (pid < 0)
    throw InternalError("fork() failed");
  if (pid == 0) {
    ::close(fds[0]);
    child_main(fds[1], work);
  }
  ::close(fds[1]);
  std::string result;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n <= 0)
      break;
    result.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (result.empty())
    throw InternalError("the simulation process died (status " + std::to_string(status) + ")");
  char tag = result[0];
  result.erase(0, 1);
  if (tag == 'I')
    throw InputError(result);
  if (tag != 'O')
    throw InternalError(result);
  return result;
}

nlohmann::ordered_json simulate_file_in_child(const std::string& file, const std::vector<std::string>& overrides) {
  return simulate_loaded([&] { return load_scenario_file(file, overrides); });
}

nlohmann::ordered_json simulate_scenario_text(const std::string& yaml, const std::vector<std::string>& overrides,
                                              const std::string& name) {
  return simulate_loaded([&] {
    ConfigNode root = ConfigNode::load_string(yaml, name);
    if (!overrides.empty())
      root = ConfigNode::with_overrides(root, overrides);
    Scenario s = load_scenario(root);
    s.file = name;
    return s;
  });
}

} // namespace mlsim
