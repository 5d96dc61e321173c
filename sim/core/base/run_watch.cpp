#include "sim/core/base/run_watch.hpp"

#include "sim/core/base/engine.hpp"
#include "sim/core/base/errors.hpp"

#include <simgrid/s4u.hpp>

#include <fmt/format.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

namespace sg4 = simgrid::s4u;

namespace mlsim {
namespace {

volatile std::sig_atomic_t g_signal = 0;
RunWatch* g_current = nullptr; // the watch of this process's simulation (one engine per process)

extern "C" void on_stop_signal(int sig) { g_signal = sig; }

} // namespace

double wall_seconds() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

std::string format_duration(double s) {
  if (!(s < 1e9))
    return "?";
  if (s < 60)
    return fmt::format("{:.1f} s", s);
  if (s < 3600)
    return fmt::format("{} min {:02} s", static_cast<long>(s) / 60, static_cast<long>(s) % 60);
  return fmt::format("{} h {:02} min", static_cast<long>(s) / 3600, static_cast<long>(s) % 3600 / 60);
}

RunWatch::RunWatch(RunWatchOptions options) : o_(std::move(options)) {
  start_ = wall_seconds();
  if (const char* p = std::getenv("MLSIM_PROGRESS"); p && (p[0] == '0' || p[0] == '1'))
    progress_mode_ = p[0] - '0';
  // Asked once: isatty is a system call (an ioctl), and the clock advances hundreds of thousands of
  // times in a long run (on a VM with costly system calls it was a fifth of a small run's time).
  stderr_is_terminal_ = ::isatty(STDERR_FILENO) != 0;
  if (progress_mode_ == -1)
    progress_mode_ = stderr_is_terminal_ ? 1 : 0;
  g_signal = 0;
  old_int_ = std::signal(SIGINT, on_stop_signal);
  old_term_ = std::signal(SIGTERM, on_stop_signal);
  g_current = this;
  static bool connected = false; // the engine's signals are static: connect once per process
  if (!connected) {
    sg4::Engine::on_time_advance_cb([](double) {
      if (g_current)
        g_current->on_time_advance();
    });
    connected = true;
  }
}

RunWatch::~RunWatch() {
  if (printing_)
    print_progress(wall_seconds(), true);
  g_current = nullptr;
  std::signal(SIGINT, old_int_ == SIG_ERR ? SIG_DFL : old_int_);
  std::signal(SIGTERM, old_term_ == SIG_ERR ? SIG_DFL : old_term_);
}

void RunWatch::on_time_advance() {
  if (g_signal != 0) {
    int sig = g_signal;
    g_signal = 0;
    g_current = nullptr; // stop once
    stop_simulation(std::make_exception_ptr(Interrupted(sig)));
    return;
  }
  double now = wall_seconds();
  double wall = now - start_;
  if (o_.max_wall_seconds > 0 && wall > o_.max_wall_seconds) {
    g_current = nullptr;
    stop_simulation(std::make_exception_ptr(InputError(
        o_.max_wall_where, "run.max_wall",
        "a run that ends within " + format_duration(o_.max_wall_seconds) +
            " of wall time (raise run.max_wall, or lower run.steps)",
        fmt::format("{} of {} steps after {}", o_.steps_done ? o_.steps_done() : 0, o_.total_steps,
                    format_duration(wall)))));
    return;
  }
  if (progress_mode_ == 1 && wall > kProgressAfter && now - last_print_ >= 1.0) {
    print_progress(now, false);
    last_print_ = now;
  }
}

void RunWatch::print_progress(double now, bool last) {
  printing_ = true;
  long done = o_.steps_done ? o_.steps_done() : 0;
  double wall = now - start_;
  // The rate since the last report: a run that slows down as it goes gets a later ETA at once.
  double span = now - (last_print_ > 0 ? last_print_ : start_);
  double rate = span > 0 ? static_cast<double>(done - last_done_) / span : 0.0;
  last_done_ = done;
  double eta = rate > 0 ? static_cast<double>(o_.total_steps - done) / rate : 1e300;
  std::string line = fmt::format("mlsim: step {}/{} ({:.1f} %), simulated {:.3f} s, {:.1f} steps/s, wall {}{}{}",
                                 done, o_.total_steps, 100.0 * static_cast<double>(done) / std::max(1L, o_.total_steps),
                                 sg4::Engine::get_clock(), rate, format_duration(wall), last ? "" : ", ETA ",
                                 last ? "" : format_duration(eta));
  // On a terminal the line rewrites itself; elsewhere one line per report.
  const bool tty = stderr_is_terminal_;
  std::fprintf(stderr, tty ? "\r%s\033[K%s" : "%s%s\n", line.c_str(), tty && last ? "\n" : "");
  std::fflush(stderr);
}

} // namespace mlsim
