// mlsim: a discrete-event simulator of ML training systems.
// Exit codes: 0 ok, 2 bad input, 1 internal error, 128 + signal when SIGINT/SIGTERM stopped a simulation.
#include "sim/core/app/commands.hpp"
#include "sim/core/base/atomic_file.hpp"
#include "sim/core/base/errors.hpp"
#include "sim/core/run/load/preset_library.hpp"

#include <iostream>

int main(int argc, char** argv) {
  mlsim::install_output_cleanup_on_signals(); // a Ctrl-C or kill leaves no temporary output behind
  CLI::App app{"mlsim: predict step time, input stalls and bottlenecks of ML training systems"};
  app.require_subcommand(1);
  app.set_version_flag("--version", [] {
    std::string presets;
    try {
      presets = mlsim::preset_dir();
    } catch (const std::exception& e) {
      presets = std::string("not found (") + e.what() + ")";
    }
    return std::string("mlsim ") + MLSIM_VERSION + "\npresets: " + presets;
  });
  mlsim::CommandStatus status;
  mlsim::add_run_command(app, status);
  mlsim::add_check_command(app, status);
  mlsim::add_sweep_commands(app, status);
  mlsim::add_calibrate_command(app, status);
  mlsim::add_validate_command(app, status);
  mlsim::add_import_trace_command(app, status);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  } catch (const mlsim::Interrupted& e) { // SIGINT / SIGTERM during a simulation: 130 / 143
    std::cerr << "mlsim: " << e.what() << "\n";
    return e.exit_code();
  } catch (const mlsim::InputError& e) {
    std::cerr << "mlsim: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "mlsim: internal error: " << e.what() << "\n";
    return 1;
  }
  return status.exit_code;
}
