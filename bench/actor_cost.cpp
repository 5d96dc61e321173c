// What one actor and one host cost the process: memory mappings and resident bytes (actor_cost.hpp).
//
//   build/bench/actor_cost actors N [guard]   N actors blocked on a semaphore, unguarded stacks (or guarded)
//   build/bench/actor_cost hosts N [routed]   N hosts in a zone without routes (or a full zone: a route slot
//                                             per pair)
// The figures behind sim/core/run/limits.cpp's estimates. Each run is its own process (one engine per
// process); compare two sizes to take the fixed cost out.
#include "bench/actor_cost.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "actors";
  const long n = argc > 2 ? std::atol(argv[2]) : 10000;
  const std::string option = argc > 3 ? argv[3] : "";
  if (n <= 0 || (what != "actors" && what != "hosts")) {
    std::fprintf(stderr, "usage: actor_cost actors|hosts N [guard|routed]\n");
    return 2;
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
