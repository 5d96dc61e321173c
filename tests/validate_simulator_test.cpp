// The simulator-backed predictor of `mlsim validate` on hand-built profiles:
// the generated scenario runs in the simulator, and its figures match the
// cases worked out by hand (2 cores; a loader thread builds a batch of 16 in
// 40 ms of CPU; one consumer GEMM layer costs 10 ms on one core).
#include "sim/validate/predictor.hpp"
#include "sim/validate/scenario_yaml.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

using namespace mlsim::validate;

namespace {
Profile hand_profile() {
  Profile p;
  p.cpu.cores = 2;
  StageCost decode;
  decode.per_sample_s = 2.5e-3;
  p.cpu.stage_costs["jpeg_decode"] = decode;
  StageCost gemm;
  gemm.per_flop_s = 10e-3 / (2.0 * 100 * 100 * 100);
  p.cpu.stage_costs["host_gemm_fp32"] = gemm;
  p.ram.size_bytes = 8e9;
  p.ram.bandwidth_Bps = 10e9;
  return p;
}
JobConfig cfg(int k, int layers, int depth = 2) {
  JobConfig c;
  c.loader_threads = k;
  c.prefetch_depth = depth;
  c.consumer_layers = layers;
  c.gemm_n = 100;
  c.batch_size = 16;
  return c;
}
JobInputs inputs(double background = 0.0) {
  JobInputs in;
  in.files = {"a.jpg", "b.jpg"};
  in.mean_bytes = 1e5;
  in.mean_pixels = 1.875e5;
  in.background_cores = background;
  return in;
}
// The profile as a file the scenarios' presets can name.
struct ProfileFile {
  std::string path = (std::filesystem::temp_directory_path() /
                      ("mlsim-validate-sim-test-" + std::to_string(::getpid()) + ".yaml"))
                         .string();
  explicit ProfileFile(const Profile& p) { write_profile(p, path); }
  ~ProfileFile() { std::filesystem::remove(path); }
};
Prediction simulate(const JobConfig& c, const JobInputs& in, RunLength length = {5, 20}) {
  Profile p = hand_profile();
  ProfileFile file(p);
  return mlsim_simulator_predictor(p, file.path, length)(c, in);
}
// The simulator reads a batch's files over the RAM bus (16 x 100 kB at 10 GB/s) before decoding.
constexpr double kRead = 16 * 1e5 / 10e9;
} // namespace

TEST(ValidateSimulator, OneLoaderBoundJob) {
  // Loader and consumer each on a core: a batch every 40 ms (+ its read), the consumer computes 10 ms of each.
  Prediction p = simulate(cfg(1, 1), inputs());
  EXPECT_NEAR(p.step_time_s, 0.040 + kRead, 1e-6);
  EXPECT_NEAR(p.throughput, 16 / (0.040 + kRead), 1e-3);
  EXPECT_NEAR(p.stall, 1 - 0.010 / (0.040 + kRead), 1e-4);
}

TEST(ValidateSimulator, HeavyConsumerNeverWaits) {
  // 100 ms per step against 40 ms per batch: the queue stays full.
  Prediction p = simulate(cfg(1, 10), inputs());
  EXPECT_NEAR(p.throughput, 160.0, 160.0 * 1e-3);
  EXPECT_NEAR(p.stall, 0.0, 1e-6);
}

TEST(ValidateSimulator, ThreeThreadsShareTwoCores) {
  // Two loaders (40 ms of CPU per batch) and the consumer (10 ms per step) on two cores, in steady state
  // (a long run). The cores bound it: 50 ms of CPU per batch on 2 cores, a batch per 25 ms at best; a
  // core that runs dry waits the balance delay (4 ms by default, cpu_scheduler.hpp) for queued work,
  // once per batch at most: a batch per 29 ms at worst. The consumer computes 10 ms (a core to itself) to
  // 20 ms (sharing one with a loader) per step, so the stall lies in [1 - 20/25, 1 - 10/29]. (A fair
  // pool would give it 2/3 of a core throughout: 15 ms, stall 0.4.)
  Prediction p = simulate(cfg(2, 1), inputs(), RunLength{20, 300});
  EXPECT_LE(p.throughput, 640.0 * 1.001);
  EXPECT_GE(p.throughput, 16 / 0.029);
  EXPECT_GE(p.stall, 1 - 20.0 / 25 - 1e-3);
  EXPECT_LE(p.stall, 1 - 10.0 / 29 + 1e-3);
}

TEST(ValidateSimulator, ShortRunsSeeTheWarmUpBacklog) {
  // The same job measured over 20 steps after 5 (as validate --quick does): the batches built ahead
  // during the warm-up are consumed in the window, so it runs faster than steady state. The real job
  // is measured the same way, which is why the prediction simulates exactly the real run's length.
  const double steady = simulate(cfg(2, 1), inputs(), RunLength{20, 300}).throughput;
  EXPECT_GT(simulate(cfg(2, 1), inputs()).throughput, steady * 1.01);
}

TEST(ValidateSimulator, BackgroundLoadTakesItsShareOfTheCores) {
  // Another tenant uses one of the two cores. Per-thread sharing: the job's cores run at half speed.
  Prediction p = simulate(cfg(1, 1), inputs(1.0));
  EXPECT_NEAR(p.throughput, 16 / (0.080 + kRead), 1e-3);
  // Group sharing: the job has one core for its two threads: 50 ms of CPU per batch (the RAM read
  // overlaps the consumer's compute).
  JobInputs grouped = inputs(1.0);
  grouped.group_scheduling = true;
  Prediction g = simulate(cfg(1, 1), grouped, RunLength{20, 300});
  EXPECT_NEAR(g.throughput, 16 / 0.050, 16 / 0.050 * 0.005);
}

TEST(ValidateSimulator, ShallowQueueCannotHideASlowBatch) {
  // Depth 1 with a loader as fast as the consumer: the pipeline still overlaps (one batch held
  // by the loader, one in the queue), so the job runs at the common rate.
  Prediction p = simulate(cfg(1, 4, 1), inputs());
  EXPECT_NEAR(p.throughput, 400.0, 400.0 * 0.01);
}
