#include "sim/core/base/engine.hpp"

#include <simgrid/s4u.hpp>

#include <malloc.h>

#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

namespace sg4 = simgrid::s4u;

namespace mlsim {
namespace {
std::exception_ptr& failure_slot() {
  static std::exception_ptr slot; // one engine per process, so one slot
  return slot;
}
} // namespace

std::unique_ptr<sg4::Engine> make_engine(StackGuard guard) {
  // Unguarded stacks come from calloc: with glibc's threshold fixed (not raised as large blocks are
  // freed) each is mmapped, its pages touched only as deep as the actor's calls go, instead of heap
  // memory that calloc clears in full. glibc mmaps at most M_MMAP_MAX (65,536) blocks and takes the rest
  // from the heap: past ~65k actors each then cost its whole 256 KiB (measured: 21 kB per actor at 70k
  // actors, 24 GB exhausted at 300k; 13.3 kB per actor at 200k with the cap lifted).
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  mallopt(M_MMAP_MAX, std::numeric_limits<int>::max());
  static std::vector<std::string> args; // SimGrid may keep pointers into argv: one engine per process
  args = {"mlsim", "--cfg=network/model:CM02", "--cfg=network/crosstraffic:0", "--cfg=network/TCP-gamma:0",
          "--log=root.thresh:critical", "--cfg=contexts/stack-size:" + std::to_string(kActorStackKiB)};
  if (guard == StackGuard::off) // one memory mapping per actor stack instead of two (see engine.hpp)
    args.emplace_back("--cfg=contexts/guard-size:0");
  const char* threads = std::getenv("MLSIM_THREAD_CONTEXTS");
  if (threads && std::string(threads) == "1")
    args.emplace_back("--cfg=contexts/factory:thread");
  static std::vector<char*> argv;
  argv.clear();
  for (auto& a : args)
    argv.push_back(a.data());
  int argc = static_cast<int>(argv.size());
  return std::make_unique<sg4::Engine>(&argc, argv.data());
}

void stop_simulation(std::exception_ptr reason) {
  if (!failure_slot())
    failure_slot() = reason;
  if (!sg4::this_actor::is_maestro()) { // an actor: the activities ended at this time are all processed
    sg4::Actor::kill_all();
    return;
  }
  // Maestro (a time-advance callback): the engine is between moving the clock and ending the activities
  // due at the new time. Killing an actor whose semaphore wait timed out at this instant makes SimGrid
  // 3.32 abort ("Cannot find myself in the waiting queue that I have to leave"), so the kill is left to
  // an actor of its own, which runs once those ends are processed, at the same simulated time.
  static bool stopping = false; // one engine per process
  if (stopping)
    return;
  stopping = true;
  sg4::Engine* e = sg4::Engine::get_instance();
  std::vector<sg4::Host*> hosts = e->get_all_hosts();
  if (hosts.empty()) {
    sg4::Actor::kill_all();
    return;
  }
  sg4::Actor::create("mlsim.stop", hosts.front(), [] { sg4::Actor::kill_all(); });
}

sg4::ActorPtr spawn_actor(const std::string& name, sg4::Host* host, std::function<void()> body) {
  return sg4::Actor::create(name, host, [body = std::move(body)] {
    try {
      body();
    } catch (const std::exception&) { // not catch (...): SimGrid's kill exception must pass
      stop_simulation(std::current_exception());
    }
  });
}

void rethrow_actor_failure() {
  std::exception_ptr e = failure_slot();
  failure_slot() = nullptr;
  if (e)
    std::rethrow_exception(e);
}

} // namespace mlsim
