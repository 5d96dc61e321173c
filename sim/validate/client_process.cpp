#include "sim/validate/client_process.hpp"

#include "sim/core/run/load/preset_library.hpp"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <sys/wait.h>
#include <unistd.h>

#ifndef MLSIM_CLIENT_DIR
#define MLSIM_CLIENT_DIR "sim/validate/clients"
#endif

namespace mlsim::validate {

std::string client_python() {
  const char* env = std::getenv("MLSIM_PYTHON");
  return env && *env ? env : "/usr/bin/python3";
}

std::string pytorch_client_script() {
  if (const char* env = std::getenv("MLSIM_PYTORCH_CLIENT"); env && *env)
    return env;
  const std::filesystem::path installed =
      std::filesystem::path(preset_dir()).parent_path() / "clients" / "pytorch_loader_bench.py";
  if (std::error_code ec; std::filesystem::exists(installed, ec))
    return installed.string();
  return std::string(MLSIM_CLIENT_DIR) + "/pytorch_loader_bench.py";
}

ClientProcess::ClientProcess(const std::string& interpreter, const std::string& script) {
  int in[2], out[2];
  if (pipe(in) != 0 || pipe(out) != 0)
    throw std::runtime_error("cannot create pipes for " + interpreter);
  pid_ = fork();
  if (pid_ < 0)
    throw std::runtime_error("cannot fork for " + interpreter);
  if (pid_ == 0) {
    dup2(in[0], STDIN_FILENO);
    dup2(out[1], STDOUT_FILENO);
    close(in[0]), close(in[1]), close(out[0]), close(out[1]);
    execl(interpreter.c_str(), interpreter.c_str(), script.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  to_child_ = in[1];
  from_child_ = fdopen(out[0], "r");
  std::signal(SIGPIPE, SIG_IGN); // a dead child is an error answer, not a killed mlsim
}

ClientProcess::~ClientProcess() {
  if (to_child_ >= 0) {
    const std::string quit = "{\"op\": \"quit\"}\n";
    (void)!write(to_child_, quit.data(), quit.size());
    close(to_child_);
  }
  if (from_child_)
    fclose(from_child_);
  if (pid_ > 0) {
    int status = 0;
    waitpid(pid_, &status, 0);
  }
}

nlohmann::json ClientProcess::ask(const nlohmann::json& request) {
  const std::string line = request.dump() + "\n";
  for (size_t done = 0; done < line.size();) {
    ssize_t n = write(to_child_, line.data() + done, line.size() - done);
    if (n <= 0)
      throw std::runtime_error("the measurement client is not running (it exited)");
    done += static_cast<size_t>(n);
  }
  std::string answer;
  char buf[65536];
  while (fgets(buf, sizeof buf, from_child_)) {
    answer += buf;
    if (!answer.empty() && answer.back() == '\n')
      break;
  }
  if (answer.empty())
    throw std::runtime_error("the measurement client exited without an answer");
  try {
    return nlohmann::json::parse(answer);
  } catch (const nlohmann::json::exception&) {
    throw std::runtime_error("the measurement client answered no JSON: " + answer.substr(0, 200));
  }
}

ClientProbe probe_pytorch_client() {
  ClientProbe p;
  const std::string python = client_python(), script = pytorch_client_script();
  if (std::error_code ec; !std::filesystem::exists(script, ec)) {
    p.reason = "the client script " + script + " is missing";
    return p;
  }
  try {
    ClientProcess c(python, script);
    nlohmann::json a = c.ask({{"op", "probe"}});
    p.available = a.value("ok", false);
    p.reason = a.value("reason", "");
    if (a.contains("versions"))
      p.versions = a["versions"];
  } catch (const std::exception& e) {
    p.reason = python + " could not run the client (" + e.what() + ")";
  }
  return p;
}

} // namespace mlsim::validate
