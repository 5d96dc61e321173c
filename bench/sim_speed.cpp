// Simulation speed: simulated training steps per wall-clock second.
//
//   build/bench/sim_speed            both configurations
//   build/bench/sim_speed small      one 8-accelerator node, 1,000 steps, 5-stage pipeline
//   build/bench/sim_speed large      128 nodes x 8 accelerators, 100 steps (replica folding: 2 nodes simulated)
//   build/bench/sim_speed unfolded   the same with every node simulated (run.replica_folding: false)
// Each run happens in its own child process (one SimGrid engine per process);
// the figure includes loading the scenario and building the platform.
#include "sim/core/run/isolated.hpp"
#include "sim/core/run/metrics.hpp"
#include "sim/core/run/scenario.hpp"
#include "sim/core/run/simulation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

std::string scenario(int nodes, int steps, bool folding) {
  return fmt::format(R"(name: bench-{nodes}x8
hardware:
  nodes:
    - name: node
      count: {nodes}
      cpu: {{preset: epyc-7742}}
      ram: {{preset: ddr4-512gb-8ch}}
      disks: [{{name: data, preset: nvme}}]
      nic: ib-hdr-200
      pcie: gen4-x16
      accelerators: {{preset: a100-sxm4-40gb, count: 8}}
      nvlink: nvlink3
dataset:
  samples: 100000000
  sample_size: {{distribution: lognormal, mean: 110 kB, stddev: 60 kB}}
  image: {{width: 500, height: 375, channels: 3}}
  location: local
pipeline:
  framework: tf.data
  batch_size: 256
  prefetch: 2
  stages:
    - read
    - {{name: decode, cost: {{per_sample: 0.3 ms, per_pixel: 4 ns}}, output: {{dtype: uint8}}}}
    - {{name: crop, cost: {{per_sample: 0.1 ms, per_pixel: 1 ns}}, output: {{width: 224, height: 224}}}}
    - {{name: flip, cost: {{per_pixel: 0.5 ns}}}}
    - {{name: normalize, cost: {{per_pixel: 2 ns}}, output: {{dtype: fp32}}}}
model: {{name: resnet50, forward_flops_per_sample: 8.2 GFLOP, parameters: 25.6e6, dtype: fp16}}
run: {{steps: {steps}, warmup_steps: {warmup}, seed: 1, replica_folding: {folding}}}
)",
                     fmt::arg("nodes", nodes), fmt::arg("steps", steps), fmt::arg("folding", folding),
                     fmt::arg("warmup", std::min(10, steps / 2)));
}

void bench(const char* label, int nodes, int steps, bool folding = true) {
  auto t0 = std::chrono::steady_clock::now();
  std::string simulated = mlsim::run_in_child([&] {
    mlsim::Scenario s = mlsim::load_scenario(mlsim::ConfigNode::load_string(scenario(nodes, steps, folding), label));
    mlsim::SimulationOutput out = mlsim::simulate(s);
    return fmt::format("{:.6f}", out.end_time);
  });
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  int ranks = nodes * 8;
  std::printf("%-32s %5d steps x %4d accelerators: %8.2f s wall, %9.1f steps/s, %11.1f accelerator-steps/s "
              "(simulated %s s)\n",
              label, steps, ranks, wall, steps / wall, static_cast<double>(steps) * ranks / wall, simulated.c_str());
}

} // namespace

int main(int argc, char** argv) {
  std::string which = argc > 1 ? argv[1] : "all";
  if (which == "all" || which == "small")
    bench("1 node x 8, 5-stage pipeline", 1, argc > 2 ? std::atoi(argv[2]) : 1000);
  if (which == "all" || which == "large")
    bench("128 nodes x 8 (folded)", 128, argc > 2 ? std::atoi(argv[2]) : 100);
  if (which == "unfolded")
    bench("128 nodes x 8 (all simulated)", 128, argc > 2 ? std::atoi(argv[2]) : 100, false);
  return 0;
}
