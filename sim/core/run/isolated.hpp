// Runs work in a forked child process and brings its text result back.
//
// SimGrid allows one engine per process, so every simulation beyond the first
// in a process (sweeps, right-sizing, recommendations, cores_needed,
// validation) runs in a child. An InputError in the child is rethrown as an
// InputError here; any other failure as an InternalError.
#pragma once

#include <nlohmann/json.hpp>

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

namespace mlsim {

std::string run_in_child(const std::function<std::string()>& work);

// fork(), after flushing stdio, with the child tied to this process: the
// kernel sends it SIGKILL when the parent dies (PR_SET_PDEATHSIG), so a killed
// sweep or run leaves no simulation running; a parent that died between fork
// and prctl is caught by comparing getppid() with the parent's pid.
pid_t fork_tied_to_parent();

// The child's side of the protocol shared with child_pool.cpp: runs `work`, writes one tag byte
// ('O' ok, 'I' input error, 'E' other error) and the text to `fd`, and exits without running the
// parent's atexit handlers or static destructors.
[[noreturn]] void child_main(int fd, const std::function<std::string()>& work);

// The run's JSON report (see report_json.hpp) for a scenario file with overrides.
nlohmann::ordered_json simulate_file_in_child(const std::string& file, const std::vector<std::string>& overrides);
// The same for a scenario given as YAML text (`name` is used in messages).
nlohmann::ordered_json simulate_scenario_text(const std::string& yaml, const std::vector<std::string>& overrides,
                                              const std::string& name = "<generated scenario>");

} // namespace mlsim
