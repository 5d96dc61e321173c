#include "sim/core/base/engine.hpp"

#include <simgrid/s4u.hpp>

#include <string>
#include <vector>

namespace mlsim {

std::unique_ptr<simgrid::s4u::Engine> make_engine() {
  static std::vector<std::string> args{"mlsim", "--cfg=network/model:CM02", "--cfg=network/crosstraffic:0",
                                       "--cfg=network/TCP-gamma:0",
                                       "--log=root.thresh:critical"};
  static std::vector<char*> argv;
  argv.clear();
  for (auto& a : args)
    argv.push_back(a.data());
  int argc = static_cast<int>(argv.size());
  return std::make_unique<simgrid::s4u::Engine>(&argc, argv.data());
}

} // namespace mlsim
