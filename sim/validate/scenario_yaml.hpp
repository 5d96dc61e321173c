// A validation configuration as a scenario file, for the simulator.
//
// Generates the YAML of one `mlsim run` scenario that is the real job of
// loader_job.hpp, configuration for configuration:
//   node       cpu and ram from the calibrated profile (`preset: <profile>`);
//              cpu.core_flops = the calibrated Eigen GEMM rate AT THE JOB'S
//              GEMM SIZE (per_call + per_flop fit), so the host op costs what
//              one of the consumer's GEMMs costs on one core.
//   dataset    the calibration JPEGs of the set, resident in the page cache
//              (location: ram): mean file bytes, mean source pixels.
//   pipeline   pytorch (each worker builds whole batches), workers = loader
//              threads k, prefetch = queue depth d + k (see below); the stages
//              are the loader's, each priced by its calibrated cost:
//              read (file_read_warm: its per-file part as CPU work; its copy
//              out of the page cache as the simulator's RAM read of the
//              sample, with ram.bandwidth = 1 / file_read_warm.per_byte),
//              jpeg_decode, random_resized_crop, flip (applied to half the
//              samples: 0.5 x flip), normalize_fp32, collate.
//   consumer   CPU: a trainer whose step is ONE host-placed matmul op of
//              layers x 2 n^3 FLOP (no parameters: no backward ops) on one
//              core of the same CPU, so it shares the cores with the loader
//              workers exactly as the consumer thread does. The accelerator is
//              nominal (it runs nothing); the consumer reads the batch where
//              the loader left it, so the batch handed over is a pointer
//              (`hand_over` stage: 8 B per sample) over a fast PCIe link, and
//              the collate cost is written per sample to keep its full-size
//              cost (collate.per_byte x the fp32 sample bytes).
//              GPU: the profile's accelerator and measured PCIe (pageable, as
//              the consumer copies from pageable memory), `layers` fp16 n^3
//              matmuls on the device.
//   background other tenants' CPU use b (cores' worth, measured from /proc/stat
//              during the real run) leaves the job E = c - b of the c cores.
//              How the job's threads get E depends on the OS scheduler:
//              - group scheduling (Linux autogroup, on by default in desktop
//                and many server kernels: each session's threads share one
//                fair share): E is the job's as a whole, each thread at most
//                one core. A simulated host of n whole cores at speed E / n
//                gives m runnable threads min(E/n, E/m) each instead of
//                min(1, E/m): exact for m >= n when n >= floor(E); n = ceil(E)
//                is slow by E/ceil(E) while fewer than n threads run, n =
//                floor(E) fast by E/floor(E) while exactly n run. n is the one
//                with the smaller of these errors (floor for E < 4/3 on 2 cores).
//              - per-thread fair sharing: c cores at speed E / c. Equal to
//                always-runnable background threads whenever the job keeps
//                the cores busy (B threads take b = c B / (m + B), each of the
//                m job threads gets c / (m + B) = E / m).
//              Both are pessimistic while fewer job threads are runnable than
//              the cores they are given. (The figures above are a fair pool's;
//              the simulator's per-core run queues, cpu_scheduler.hpp, share
//              each of the n cores among the threads placed on it.)
//
// Why prefetch = d + k: the simulator's buffer hands out `prefetch` tokens
// (a worker needs one to START a batch; a pop returns one), so at most
// `prefetch` batches are started beyond the one being consumed. In the real
// job the queue holds d finished batches and each of the k loaders holds one
// more (being built, or built and blocked in push): d + k beyond the one the
// consumer works on.
// Ignores: per-image cost variance within a set (costs are linear in the
// sizes, so mean sizes give the mean cost), OS wake-up latency (microseconds
// against millisecond steps), the loader's in-order batch numbering.
#pragma once

#include "sim/core/run/metrics.hpp"
#include "sim/validate/job_config.hpp"
#include "sim/validate/loader_job.hpp"
#include "sim/validate/predictor.hpp"
#include "sim/validate/profile.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

namespace mlsim::validate {

// The configuration's label as a file name ("k2-d4-heavy-imagenet").
std::string scenario_label(const JobConfig& cfg);

// Host GEMM rate (FLOP/s, one core) at one n x n x n GEMM, from the host_gemm_fp32 fit; 0 if not calibrated.
double host_gemm_rate(const Profile& p, int n);

// The CPU the job gets when other tenants use `background_cores` of `cores` (see "background" above).
struct JobCpu {
  int cores = 1;
  double speed = 1.0; // fraction of a core's speed
};
JobCpu job_cpu(int cores, double background_cores, bool group_scheduling);

// The scenario text. `profile_path` is the file the scenario's presets name (absolute, or relative to
// the simulator's working directory); `profile` is the same profile, read, for the derived figures.
std::string scenario_yaml(const JobConfig& cfg, const JobInputs& in, const Profile& profile,
                          const std::string& profile_path, const RunLength& length);

// The simulator's entry point (mlsim::simulate_scenario_text): scenario text + overrides -> the run's
// JSON report. Each call runs in a forked child.
using SimulateFn = std::function<RunMetrics(const std::string& yaml, const std::vector<std::string>& overrides)>;

// The launches a profile's page-fault tables hold (cpu.hpp FreshPages::launches; 0: none).
size_t launch_count(const Profile& profile);

// One simulation of a configuration: its workers' launches (cpu.launch; empty: the profile's mean
// tables) and its weight in the prediction's mean.
struct LaunchDraw {
  std::vector<size_t> launches; // one entry: every worker's; more: one per worker process
  double weight = 1.0;
};
// The draws to average over: none without launches; with `processes` == 1 (a loader's threads share
// one process's allocator) each launch, weight 1 / launches; with more (DataLoader worker processes,
// each drawing apart, cpu.hpp) every multiset of `processes` launches, weighted by its orderings'
// share of launches^processes (the workers are alike but for their launch, so an ordering does not
// change the run). 3 launches: 3, 6, 10 draws for 1, 2, 3 processes.
std::vector<LaunchDraw> launch_draws(size_t launches, int processes);

// A Predictor that simulates each configuration's scenario, as long as the real run (same warm-up and
// measured steps), and reads `throughput_samples_per_s`, `breakdown.input` and `step_time_s.mean`.
// Where the profile has launches, once per launch (cpu.launch=k): the mean of the three figures, each
// launch's throughput kept, the bottleneck the most launches had.
// With `keep_dir` set, each scenario is also written there (<label>[-busy].yaml) for `mlsim run`.
Predictor simulator_predictor(SimulateFn simulate, Profile profile, std::string profile_path, RunLength length,
                              std::string keep_dir = "");

// simulator_predictor over mlsim::simulate_scenario_text.
Predictor mlsim_simulator_predictor(Profile profile, std::string profile_path, RunLength length,
                                    std::string keep_dir = "");
inline constexpr const char* kSimulatorLabel = "mlsim simulator (one scenario per configuration)";

} // namespace mlsim::validate
