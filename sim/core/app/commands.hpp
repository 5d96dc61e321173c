// Subcommands of the `mlsim` executable. Each module registers its own
// subcommand; the callback throws InputError for bad input (exit 2) and
// returns normally on success. `exit_code` lets a command report another code.
#pragma once

#include <CLI/CLI.hpp>

namespace mlsim {

struct CommandStatus {
  int exit_code = 0;
};

void add_run_command(CLI::App& app, CommandStatus& status);       // sim/core/run_command.cpp
void add_check_command(CLI::App& app, CommandStatus& status);     // sim/core/run_command.cpp
void add_sweep_commands(CLI::App& app, CommandStatus& status);    // sim/core/sweep_command.cpp: sweep, merge, rightsize
void add_calibrate_command(CLI::App& app, CommandStatus& status); // sim/validate/commands.cpp
void add_validate_command(CLI::App& app, CommandStatus& status);  // sim/validate/commands.cpp
void add_import_trace_command(CLI::App& app, CommandStatus& status); // sim/core/app/import_trace_command.cpp

} // namespace mlsim
