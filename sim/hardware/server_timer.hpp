// When a server's timed event counts as due (core_server.hpp, disk_server.hpp, server_wakeup.hpp).
//
// SimGrid rounds a timer up to its timing precision (1e-9 s), so a timer shorter than that would wake
// the server later than asked: an event due within a few ulps of now (1e-12 relative) is served now.
#pragma once

#include <algorithm>
#include <limits>

namespace mlsim {

inline constexpr double kNeverDue = std::numeric_limits<double>::infinity();

inline bool due_by(double due, double now) { return due - now <= 1e-12 * std::max(1.0, now); }

} // namespace mlsim
