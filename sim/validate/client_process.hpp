// A measurement client in another language, as a child process that talks JSON lines.
//
// mlsim starts the client (e.g. sim/validate/clients/pytorch_loader_bench.py under Debian's
// /usr/bin/python3), writes one request per line on its stdin and reads one answer per line from its
// stdout; its stderr is passed through. The child is asked to quit (and reaped) when the object goes.
// Which interpreter: $MLSIM_PYTHON, else /usr/bin/python3 (the system python that has python3-torch;
// a pyenv python3 on PATH usually has not). Which script: $MLSIM_PYTORCH_CLIENT, else the copy
// installed next to the presets, else the source tree's.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <sys/types.h>

namespace mlsim::validate {

std::string client_python();
std::string pytorch_client_script();

class ClientProcess {
public:
  // Starts `interpreter script`; throws std::runtime_error when it cannot be started.
  ClientProcess(const std::string& interpreter, const std::string& script);
  ~ClientProcess();
  ClientProcess(const ClientProcess&) = delete;
  ClientProcess& operator=(const ClientProcess&) = delete;

  // One request, one answer. Throws std::runtime_error when the child died or answered no JSON.
  nlohmann::json ask(const nlohmann::json& request);

private:
  pid_t pid_ = -1;
  int to_child_ = -1;
  FILE* from_child_ = nullptr;
};

// Whether the pytorch client can run here: torch and torchvision import under client_python().
struct ClientProbe {
  bool available = false;
  std::string reason;   // why not (the import error, or the interpreter that could not run)
  nlohmann::json versions;
};
ClientProbe probe_pytorch_client();
inline constexpr const char* kPytorchInstallHint =
    "needs python3-torch and python3-torchvision for /usr/bin/python3 (apt-get install python3-torch "
    "python3-torchvision; or set MLSIM_PYTHON to a python that has them)";

} // namespace mlsim::validate
