// The SimGrid engine as mlsim configures it (one per process).
//
// Network model CM02 with cross-traffic and the TCP window cap off, so a
// transfer takes exactly latency + size / bottleneck bandwidth (see
// sim/hardware/platform.hpp for why); SimGrid's own logs are silenced. Actor
// stacks are kActorStackKiB. A guarded stack is two memory mappings (measured:
// 2.000 per actor), so the kernel's default vm.max_map_count (65530) stops a
// process at ~28k such actors. A run whose actors fit twice keeps the guard
// page (an overflow faults at once); a larger one drops it (StackGuard::off):
// unguarded stacks are anonymous mmaps of one kind that the kernel merges with
// their neighbours (measured: 2 mappings more for 10,000 or 200,000 actors),
// touched only as deep as an actor's calls go (13.3 kB for an actor blocked on
// a semaphore; bench/actor_cost.cpp). An overflow is then not caught, so the
// size keeps a wide margin over what actors use. The loader caps the actors
// (sim/core/run/limits.hpp).
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

inline constexpr int kActorStackKiB = 256; // per actor; at least 128 (the mmap threshold) so that it is mmapped

// Whether actor stacks get a guard page (an overflow then faults at once) at the cost of a second
// memory mapping per actor; the simulation drops it only when the actors would not fit otherwise.
enum class StackGuard { on, off };

std::unique_ptr<simgrid::s4u::Engine> make_engine(StackGuard guard = StackGuard::on);

// Creates an actor whose body cannot take the process down: an exception
// (std::exception: SimGrid's own kill exception passes through) is kept, every
// other actor is killed so that Engine::run() returns, and
// rethrow_actor_failure() then throws it where the simulation was started, with
// its own class (InputError stays a bad-input error).
simgrid::s4u::ActorPtr spawn_actor(const std::string& name, simgrid::s4u::Host* host, std::function<void()> body);

// Throws the first exception an actor ended with since the last call, if any.
void rethrow_actor_failure();

// Ends the simulation, from an actor or from outside any (maestro callbacks): kills every
// actor, so that Engine::run() returns; the reason is thrown by rethrow_actor_failure(). From
// maestro the kill is made by an actor started for it, at the same simulated time (engine.cpp).
void stop_simulation(std::exception_ptr reason);

} // namespace mlsim
