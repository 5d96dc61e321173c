// Runs the mlsim executable as a user would and reports how it ended: exit code or signal,
// stdout, stderr and wall time; optionally sends it a signal after a delay.
#pragma once

#include <string>
#include <vector>

namespace mlsim::fixtures {

struct ProcessResult {
  int exit_code = -1; // -1 when killed by a signal
  int signal = 0;     // the signal that ended it, 0 if it exited
  std::string out, err;
  double seconds = 0;
};

struct ProcessOptions {
  std::vector<std::string> env;  // extra "NAME=value" entries
  double send_after = 0;         // > 0: send `send_signal` after this many seconds
  int send_signal = 0;
  double timeout = 120;          // SIGKILL after this many seconds
};

ProcessResult run_process(const std::vector<std::string>& args, const ProcessOptions& options = {});

// The whole content of a text file ("" when it cannot be read).
std::string slurp(const std::string& path);

} // namespace mlsim::fixtures
