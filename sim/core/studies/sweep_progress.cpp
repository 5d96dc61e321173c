#include "sim/core/studies/sweep_progress.hpp"

#include <fmt/format.h>

#include <cstdio>

namespace mlsim {
namespace {
std::string clock_text(double s) {
  long t = static_cast<long>(s + 0.5);
  return t >= 3600 ? fmt::format("{}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60)
                   : fmt::format("{}:{:02}", t / 60, t % 60);
}
} // namespace

SweepProgress::SweepProgress(bool enabled, size_t total, size_t already_done)
    : enabled_(enabled), total_(total), already_(already_done), start_(std::chrono::steady_clock::now()) {}

void SweepProgress::update(size_t done, size_t failed) {
  if (!enabled_)
    return;
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  // The rate is this run's: points skipped by --resume took no time now.
  double eta = done > 0 ? elapsed / static_cast<double>(done) * static_cast<double>(total_ - done) : 0.0;
  std::string line = fmt::format("\r{}/{} points", already_ + done, already_ + total_);
  if (failed > 0)
    line += fmt::format(", {} failed", failed);
  line += fmt::format(", {} elapsed, ETA {}   ", clock_text(elapsed), clock_text(eta));
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
  printed_ = true;
}

void SweepProgress::finish() {
  if (enabled_ && printed_)
    std::fputs("\n", stderr);
}

} // namespace mlsim
