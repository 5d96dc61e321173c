#include "cli_runner.hpp"

#include "test_support.hpp"

#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace mlsim::fixtures {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

ProcessResult run_process(const std::vector<std::string>& args, const ProcessOptions& o) {
  static int calls = 0;
  std::string base = "/tmp/mlsim_cli_" + std::to_string(::getpid()) + "_" + std::to_string(++calls);
  std::string out_path = base + ".out", err_path = base + ".err";
  std::string binary = mlsim_binary();
  std::vector<std::string> argv_s{binary};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<std::string> env_s;
  for (char** e = environ; *e; ++e)
    env_s.emplace_back(*e);
  env_s.insert(env_s.end(), o.env.begin(), o.env.end());
  auto start = std::chrono::steady_clock::now();
  pid_t pid = ::fork();
  if (pid == 0) {
    int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(out, 1);
    ::dup2(err, 2);
    std::vector<char*> argv, envp;
    for (auto& a : argv_s)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    for (auto& e : env_s)
      envp.push_back(e.data());
    envp.push_back(nullptr);
    ::execve(binary.c_str(), argv.data(), envp.data());
    ::_exit(127);
  }
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  int status = 0;
  bool sent = false;
  for (;;) {
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid)
      break;
    if (o.send_after > 0 && !sent && elapsed() >= o.send_after) {
      ::kill(pid, o.send_signal);
      sent = true;
    }
    if (elapsed() > o.timeout)
      ::kill(pid, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ProcessResult res;
  res.seconds = elapsed();
  if (WIFEXITED(status))
    res.exit_code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    res.signal = WTERMSIG(status);
  res.out = slurp(out_path);
  res.err = slurp(err_path);
  ::unlink(out_path.c_str());
  ::unlink(err_path.c_str());
  return res;
}

} // namespace mlsim::fixtures
