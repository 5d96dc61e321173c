// This process's memory mappings and resident memory, read from /proc/self (Linux): what an actor or
// a host costs is the change in these around its creation (bench/actor_cost.cpp, tests/actor_cost_test.cpp).
#pragma once

#include <cstdlib>
#include <fstream>
#include <string>

namespace mlsim::bench {

// Lines of /proc/self/maps: the mappings vm.max_map_count limits.
inline long memory_mappings() {
  std::ifstream f("/proc/self/maps");
  std::string line;
  long n = 0;
  while (std::getline(f, line))
    ++n;
  return n;
}

// VmRSS, in bytes.
inline double resident_bytes() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmRSS:", 0) == 0)
      return 1024.0 * static_cast<double>(std::atol(line.c_str() + 6));
  return 0;
}

} // namespace mlsim::bench
