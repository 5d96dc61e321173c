// The simulator's run API for other modules (validation, sweeps): one
// scenario, simulated in a child process, its JSON report returned.
#pragma once

#include "sim/core/isolated.hpp"
