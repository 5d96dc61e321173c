// Simulation speed: simulated training steps per CPU second (wall time too: it depends on the load).
//
//   build/bench/sim_speed            small, bare and large
//   build/bench/sim_speed small      one 8-accelerator node, 1,000 steps, 5-stage pipeline; SimGrid
//                                    activities started (execs, comms)
//   build/bench/sim_speed bare       the same steps as plain s4u (bare_s4u_replica.hpp), and the
//                                    ratio of mlsim's CPU time to it
//   build/bench/sim_speed large      128 nodes x 8 accelerators, 100 steps (replica folding: 2 nodes simulated)
//   build/bench/sim_speed unfolded   the same with every node simulated (run.replica_folding: false)
//   build/bench/sim_speed unfolded 20 1024   1,024 nodes, 20 steps
//   build/bench/sim_speed sweep      `mlsim sweep` of the quickstart, 1,000 points (cores 1..50 x batch
//                                    16..320), --jobs 2: CPU of the sweep and all its children
// A second argument sets the steps, a third the nodes. Each run happens in its own child process
// (one SimGrid engine per process); the figure includes loading the scenario and building the
// platform; peak RSS is the child's.
#include "bench/bare_s4u_replica.hpp"
#include "bench/bench_scenario.hpp"
#include "sim/core/run/isolated.hpp"
#include "sim/core/run/metrics.hpp"
#include "sim/core/run/scenario.hpp"
#include "sim/core/run/simulation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <simgrid/s4u.hpp>
#include <sys/resource.h>
#include <unistd.h>

namespace {

double children_cpu_seconds() {
  rusage u{};
  ::getrusage(RUSAGE_CHILDREN, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}
long children_peak_rss_kb() {
  rusage u{};
  ::getrusage(RUSAGE_CHILDREN, &u);
  return u.ru_maxrss; // the largest child so far
}


struct Figure {
  double cpu = 0, wall = 0;
};

Figure timed(const char* label, int steps, int ranks, const std::function<std::string()>& work) {
  double c0 = children_cpu_seconds();
  auto t0 = std::chrono::steady_clock::now();
  std::string result = mlsim::run_in_child(work);
  Figure f{children_cpu_seconds() - c0, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()};
  std::printf("%-32s %5d steps x %4d accelerators: %7.2f s CPU (%7.2f s wall), %8.1f steps per CPU-s, peak RSS "
              "%.0f MB; %s\n",
              label, steps, ranks, f.cpu, f.wall, steps / f.cpu, static_cast<double>(children_peak_rss_kb()) / 1024.0,
              result.c_str());
  return f;
}

Figure bench(const char* label, int nodes, int steps, bool folding = true) {
  return timed(label, steps, nodes * 8, [&] {
    long execs = 0, comms = 0;
    simgrid::s4u::Exec::on_start_cb([&execs](const simgrid::s4u::Exec&) { ++execs; });
    simgrid::s4u::Activity::on_completion_cb( // comms have no start signal in SimGrid 3.32: count them as they end
        [&comms](const simgrid::s4u::Activity& a) { comms += dynamic_cast<const simgrid::s4u::Comm*>(&a) != nullptr; });
    mlsim::Scenario s = mlsim::load_scenario(mlsim::ConfigNode::load_string(mlsim::bench::scenario(nodes, steps, folding), label));
    mlsim::SimulationOutput out = mlsim::simulate(s);
    return fmt::format("simulated {:.6f} s, {} steps simulated; {} execs, {} comms", out.end_time, out.steps_simulated,
                       execs, comms);
  });
}

Figure bare_bench(int steps) {
  return timed("bare s4u replica, 1 node x 8", steps, 8, [&] {
    std::vector<std::string> args{"bare", "--cfg=network/model:CM02", "--cfg=network/crosstraffic:0",
                                  "--cfg=network/TCP-gamma:0", "--log=root.thresh:critical"};
    std::vector<char*> argv;
    for (auto& a : args)
      argv.push_back(a.data());
    int argc = static_cast<int>(argv.size());
    bare::Counts c = bare::run(argc, argv.data(), steps);
    return fmt::format("simulated {:.6f} s; {} execs, {} comms", c.end_time, c.execs, c.comms);
  });
}

// build/mlsim and scenarios/ next to this program's build/bench/.
std::string repo_path(const std::string& rel) {
  char exe[4096] = {};
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  std::string dir = n > 0 ? std::string(exe, static_cast<size_t>(n)) : std::string("build/bench/sim_speed");
  for (int up = 0; up < 3; ++up) // sim_speed, bench, build
    dir = dir.substr(0, dir.rfind('/'));
  return dir + "/" + rel;
}

Figure sweep_bench() {
  const std::string csv = "/tmp/mlsim-sim-speed-sweep-" + std::to_string(::getpid()) + ".csv";
  const std::string cmd = repo_path("build/mlsim") + " sweep " + repo_path("scenarios/quickstart.yaml") +
                          " --vary hardware.nodes.0.cpu.cores=1..50 --vary pipeline.batch_size=16..320:16 --jobs 2"
                          " --out " + csv + " > /dev/null 2>&1";
  return timed("mlsim sweep, quickstart, --jobs 2", 1000, 1, [&] {
    const int rc = std::system(cmd.c_str());
    std::string points = "?";
    if (std::FILE* f = std::fopen(csv.c_str(), "r")) {
      long lines = 0;
      for (int c; (c = std::fgetc(f)) != EOF;)
        lines += c == '\n';
      std::fclose(f);
      points = std::to_string(lines - 1); // the header
    }
    std::remove(csv.c_str());
    return fmt::format("exit {}, {} points in the CSV (a \"step\" here is a sweep point)", rc, points);
  });
}

} // namespace

int main(int argc, char** argv) {
  std::string which = argc > 1 ? argv[1] : "all";
  auto arg = [&](int i, int fallback) { return argc > i ? std::atoi(argv[i]) : fallback; };
  Figure small, floor;
  if (which == "all" || which == "small" || which == "bare")
    small = bench("1 node x 8, 5-stage pipeline", 1, arg(2, 1000));
  if (which == "all" || which == "bare") {
    floor = bare_bench(arg(2, 1000));
    std::printf("mlsim / bare s4u CPU time: %.2f\n", small.cpu / floor.cpu);
  }
  if (which == "all" || which == "large")
    bench("128 nodes x 8 (folded)", arg(3, 128), arg(2, 100));
  if (which == "unfolded")
    bench("nodes x 8 (all simulated)", arg(3, 128), arg(2, 100), false);
  if (which == "sweep")
    sweep_bench();
  return 0;
}
