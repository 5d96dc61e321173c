// The progress line of a sweep on a terminal: "12/48 points, 1 failed,
// 0:21 elapsed, ETA 1:03". Only when enabled (stderr is a TTY): in a batch
// job's log, carriage-return updates are noise.
#pragma once

#include <chrono>
#include <cstddef>

namespace mlsim {

class SweepProgress {
public:
  SweepProgress(bool enabled, size_t total, size_t already_done);
  void update(size_t done, size_t failed); // points finished by this run so far
  void finish();                            // ends the line

private:
  bool enabled_;
  size_t total_, already_;
  std::chrono::steady_clock::time_point start_;
  bool printed_ = false;
};

} // namespace mlsim
