// The SimGrid engine as mlsim configures it (one per process).
//
// Network model CM02 with cross-traffic and the TCP window cap off, so a
// transfer takes exactly latency + size / bottleneck bandwidth (see
// sim/hardware/platform.hpp for why); SimGrid's own logs are silenced. Each
// actor's stack has a guard page (two memory mappings): past ~32k actors the
// kernel's default vm.max_map_count (65536) is reached, which is why large
// jobs are simulated with replica folding (scenario.hpp). Turning the guard
// off (contexts/guard-size:0) crashes SimGrid 3.32 here.
#pragma once

#include <simgrid/forward.h>

#include <memory>

namespace mlsim {

std::unique_ptr<simgrid::s4u::Engine> make_engine();

} // namespace mlsim
