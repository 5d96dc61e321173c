// What actors and hosts cost the process, measured around their creation in an engine configured as
// mlsim's (sim/core/base/engine.hpp): /proc/self/maps lines and resident bytes (process_memory.hpp).
// Each function starts an engine: one call per process.
#pragma once

#include "bench/process_memory.hpp"
#include "sim/core/base/engine.hpp"

#include <simgrid/s4u.hpp>

#include <functional>
#include <string>

namespace mlsim::bench {

struct Cost {
  long mappings_before = 0, mappings_after = 0;
  double bytes_before = 0, bytes_after = 0;
  double mappings_each(long n) const { return static_cast<double>(mappings_after - mappings_before) / static_cast<double>(n); }
  double bytes_each(long n) const { return (bytes_after - bytes_before) / static_cast<double>(n); }
};

// `n` actors that each run to a semaphore wait and stay there (the least an actor touches). `first` runs
// once the engine has set the process up, before the count starts.
inline Cost blocked_actors(long n, StackGuard guard, const std::function<void()>& first = [] {}) {
  namespace sg4 = simgrid::s4u;
  auto engine = make_engine(guard);
  first();
  auto* zone = sg4::create_full_zone("zone");
  auto* host = zone->create_host("host", 1e9)->seal();
  zone->seal();
  auto block = sg4::Semaphore::create(0);
  Cost c;
  sg4::Actor::create("count", host, [n, host, block, &c] {
    c.mappings_before = memory_mappings();
    c.bytes_before = resident_bytes();
    for (long i = 0; i < n; ++i)
      sg4::Actor::create("a", host, [block] { block->acquire(); })->daemonize();
    sg4::this_actor::sleep_for(1); // every actor has run to its wait
    c.mappings_after = memory_mappings();
    c.bytes_after = resident_bytes();
  });
  engine->run();
  return c;
}

// `n` hosts in a zone without routes (`routed`: a full zone, a route slot per pair of hosts).
inline Cost hosts(long n, bool routed) {
  namespace sg4 = simgrid::s4u;
  auto engine = make_engine();
  Cost c;
  c.mappings_before = memory_mappings();
  c.bytes_before = resident_bytes();
  auto* root = sg4::create_empty_zone("root");
  auto* zone = routed ? sg4::create_full_zone("zone") : sg4::create_empty_zone("zone");
  zone->set_parent(root);
  for (long i = 0; i < n; ++i)
    zone->create_host("node.core" + std::to_string(i), 1e9)->seal();
  zone->seal();
  root->seal();
  c.mappings_after = memory_mappings();
  c.bytes_after = resident_bytes();
  return c;
}

} // namespace mlsim::bench
