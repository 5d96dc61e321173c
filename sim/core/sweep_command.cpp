// Placeholder until sweeps land.
#include "sim/core/commands.hpp"
namespace mlsim {
void add_sweep_commands(CLI::App&, CommandStatus&) {}
} // namespace mlsim
