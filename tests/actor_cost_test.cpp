// What an actor costs the process, measured (bench/actor_cost.hpp), against what the loader assumes
// (sim/core/run/limits.cpp: ~15 kB resident per actor; two mappings per guarded stack, none per
// unguarded one). One engine per process: one measurement per test.
#include "bench/actor_cost.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

using namespace mlsim;

TEST(ActorCost, UnguardedStacksAddNoMemoryMapping) {
  // The kernel merges adjacent anonymous mappings of one kind: 3,000 stacks are a handful of mappings,
  // where one each would be 3,000.
  const bench::Cost c = bench::blocked_actors(3000, StackGuard::off);
  EXPECT_LT(c.mappings_after - c.mappings_before, 30);
  EXPECT_LT(c.bytes_each(3000), 15e3); // the loader's figure per actor
}

TEST(ActorCost, GuardedStacksAreTwoMappingsEach) {
  // A guard page between stacks keeps them apart: a stack and its guard, per actor.
  const bench::Cost c = bench::blocked_actors(2000, StackGuard::on);
  EXPECT_NEAR(c.mappings_each(2000), 2.0, 0.01);
}

TEST(ActorCost, StacksStayUntouchedPastGlibcsCountOfMmappedBlocks) {
  // glibc mmaps at most M_MMAP_MAX (65,536 by default) blocks and serves larger ones from the heap, where
  // calloc clears them: a 256 KiB stack would then be resident in full. Take 65,536 blocks first; the
  // actors' stacks must still cost what their calls touch (make_engine lifts the count).
  std::vector<void*> taken;
  const long n = 1000;
  const bench::Cost c = bench::blocked_actors(n, StackGuard::off, [&] {
    for (int i = 0; i < 65536; ++i)
      taken.push_back(std::calloc(1, 128 * 1024)); // at the mmap threshold make_engine sets: mmapped
  });
  for (void* p : taken)
    std::free(p);
  EXPECT_LT(c.bytes_each(n), 15e3) << "a stack from the heap is resident in full (256 KiB)";
}
