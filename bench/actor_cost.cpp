// What one actor and one host cost the process: memory mappings and resident bytes (actor_cost.hpp).
//
//   build/bench/actor_cost actors N [guard]   N actors blocked on a semaphore, unguarded stacks (or guarded)
//   build/bench/actor_cost hosts N [routed]   N hosts in a zone without routes (or a full zone: a route slot
//                                             per pair)
//   build/bench/actor_cost wakeups N          CPU time per wake-up of a server, N events 1 ms apart: an actor
//                                             in a timed semaphore wait, then a step on the engine's timers
//                                             (sim/hardware/server_wakeup.hpp)
// The figures behind sim/core/run/limits.cpp's estimates. Each run is its own process (one engine per
// process); compare two sizes to take the fixed cost out.
#include "bench/actor_cost.hpp"
#include "sim/core/base/engine.hpp"
#include "sim/core/run/isolated.hpp"
#include "sim/hardware/server_wakeup.hpp"

#include <simgrid/s4u.hpp>

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

namespace sg4 = simgrid::s4u;

// N wake-ups 1 ms apart, by an actor's timed wait or by a server step; the CPU seconds per wake-up.
std::string wakeups(long n, bool by_timer) {
  const auto engine = mlsim::make_engine();
  auto* zone = sg4::create_full_zone("bench");
  auto* host = zone->create_host("node", 1e9)->seal();
  zone->seal();
  long woken = 0;
  mlsim::ServerWakeup step(host, [&](double at) {
    if (++woken < n)
      step.at(at + 1e-3);
  });
  if (by_timer) {
    sg4::Actor::create("plan", host, [&] { step.at(1e-3); });
    sg4::Actor::create("job", host, [n] { sg4::this_actor::sleep_until(n * 1e-3 + 1); });
  } else {
    sg4::Actor::create("server", host, [&] {
      const sg4::SemaphorePtr wake = sg4::Semaphore::create(0);
      for (; woken < n; ++woken)
        wake->acquire_timeout(1e-3);
    });
  }
  const auto t0 = std::chrono::steady_clock::now();
  engine->run();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return fmt::format("{:>24}: {} wake-ups in {:.3f} s, {:.3f} us each", by_timer ? "step on the engine's timers"
                                                                                 : "actor's timed wait",
                     woken, s, s / static_cast<double>(woken) * 1e6);
}

} // namespace

int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "actors";
  const long n = argc > 2 ? std::atol(argv[2]) : 10000;
  const std::string option = argc > 3 ? argv[3] : "";
  if (n <= 0 || (what != "actors" && what != "hosts" && what != "wakeups")) {
    std::fprintf(stderr, "usage: actor_cost actors|hosts|wakeups N [guard|routed]\n");
    return 2;
  }
  if (what == "wakeups") {
    for (const bool by_timer : {false, true})
      std::printf("%s\n", mlsim::run_in_child([&] { return wakeups(n, by_timer); }).c_str());
    return 0;
  }
  const bool actors = what == "actors";
  const mlsim::bench::Cost c = actors ? mlsim::bench::blocked_actors(n, option == "guard" ? mlsim::StackGuard::on
                                                                                           : mlsim::StackGuard::off)
                                      : mlsim::bench::hosts(n, option == "routed");
  const char* label = actors ? (option == "guard" ? "actors (guarded stacks)" : "actors (unguarded stacks)")
                             : (option == "routed" ? "hosts (full zone)" : "hosts (zone without routes)");
  std::printf("%ld %s: %ld -> %ld memory mappings (%.4f each), resident %.1f -> %.1f MB (%.0f bytes each)\n", n, label,
              c.mappings_before, c.mappings_after, c.mappings_each(n), c.bytes_before / 1e6, c.bytes_after / 1e6,
              c.bytes_each(n));
  return 0;
}
