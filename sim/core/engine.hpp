// The SimGrid engine as mlsim configures it (one per process).
//
// Network model CM02 with cross-traffic and the TCP window cap off, so a
// transfer takes exactly latency + size / bottleneck bandwidth (see
// sim/hardware/platform.hpp for why); SimGrid's own logs are silenced. No guard
// page per actor stack: a job of many nodes runs tens of thousands of actors,
// beyond the kernel's default limit of memory mappings per process.
#pragma once

#include <simgrid/forward.h>

#include <memory>

namespace mlsim {

std::unique_ptr<simgrid::s4u::Engine> make_engine();

} // namespace mlsim
