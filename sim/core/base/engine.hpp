// The SimGrid engine as mlsim configures it (one per process).
//
// Network model CM02 with cross-traffic and the TCP window cap off, so a
// transfer takes exactly latency + size / bottleneck bandwidth (see
// sim/hardware/platform.hpp for why); SimGrid's own logs are silenced. Each
// actor's stack has a guard page (two memory mappings): past ~32k actors the
// kernel's default vm.max_map_count (65536) is reached, which is why large
// jobs are simulated with replica folding (scenario.hpp) and the loader caps
// the actors (sim/core/run/limits.hpp). Turning the guard off
// (contexts/guard-size:0) crashes SimGrid 3.32 here.
//
// MLSIM_THREAD_CONTEXTS=1 in the environment runs actors on threads instead of
// SimGrid's own stack switching: only for AddressSanitizer builds, whose
// sigaltstack interceptor misreads SimGrid's context switches (slower per actor).
#pragma once

#include <simgrid/forward.h>

#include <exception>
#include <functional>
#include <memory>
#include <string>

namespace mlsim {

std::unique_ptr<simgrid::s4u::Engine> make_engine();

// Creates an actor whose body cannot take the process down: an exception
// (std::exception: SimGrid's own kill exception passes through) is kept, every
// other actor is killed so that Engine::run() returns, and
// rethrow_actor_failure() then throws it where the simulation was started, with
// its own class (InputError stays a bad-input error).
simgrid::s4u::ActorPtr spawn_actor(const std::string& name, simgrid::s4u::Host* host, std::function<void()> body);

// Throws the first exception an actor ended with since the last call, if any.
void rethrow_actor_failure();

// Ends the simulation from outside any actor (maestro callbacks): kills every
// actor, so that Engine::run() returns; the reason is thrown by rethrow_actor_failure().
void stop_simulation(std::exception_ptr reason);

} // namespace mlsim
